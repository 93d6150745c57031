"""Option pieces the command modules share, so each kind of parameter reads one way everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

PATH = click.Path(path_type=Path)
"""A file or directory argument, handed to the command as a ``pathlib.Path``."""

MANY: dict[str, Any] = {"multiple": True, "default": ()}
"""A repeatable option (``--tag a --tag b``): a tuple of its values, empty when not given."""

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
"""``--json``, the same on every command that returns data: one JSON document on stdout."""
