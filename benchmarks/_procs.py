"""What the memory benchmarks read about processes from Linux ``/proc``: which processes this
one started, and the pid of the per-user model service affidavit's servers share.

Scripts in ``benchmarks/`` import it as ``from _procs import children``: running
``python benchmarks/X.py`` puts this folder on ``sys.path``.
"""

from __future__ import annotations

import os
from pathlib import Path


def children() -> set[int]:
    """The pids of this process's children."""
    mine = str(os.getpid())
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == mine:
            found.add(int(stat.parent.name))
    return found


def service_pid(runtime: Path) -> int | None:
    """The pid of the model service whose lock is under ``runtime`` (the servers' runtime
    folder), if one runs."""
    for lock in runtime.glob("affidavit-*/embed.lock"):
        text = lock.read_text().strip()
        if text.isdigit() and Path(f"/proc/{text}").exists():
            return int(text)
    return None
