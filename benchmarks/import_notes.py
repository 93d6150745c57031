"""Importing notes: ``affidavit import --from markdown`` end to end, with and without the model.

    python benchmarks/import_notes.py [--notes 10000] [--no-model]

Writes N distinct Markdown bullets (under 10 headings), creates a throwaway vault, and times
the real command as a user runs it (process start, reading, claim checks, embedding in chunks,
the store decision, sealing, one transaction), then the same import again (every note a
duplicate: stores 0). The progress bar is drawn on stderr (the run forces a terminal so the
bar's phases can be checked). Target (issue 18): 10,000 notes in at most 60 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THROWAWAY = secrets.token_urlsafe(12)
TARGET_S = 60.0
ITEMS = ["screws", "bolts", "washers", "hinges", "nails", "brackets", "clamps", "rivets"]
PLACES = ["north", "south", "east", "west", "upper", "lower", "back", "front"]


def write_notes(path: Path, count: int) -> None:
    """``count`` distinct one-claim bullets, a heading every ``count // 10``."""
    rng = random.Random(18)
    lines: list[str] = []
    for i in range(count):
        if i % max(1, count // 10) == 0:
            lines.append(f"\n# Aisle {i // max(1, count // 10)}\n")
        item, place = rng.choice(ITEMS), rng.choice(PLACES)
        lines.append(
            f"- Shelf {i} on the {place} wall holds {rng.randint(1, 900)} boxes of {item}."
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_import(notes: Path, env: dict[str, str]) -> tuple[float, float, dict[str, object], str]:
    """Wall seconds, CPU seconds (user + system), the ``--json`` report and stderr of one
    ``affidavit import``. CPU time moves far less with a shared machine's load than wall time,
    and the model runs on one thread, so on an idle machine wall time is close to it."""
    args = [sys.executable, "-m", "affidavit", "import", "--from", "markdown", str(notes), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"import failed: {done.stderr.strip()}")
    return seconds, cpu, json.loads(done.stdout), done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--no-model", action="store_true", help="keyword-only (no embedding)")
    options = parser.parse_args()
    from affidavit.vault import KdfParams, Vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Vault.create(root / "vault", THROWAWAY, kdf=KdfParams.minimum()).close()
        notes = root / "notes.md"
        write_notes(notes, options.notes)
        env = {
            **os.environ,
            "AFFIDAVIT_VAULT": str(root / "vault"),
            "AFFIDAVIT_PASSPHRASE": THROWAWAY,
            "AFFIDAVIT_HOME": str(root / "home"),
            "FORCE_COLOR": "1",
        }
        if options.no_model:
            env["AFFIDAVIT_EMBEDDER"] = "off"
        first, first_cpu, report, stderr = run_import(notes, env)
        again, again_cpu, repeat, _ = run_import(notes, env)
    phases = [p for p in ("embedding", "deciding", "sealing") if p in stderr]
    mode = "keyword only" if options.no_model else "with MiniLM"
    print(f"| import {options.notes} notes ({mode}) | value | target |")
    print("|---|---|---|")
    verdict = "met" if first <= TARGET_S else "MISSED"
    print(f"| first import, wall clock | {first:.1f} s | <= {TARGET_S:.0f} s ({verdict}) |")
    print(f"| first import, CPU (user + system) | {first_cpu:.1f} s | |")
    print(f"| stored / duplicates | {report['stored']} / {report['duplicates']} | all / 0 |")
    print(f"| re-import, wall clock / CPU | {again:.1f} s / {again_cpu:.1f} s | |")
    print(
        f"| re-import stored / duplicates | {repeat['stored']} / {repeat['duplicates']} | 0 / all |"
    )
    print(f"| progress phases seen on stderr | {', '.join(phases) or 'none'} | a visible bar |")
    print(f"| load average (1, 5, 15 min) | {' '.join(f'{x:.2f}' for x in os.getloadavg())} | |")


if __name__ == "__main__":
    main()
