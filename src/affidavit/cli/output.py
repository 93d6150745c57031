"""How the CLI talks to people and scripts: data on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(value: Any) -> None:
    """Write ``value`` as one JSON document on stdout (the ``--json`` contract)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    """A one-line warning on stderr."""
    stderr.print(f"affidavit: warning: {message}", markup=False)


def error(message: str) -> None:
    """A one-line error on stderr."""
    stderr.print(f"affidavit: error: {message}", markup=False)
