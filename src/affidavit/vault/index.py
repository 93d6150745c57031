"""The in-RAM recall indexes, rebuilt at unlock and updated one record at a time.

Nothing here touches disk: plaintext exists only in RAM (DESIGN.md, "Memory plane").

- :class:`KeywordIndex`: SQLite FTS5 in ``:memory:`` with the porter stemmer over unicode61
  tokens, so "deploy" finds "Deploys". It answers per-term document frequencies (the
  literal channel's self-information) and per-term postings, plus a plain BM25 ranking used
  as the benchmark baseline.
- :class:`VectorIndex`: every embedding window as one row of a float32 matrix, searched
  exactly by one matrix-vector product (numpy/BLAS) up to :data:`HNSW_THRESHOLD` windows;
  above it a usearch HNSW graph answers the same question approximately. Windows of one
  record share an owner; a record's score is its best window.

Both are keyed by a small integer *slot* that the caller (``ranking.RecallIndex``) maps to a
record id, because FTS5 rowids and matrix rows are integers.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

from affidavit.vault.embedder import DIM

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Above this many windows the vector channel switches from the exact matrix to HNSW.
#: benchmarks/vault.py: exact search at 100k windows measured within the p95 budget on this
#: 2-core box, so the switch is kept at the point where HNSW build cost pays back.
HNSW_THRESHOLD = 20_000

_TERM = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The distinct lower-cased word tokens of a question, in order (FTS5 stems them)."""
    seen: dict[str, None] = {}
    for match in _TERM.finditer(text.lower()):
        seen.setdefault(match.group(0), None)
    return list(seen)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class KeywordIndex:
    """An FTS5 table in RAM: add/remove by slot, per-term df and postings, BM25."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='porter unicode61 "
            "remove_diacritics 2')"
        )
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, slot: int, text: str) -> None:
        """Index one record's text under ``slot``."""
        self._db.execute("INSERT INTO fts(rowid, body) VALUES (?, ?)", (slot, text))
        self._count += 1

    def add_many(self, rows: list[tuple[int, str]]) -> None:
        """Index many records in one statement batch (unlock, import)."""
        self._db.executemany("INSERT INTO fts(rowid, body) VALUES (?, ?)", rows)
        self._count += len(rows)

    def remove(self, slot: int) -> None:
        """Drop a record (forgotten, superseded, expired)."""
        cur = self._db.execute("DELETE FROM fts WHERE rowid = ?", (slot,))
        self._count -= cur.rowcount

    def df(self, term: str) -> int:
        """How many records contain ``term`` (after stemming)."""
        row = self._db.execute(
            "SELECT count(*) FROM fts WHERE fts MATCH ?", (_quoted(term),)
        ).fetchone()
        return int(row[0])

    def postings(self, term: str) -> list[int]:
        """The slots of every record containing ``term``."""
        rows = self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (_quoted(term),))
        return [r[0] for r in rows]

    def bm25(self, text: str, limit: int) -> list[tuple[int, float]]:
        """Plain BM25 over an OR of the question's terms, best first (the baseline)."""
        terms = query_terms(text)
        if not terms:
            return []
        rows = self._db.execute(
            "SELECT rowid, -bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
            (" OR ".join(_quoted(t) for t in terms), limit),
        )
        return [(r[0], float(r[1])) for r in rows]


class VectorIndex:
    """Embedding windows in a growing float32 matrix, with HNSW above a size threshold."""

    def __init__(self, threshold: int = HNSW_THRESHOLD) -> None:
        import numpy as np

        self._np = np
        self._matrix: npt.NDArray[np.float32] = np.zeros((1024, DIM), dtype=np.float32)
        self._owner: npt.NDArray[np.int64] = np.full(1024, -1, dtype=np.int64)
        self._size = 0
        self._live = 0
        self._rows_of: dict[int, list[int]] = {}
        self._threshold = threshold
        self._hnsw: object | None = None

    def __len__(self) -> int:
        """Live windows."""
        return self._live

    @property
    def approximate(self) -> bool:
        """True once HNSW answers searches instead of the exact matrix."""
        return self._hnsw is not None

    def _grow(self, need: int) -> None:
        np = self._np
        if self._size + need <= len(self._owner):
            return
        # Exactly the size of a bulk load (unlock), then 1.5x steps for single stores: the
        # matrix is the largest recall structure (1.5 KB a window), doubling wasted up to half.
        capacity = max(self._size + need, len(self._owner) * 3 // 2)
        matrix = np.zeros((capacity, DIM), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        owner = np.full(capacity, -1, dtype=np.int64)
        owner[: self._size] = self._owner[: self._size]
        self._matrix, self._owner = matrix, owner

    def add(self, slot: int, windows: npt.NDArray[np.float32]) -> None:
        """Add a record's windows (rows already L2-normalised)."""
        self.add_many([(slot, windows)])

    def add_many(self, items: list[tuple[int, npt.NDArray[np.float32]]]) -> None:
        """Add many records' windows at once (unlock, import)."""
        np = self._np
        total = sum(len(w) for _, w in items)
        if not total:
            return
        self._grow(total)
        start = self._size
        for slot, windows in items:
            n = len(windows)
            rows = list(range(self._size, self._size + n))
            self._matrix[self._size : self._size + n] = windows
            self._owner[self._size : self._size + n] = slot
            self._rows_of.setdefault(slot, []).extend(rows)
            self._size += n
        self._live += total
        if self._hnsw is not None:
            keys = np.arange(start, self._size, dtype=np.uint64)
            self._hnsw.add(keys, self._matrix[start : self._size])  # type: ignore[attr-defined]
        elif self._live > self._threshold:
            self._build_hnsw()

    def _build_hnsw(self) -> None:
        import contextlib

        # usearch's SIMD library loaded before onnxruntime makes onnxruntime's own import
        # segfault (usearch 2.26 / onnxruntime 1.32, tests/vault/test_index.py); loading
        # onnxruntime first is harmless, so a process that later embeds stays alive.
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401

        from usearch.index import Index

        np = self._np
        index = Index(ndim=DIM, metric="ip", dtype="f16")
        alive = np.nonzero(self._owner[: self._size] >= 0)[0]
        index.add(alive.astype(np.uint64), self._matrix[alive])
        self._hnsw = index

    def remove(self, slot: int) -> None:
        """Drop a record's windows."""
        rows = self._rows_of.pop(slot, [])
        for row in rows:
            self._owner[row] = -1
            self._matrix[row] = 0.0
            if self._hnsw is not None:
                self._hnsw.remove(row)  # type: ignore[attr-defined]
        self._live -= len(rows)

    def search(self, query: npt.NDArray[np.float32], pool: int | None) -> dict[int, float]:
        """Best-window cosine per slot for the ``pool`` nearest records (``None`` = all)."""
        np = self._np
        if not self._live:
            return {}
        if self._hnsw is not None and pool is not None and pool < self._live:
            found = self._hnsw.search(query, min(self._live, pool * 2))  # type: ignore[attr-defined]
            rows = np.asarray(found.keys, dtype=np.int64)
            sims = self._matrix[rows] @ query
        else:
            sims = self._matrix[: self._size] @ query
            rows = np.arange(self._size)
            if pool is not None and pool * 2 < self._size:
                top = np.argpartition(-sims, pool * 2)[: pool * 2]
                rows, sims = rows[top], sims[top]
        owners = self._owner[rows]
        keep = owners >= 0
        owners, sims = owners[keep], sims[keep]
        order = np.argsort(-sims, kind="stable")
        owners, sims = owners[order], sims[order]
        _, first = np.unique(owners, return_index=True)  # each owner's best window
        first.sort()
        if pool is not None:
            first = first[:pool]
        best = dict(zip(owners[first].tolist(), sims[first].tolist(), strict=True))
        return best
