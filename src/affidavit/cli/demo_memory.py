"""One section of ``affidavit demo`` (being built; see the issue that owns this plane)."""

from __future__ import annotations

from pathlib import Path

from affidavit.cli.output import stdout


def run(workdir: Path) -> None:
    """Show this plane's main job in ``workdir``."""
    stdout.print("(this section lands with its plane)")
