"""How a client config should launch affidavit: by absolute path, never a bare name.

An app started from the Dock, Finder or a desktop menu does not see the shell's PATH, so a bare
``affidavit`` fails there. We write the console script installed next to this interpreter, else
the one on PATH resolved to an absolute path, else this interpreter with ``-m affidavit``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

SCRIPT_NAMES = frozenset({"affidavit", "affidavit.exe"})


def affidavit_command() -> tuple[str, list[str]]:
    """The absolute command and leading arguments that run ``affidavit``."""
    here = Path(sys.executable).parent
    for name in ("affidavit", "affidavit.exe"):
        candidate = here / name
        if candidate.is_file():
            return str(candidate.absolute()), []
    found = shutil.which("affidavit")
    if found:
        return str(Path(found).resolve()), []
    return str(Path(sys.executable).absolute()), ["-m", "affidavit"]


def affidavit_subcommand(command: str, args: list[str]) -> list[str] | None:
    """If ``command args`` runs affidavit: its subcommand onward (global flags dropped)."""
    if Path(command).name in SCRIPT_NAMES:
        rest = list(args)
    elif Path(command).name.startswith("python") and args[:2] == ["-m", "affidavit"]:
        rest = list(args[2:])
    else:
        return None
    while rest[:1] and rest[0].startswith("-"):  # the root's flags (none takes a value)
        rest = rest[1:]
    return rest
