"""Start-up stages in process, by CPU: a full decrypt and index build against the vault's
sealed snapshot (issue 27, ADR 0210).

    python benchmarks/snapshot_stages.py [--memories 10000] [--rounds 3] [--dir DIR]

Fills a vault with N short memories and random unit vectors (no model: the stages measured
do not embed), then alternates: open with the snapshot removed (decrypt every record, check
the audit log, build the index, then seal a snapshot) and open from that snapshot (read,
check against the log, restore the index) twice: the second open follows another one from
the snapshot rather than a full decrypt and a seal. CPU milliseconds (this process) per stage.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PASSPHRASE = "plover quasar tandem mulch"  # noqa: S105 - a throwaway benchmark vault
WORDS = ["kettle", "shelf", "garden", "train", "coast", "deploy", "script", "tabs", "wifi"]


def fill(path: Path, count: int) -> None:
    import numpy as np

    from affidavit.vault import KdfParams, NewItem, Vault

    vault = Vault.create(path, PASSPHRASE, kdf=KdfParams.minimum())
    rng, words = np.random.default_rng(1), random.Random(1)
    for start in range(0, count, 1000):
        items = []
        for i in range(start, min(count, start + 1000)):
            vector = rng.standard_normal(384).astype(np.float32)
            vector /= np.linalg.norm(vector)
            text = f"fact {i}: " + " ".join(words.choice(WORDS) for _ in range(12))
            data = {"text": text, "source": "bench", "importance": 0.5, "kind": "fact"}
            sealed = vector.astype("<f2").tobytes()
            items.append(NewItem(data=data, namespace="user", vector=sealed))
        vault.put_many(items)
    vault.close()


def cpu_ms(step: Callable[[], Any], into: list[float]) -> Any:
    started = time.process_time()
    out = step()
    into.append((time.process_time() - started) * 1000)
    return out


class VectorsOn:
    """Stands in for the model: the index keeps vectors, nothing is embedded here."""

    model_id = "bench"
    dim = 384


def main() -> None:
    from affidavit.recall.memory import Memory
    from affidavit.vault import Vault, snapshot

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="keep the filled vault here")
    args = parser.parse_args()
    path = args.dir or Path(tempfile.mkdtemp(prefix="snapshot-stages-")) / "vault"
    if not (path / "vault.db").exists():
        fill(path, args.memories)
    stages: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for mode in ("full", "snapshot", "snapshot again"):
            if mode == "full":
                snapshot.discard(path)
            vault = cpu_ms(
                lambda: Vault.open(path, passphrase=PASSPHRASE),
                stages.setdefault(f"{mode}: open the vault", []),
            )
            memory = Memory(vault, embedder=VectorsOn())  # type: ignore[arg-type]
            cpu_ms(memory.rebuild_index, stages.setdefault(f"{mode}: index ready", []))
            if mode == "full":
                cpu_ms(memory.save_snapshot, stages.setdefault("full: seal the snapshot", []))
                size = snapshot.path_in(path).stat().st_size
            vault.close()
    load = "/".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    print(f"{args.memories:,} memories, snapshot {size / 1e6:.1f} MB, load {load}")
    for stage, values in stages.items():
        print(f"{stage:28} p50 {statistics.median(values):6.1f} ms CPU  (n={len(values)})")


if __name__ == "__main__":
    main()
