"""How a console was started: the options of ``affidavit console``, as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ConsoleSettings:
    """How this console was started (``affidavit console`` options)."""

    audit_log: Path
    port: int | None = None
    host: str | None = None
    open_browser: bool = True
    stop_when_stdin_closes: bool = False
