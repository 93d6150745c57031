"""Fixtures for the console tests: a real console process and a real headless Chromium.

The browser tests are skipped (with the reason) only when Chromium is not installed; CI
installs it (``.ci/run``), so there they always run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.browser import CHROMIUM, RunningConsole, launch_chromium
from tests.support import REPO_ROOT, cli_env


@pytest.fixture
def start_console(home: Path) -> Iterator[Any]:
    """A factory: ``start_console(*args, env=..., open_browser=False)`` -> a running console."""
    started: list[RunningConsole] = []

    def start(
        *args: str, env: dict[str, str] | None = None, open_browser: bool = False
    ) -> RunningConsole:
        environment = cli_env(home, env)
        environment["PYTHONPATH"] = str(REPO_ROOT)
        console = RunningConsole(args, environment, cwd=home, open_browser=open_browser)
        started.append(console)
        return console

    yield start
    for console in started:
        console.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module.

    Not per session: Playwright's synchronous API keeps an asyncio loop marked as running in
    this thread until it stops, and the next module on the same worker may call ``anyio.run``.
    """
    if not CHROMIUM.exists():
        pytest.skip(
            f"Chromium is not installed at {CHROMIUM} (apt-get install chromium, or set "
            "AFFIDAVIT_CHROMIUM); the console's browser tests need a real browser"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) and page."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
