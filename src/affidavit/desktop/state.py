"""What the tray shows and does, through the ``affidavit`` command as a user would run it.

The tray opens no vault and holds no key: each refresh and each action is one ``affidavit``
subprocess (``status``, ``recent``, ``lock``, ``unlock``, ``console``), so sessions, auto-lock
and grants work exactly as on the command line, and a crash of the tray leaks nothing. A
passphrase reaches ``affidavit unlock`` only in that child's environment
(``AFFIDAVIT_PASSPHRASE``, the documented way for a program), never in argv or a log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

RECENT = 5  # how many of the last memories the tray lists
_SHOWN = 60  # characters of each one

LOCKED, UNLOCKED, MISSING, FAILED = "locked", "unlocked", "no vault", "error"


@dataclass(frozen=True)
class TrayState:
    """The vault as the tray shows it."""

    vault: str
    state: str  # LOCKED | UNLOCKED | MISSING | FAILED
    recent: tuple[str, ...] = ()  # the last memories: "YYYY-MM-DD  start of the text"
    problem: str = ""

    @property
    def title(self) -> str:
        """One line for the panel's title and the icon's tooltip."""
        if self.state == UNLOCKED:
            return f"affidavit: unlocked ({len(self.recent)} recent)"
        return f"affidavit: {self.state}"


def affidavit(args: list[str], secret: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``affidavit ARGS`` with this interpreter; ``secret`` goes in its environment only."""
    env = {k: v for k, v in os.environ.items() if k != "AFFIDAVIT_PASSPHRASE"}
    if secret is not None:
        env["AFFIDAVIT_PASSPHRASE"] = secret
    return subprocess.run(
        [sys.executable, "-m", "affidavit", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("affidavit: error: ") if lines else f"exit {done.returncode}"


def read_state() -> TrayState:
    """The vault's state now, and its last memories when it is unlocked."""
    done = affidavit(["status", "--json"])
    if done.returncode != 0:
        missing = "no vault" in done.stderr
        return TrayState("", MISSING if missing else FAILED, problem=_error_line(done))
    status = json.loads(done.stdout)
    if status.get("state") != UNLOCKED:
        return TrayState(str(status.get("path", "")), LOCKED)
    listed = affidavit(["recent", "--limit", str(RECENT), "--json"])
    if listed.returncode != 0:
        return TrayState(str(status["path"]), FAILED, problem=_error_line(listed))
    return TrayState(str(status["path"]), UNLOCKED, _recent(json.loads(listed.stdout)))


def _recent(value: Any) -> tuple[str, ...]:
    """``recent --json`` (a list, or an object with ``results``) as the lines the tray shows."""
    rows = value.get("results", []) if isinstance(value, dict) else value
    out = []
    for row in rows[:RECENT]:
        text = " ".join(str(row.get("text", "")).split())
        short = text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
        out.append(f"{str(row.get('saved_at', ''))[:10]}  {short}")
    return tuple(out)


def lock() -> str:
    """Lock the vault; the CLI's one-line answer, or its error."""
    done = affidavit(["lock"])
    return done.stdout.strip() if done.returncode == 0 else _error_line(done)


def unlock(secret: str) -> str | None:
    """Unlock with ``secret``; None on success, else the CLI's error (which never holds it)."""
    done = affidavit(["unlock"], secret=secret)
    return None if done.returncode == 0 else _error_line(done)


def start_console() -> subprocess.Popen[bytes]:
    """Start the console; it opens the browser with its one-time sign-in link itself."""
    return subprocess.Popen(
        [sys.executable, "-m", "affidavit", "console"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
