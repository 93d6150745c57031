"""``memory_selftest``: does recall work on this machine, end to end, right now?

It builds a throwaway vault in a private temporary directory, stores a small built-in sample
of fictional memories through the same recall layer the tools use (embedding, sealing,
indexing), asks canned questions and checks that the expected memory comes back, timing each
step. The user's vault is never opened, read or written, and the temporary vault is deleted
afterwards. Its passphrase is random and its key derivation cheap on purpose: it protects
only the sample, for the few milliseconds the test lasts.
"""

from __future__ import annotations

import secrets
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from affidavit.recall.wire import SelftestCheckJSON, SelftestJSON

SOURCE = "affidavit selftest sample"
SAMPLE: tuple[str, ...] = (
    "The staging database of project Lantern runs PostgreSQL 16 and listens on port 5433.",
    "Priya prefers code reviews in the morning, before the 10:00 standup.",
    "Release 2.4.1 of Lantern was tagged from commit 9f3c2ab7.",
    "The shared office printer on floor 3 is called Heron and needs the Heron-PS driver.",
    "Tomas is allergic to peanuts, so team lunches avoid satay.",
    "The Lantern API rate limit is 600 requests per minute per token.",
    "Backups of the wiki run nightly at 02:30 UTC to the bucket lantern-wiki-bak.",
    "Mira decided on 2026-03-02 to move the mobile app to weekly releases.",
)


@dataclass(frozen=True)
class Check:
    """One canned question and the sample memory (by index) it must find; -1: nothing."""

    query: str
    expected: int
    semantic: bool  # needs the embedding model (a paraphrase, no shared keywords)


CHECKS: tuple[Check, ...] = (
    Check("which port does the Lantern staging DB listen on", 0, semantic=False),
    Check("9f3c2ab7", 2, semantic=False),
    Check("when does Priya like reviewing code", 1, semantic=False),
    Check("food allergy colleague lunch", 4, semantic=True),
    Check("how often do we ship the phone app", 7, semantic=True),
    Check("recipe for sourdough bread with rye flour", -1, semantic=False),
)


def run_selftest() -> SelftestJSON:
    """Run every check on a fresh temporary vault; the report (its own wire shape) that
    ``memory_selftest`` and ``memory selftest --json`` return."""
    from affidavit.recall.claims import Claim
    from affidavit.recall.memory import Memory
    from affidavit.vault import KdfParams, Vault

    with tempfile.TemporaryDirectory(prefix="affidavit-selftest-") as tmp:
        vault = Vault.create(
            Path(tmp) / "vault", secrets.token_urlsafe(24), kdf=KdfParams.minimum()
        )
        try:
            memory = Memory(vault)
            started = time.perf_counter()
            stored = memory.store_many([Claim(t, SOURCE) for t in SAMPLE])
            store_ms = (time.perf_counter() - started) * 1000 / len(SAMPLE)
            ids = [r["id"] for r in stored]
            semantic = memory.embedder is not None
            checks: list[SelftestCheckJSON] = []
            timings: list[float] = []
            for check in CHECKS:
                started = time.perf_counter()
                found = memory.search(check.query)["results"]
                ms = (time.perf_counter() - started) * 1000
                timings.append(ms)
                got = [r["id"] for r in found]
                if check.expected < 0:
                    ok, rank, expected = not got, None, "(nothing)"
                else:
                    want = ids[check.expected]
                    rank = got.index(want) + 1 if want in got else None
                    ok, expected = rank is not None, SAMPLE[check.expected]
                skipped = check.semantic and not semantic
                checks.append(
                    {
                        "query": check.query,
                        "expected": expected,
                        "found": ok,
                        "rank": rank,
                        "ms": round(ms, 2),
                        "skipped": skipped,
                    }
                )
        finally:
            vault.close()
    return {
        "passed": all(c["found"] or c["skipped"] for c in checks),
        "semantic": semantic,
        "checks": checks,
        "store_ms": round(store_ms, 2),
        "search_p50_ms": round(statistics.median(timings), 2),
    }
