"""A running console and a real headless Chromium, for the end-to-end tests and the scripts.

The console runs as a real ``affidavit console --no-browser`` process; its link (with this
launch's token) is read from its first line of output. Chromium is Debian's (``/usr/bin/
chromium``, or ``AFFIDAVIT_CHROMIUM``) driven by Playwright's Python API; Playwright never
downloads a browser here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = Path(os.environ.get("AFFIDAVIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_URL = re.compile(r"(http://127\.\d+\.\d+\.\d+:\d+/(?:[A-Za-z0-9_-]+/)?\?token=[A-Za-z0-9_-]+)")


class RunningConsole:
    """``affidavit console ARGS`` as a real process; ``url`` holds the token.

    ``origin`` is ``http://ADDRESS:PORT``; ``root`` is where the console's pages are (the
    origin and this launch's secret path), so ``root + "/memory/"`` is the memory page.
    ``cookie`` is the session cookie once a test signed in over raw HTTP (the token buys one).
    """

    def __init__(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: Path | None = None,
        open_browser: bool = False,
    ) -> None:
        flags = [] if open_browser else ["--no-browser"]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "affidavit", "console", *flags, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            text=True,
        )
        self.output: list[str] = []
        self.url = self._read_url()
        threading.Thread(target=self._drain, daemon=True).start()
        parts = urlsplit(self.url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.root = self.origin + self.prefix
        self.token = parts.query.removeprefix("token=")
        self.cookie: str | None = None

    def _read_url(self) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            found = _URL.search(line)
            if found:
                return found.group(1)
        raise AssertionError("the console printed no link:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)

    def stop(self) -> int:
        """Stop the console as Ctrl-C would; return its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(2)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def launch_chromium(playwright):  # type: ignore[no-untyped-def]
    """Debian's Chromium, headless, through Playwright."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
