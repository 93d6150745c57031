"""Steps the browser tests share: sign in, load an export, quote sentences, build a pack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TIMEOUT = 60_000
"""How long a step may wait for the page (ms): generous, since CI machines are shared."""


def open_console(page: Any, console: Any, path: str = "/") -> None:
    """Sign in with the printed link, then open ``path``."""
    page.goto(console.url)
    page.wait_for_url(f"{console.root}/", timeout=TIMEOUT)
    if path != "/":
        page.goto(console.root + path)


def load_export(page: Any, console: Any, export: Path) -> None:
    """Load ``export`` into the pack maker by upload."""
    open_console(page, console, "/pack-maker/")
    page.set_input_files("input[name=source_file]", str(export))
    page.click("button:has-text('Load')")
    page.wait_for_selector(".message", timeout=TIMEOUT)
    page.wait_for_selector("#record-form[data-ready]", state="attached", timeout=TIMEOUT)


def quote_sentence(page: Any, sentence: str) -> None:
    """Click the sentence (exact text) to quote it in the record being written."""
    page.locator(".sentence", has_text=sentence).first.click()


def check_result(page: Any, kind: str) -> str:
    """Wait until the live check shows ``kind`` (ok or error); return what it says."""
    locator = page.locator(f"#check-result.{kind}")
    locator.wait_for(timeout=TIMEOUT)
    return locator.inner_text()


def add_record(page: Any, topic: str, category: str) -> None:
    """Fill the record's topic and category, wait for the check to pass, add it."""
    before = page.locator("#records .record").count()
    page.fill("input[name=topic]", topic)
    page.fill("input[name=category]", category)
    check_result(page, "ok")
    page.click("#add-record:not([disabled])", timeout=TIMEOUT)
    page.locator("#records .record").nth(before).wait_for(timeout=TIMEOUT)


def build(page: Any, title: str, folder: Path | None = None, key: Path | None = None) -> None:
    """Submit the build form (into ``folder``, or for download), signed with ``key`` if given."""
    page.fill("input[name=title]", title)
    if folder is not None:
        page.check("input[name=destination][value=folder]")
        page.fill("input[name=folder]", str(folder))
    if key is not None:
        page.check("input[name=sign]")
        page.fill("input[name=key]", str(key))
        page.fill("input[name=sequence]", "1")
    page.click("#build-form button[type=submit]")
    page.wait_for_selector("#built, .notice.error", timeout=TIMEOUT)
