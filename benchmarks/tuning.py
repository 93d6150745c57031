"""``--set NAME=VALUE``: override a ranking constant for one benchmark run (tuning sweeps).

Shared by ``benchmarks/agent_memory.py`` and ``benchmarks/locomo.py``; the constants live in
one module of the product, and a name that is not one of its constants is refused.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--set`` option (repeatable)."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a ranking constant for this run (repeatable)",
    )


def apply(assignments: Sequence[str]) -> dict[str, object]:
    """Set each ``NAME=VALUE`` on the ranking module; the overrides made, by name."""
    from affidavit.vault import ranking

    done: dict[str, object] = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        if not name.isupper() or not hasattr(ranking, name):
            raise SystemExit(f"{name!r} is not a constant of {ranking.__name__}")
        kind = type(getattr(ranking, name))
        try:
            done[name] = kind(value)
        except ValueError:
            raise SystemExit(f"{name}={value!r}: not a {kind.__name__}") from None
        setattr(ranking, name, done[name])
    return done
