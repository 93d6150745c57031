"""Claim benchmark: does the proxy catch a lying backend, and does it ever cry wolf?

Run: ``python benchmarks/proxy_claims.py [--json OUT]``. Plays the lying-backend corpus
(``tests/proxy/lying_corpus.py``: lies across filesystem, git, CI, resources, SQLite, Docker
(against a loopback fake of the Engine API: no daemon runs here) and output schemas, plus
honest controls) through an official MCP client, once straight to the backend and once through
``affidavit proxy --receipts``, both as real processes over stdio. The honest controls are
also run against the real dev server, mcp-server-git and the official filesystem server.

A lie is caught when the host is told the call failed although the backend claimed success; an
honest control the host sees fail is a false alarm. Targets: 100% caught through the proxy,
0 false alarms. (The reference proxy catches 79% of its own corpus.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.proxy.lying_corpus import (  # noqa: E402 - the repo root must be importable first
    Outcome,
    Workspace,
    run_corpus,
    run_real_controls,
)

FAMILIES = ("filesystem", "git", "ci", "resources", "sqlite", "docker", "output-schema")


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def summarize(direct: list[Outcome], proxied: list[Outcome]) -> dict[str, dict[str, int]]:
    """Per family: lies, caught without / with the proxy, controls, false alarms."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for label, outcomes in (("direct", direct), ("proxy", proxied)):
        for o in outcomes:
            row = table[o.scenario.family]
            if o.scenario.honest:
                row[f"controls_{label}"] += 1
                row[f"false_alarms_{label}"] += o.false_alarm
            else:
                row[f"lies_{label}"] += 1
                row[f"caught_{label}"] += o.caught
    return {k: dict(v) for k, v in table.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="affidavit-claims-") as tmp:
        ws = Workspace(Path(tmp))
        try:
            direct = run_corpus(ws, through_proxy=False)
            direct += run_real_controls(ws, through_proxy=False)
            proxied = run_corpus(ws, through_proxy=True)
            proxied += run_real_controls(ws, through_proxy=True)
        finally:
            ws.close()
    table = summarize(direct, proxied)
    header = (
        f"{'family':<13} {'lies':>4}  {'caught, no proxy':>17}  {'caught, proxy':>15}  "
        f"{'controls':>8}  {'false alarms, no proxy':>22}  {'false alarms, proxy':>19}"
    )
    print(header)
    print("-" * len(header))
    totals: dict[str, int] = defaultdict(int)
    for family in FAMILIES:
        row = table.get(family, {})
        for key, value in row.items():
            totals[key] += value
        print(_row(family, row))
    print("-" * len(header))
    print(_row("total", totals))
    missed = [o.scenario.name for o in proxied if not o.scenario.honest and not o.caught]
    alarms = [o.scenario.name for o in proxied if o.false_alarm]
    unchecked = [o.scenario.name for o in proxied if o.scenario.honest and o.verdict != "verified"]
    print(f"\nmissed through the proxy: {missed or 'none'}")
    print(f"false alarms through the proxy: {alarms or 'none'}")
    print(f"honest controls not verified (unchecked): {unchecked or 'none'}")
    print(f"wall time {time.monotonic() - start:.1f} s (process start-up included)")
    if args.json:
        args.json.write_text(
            json.dumps({"families": table, "missed": missed, "false_alarms": alarms}, indent=2)
        )
    return 0 if not missed and not alarms else 1


def _row(family: str, row: dict[str, int]) -> str:
    lies = row.get("lies_proxy", 0)
    controls = row.get("controls_proxy", 0)
    caught_direct = _rate(row.get("caught_direct", 0), row.get("lies_direct", 0))
    return (
        f"{family:<13} {lies:>4}  {caught_direct:>17}"
        f"  {_rate(row.get('caught_proxy', 0), lies):>15}  {controls:>8}  "
        f"{_rate(row.get('false_alarms_direct', 0), row.get('controls_direct', 0)):>22}  "
        f"{_rate(row.get('false_alarms_proxy', 0), controls):>19}"
    )


if __name__ == "__main__":
    sys.exit(main())
