"""Ranking constants for benchmark runs: ``--set NAME=VALUE`` and in-process sweeps.

Shared by ``benchmarks/agent_memory.py`` and ``benchmarks/locomo.py`` (``--set``) and by
their sweeps, ``benchmarks/agent_memory_sweep.py`` and ``benchmarks/locomo_sweep.py`` (one
setting per argument, each paired against the first). The constants live in one module of
the product, and a name that is not one of its constants is refused.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import stats


def add_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--set`` option (repeatable)."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a ranking constant for this run (repeatable)",
    )


def _value(name: str, value: str) -> object:
    """``value`` as the type of ranking constant ``name``; a bad name or value exits."""
    from affidavit.recall.ranking import params as ranking

    if not name.isupper() or not hasattr(ranking, name):
        raise SystemExit(f"{name!r} is not a constant of {ranking.__name__}")
    kind = type(getattr(ranking, name))
    try:
        return kind(value)
    except ValueError:
        raise SystemExit(f"{name}={value!r}: not a {kind.__name__}") from None


def apply(assignments: Sequence[str]) -> dict[str, object]:
    """Set each ``NAME=VALUE`` on the ranking module; the overrides made, by name."""
    from affidavit.recall.ranking import params as ranking

    done: dict[str, object] = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        done[name] = _value(name, value)
        setattr(ranking, name, done[name])
    return done


# -- sweeps ----------------------------------------------------------------------------------


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """Settings (``"NAME=VALUE,..."``, ``""`` = shipped), ``--save``, ``--compare``, ``--label``."""
    parser.add_argument("settings", nargs="*", default=[""])
    parser.add_argument("--save", type=Path, default=None, help="write the first setting's values")
    parser.add_argument("--compare", type=Path, default=None, help="a run saved with --save")
    parser.add_argument("--label", default=None, help="name this run (default: the git revision)")


def settings(specs: Sequence[str]) -> list[dict[str, object]]:
    """Each setting's overrides, checked before anything is embedded."""
    return [
        {
            name: _value(name, value)
            for name, _, value in (p.partition("=") for p in s.split(",") if p)
        }
        for s in specs or [""]
    ]


class Sweep:
    """Settings run one after another: each starts from the shipped constants."""

    def __init__(self, metrics: Sequence[str]) -> None:
        from affidavit.recall.ranking import params as ranking

        self.metrics = metrics
        self.shipped = {k: getattr(ranking, k) for k in dir(ranking) if k.isupper()}
        self.runs: list[dict[str, dict[str, dict[str, float]]]] = []

    def use(self, overrides: Mapping[str, object]) -> None:
        """The shipped constants, then ``overrides``."""
        from affidavit.recall.ranking import params as ranking

        for name, value in {**self.shipped, **overrides}.items():
            setattr(ranking, name, value)

    def line(self, values: dict[str, dict[str, dict[str, float]]], against: str | None) -> str:
        """Each metric's mean, minus the first setting, and minus the ``against`` system."""
        self.runs.append(values)
        ids = sorted(values)
        parts = []
        for metric in self.metrics:
            mine = stats.column(values, ids, "affidavit", metric)
            text = f"{metric} {sum(mine) / len(ids):.4f}"
            if len(self.runs) > 1:
                first = stats.column(self.runs[0], ids, "affidavit", metric)
                text += f" {stats.paired_delta(mine, first).signed()}"
            if against is not None:
                other = stats.column(values, ids, against, metric)
                text += f" (- {against} {stats.paired_delta(mine, other).signed()})"
            parts.append(text)
        return " | ".join(parts)

    def finish(self, args: argparse.Namespace, meta: dict[str, Any], same: str, title: str) -> None:
        """``--compare`` (the first setting minus a saved run; ``same`` names the meta field
        that must match) and ``--save``."""
        meta["revision"] = args.label or meta["revision"]
        if args.compare:
            from rich.console import Console

            saved_meta, saved = stats.load_run(args.compare)
            if saved_meta.get(same) != meta[same]:
                sys.exit(f"{args.compare} was measured on another {same} ({saved_meta.get(same)})")
            label = (stats.run_label(meta), stats.run_label(saved_meta))
            table = stats.compare_table(
                title, self.runs[0], saved, "affidavit", self.metrics, label
            )
            Console(width=160).print(table)
        if args.save:
            stats.save_run(args.save, meta, self.runs[0])
