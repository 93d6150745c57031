"""The results table the benchmark scripts print: one rich table, a row a measure.

Scripts in ``benchmarks/`` import it as ``from _table import print_table``: running
``python benchmarks/X.py`` puts this folder on ``sys.path``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.table import Table


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    console: Console | None = None,
) -> None:
    """Print ``rows`` under ``columns`` as one table titled ``title`` (on stdout by default)."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    (console or Console()).print(table)
