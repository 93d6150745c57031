"""The two single-channel baselines a hybrid recall must beat, kept outside the product.

- :class:`Bm25`: Okapi BM25 (SQLite FTS5's ``bm25()``, k1 = 1.2, b = 0.75) over an OR of
  the question's words, with the porter stemmer over unicode61 tokens: what a keyword
  memory store answers.
- :class:`VectorOnly`: the product's sentence model through its public embedder API
  (``embed_windows`` for records, ``embed_query`` for questions), ranked by the best
  window's cosine alone: what a pure vector memory store answers.

Both rank the same records the product searches, so a benchmark's deltas measure ranking
and nothing else.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)


class Bm25:
    """A keyword index over ``(id, text)`` records, in RAM."""

    def __init__(self, records: Sequence[tuple[str, str]]) -> None:
        self._ids = [rid for rid, _ in records]
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='porter unicode61 "
            "remove_diacritics 2')"
        )
        self._db.executemany(
            "INSERT INTO fts(rowid, body) VALUES (?, ?)",
            [(n, text) for n, (_, text) in enumerate(records)],
        )

    def rank(self, question: str, limit: int) -> list[str]:
        """The ids of the best ``limit`` records for a question, best first."""
        terms = dict.fromkeys(_WORD.findall(question.lower()))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self._db.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?", (match, limit)
        )
        return [self._ids[r[0]] for r in rows]


class VectorOnly:
    """Cosine ranking over the product model's embedding windows (best window per record)."""

    def __init__(self, records: Sequence[tuple[str, str]], embedder: Any) -> None:
        import numpy as np

        self._embedder = embedder
        windows = embedder.embed_windows([text for _, text in records])
        self._ids = [rid for rid, _ in records]
        self._matrix = np.concatenate(windows)
        self._owner = np.concatenate([np.full(len(w), n) for n, w in enumerate(windows)])

    def rank(self, question: str, limit: int) -> list[str]:
        """The ids of the best ``limit`` records for a question, best first."""
        import numpy as np

        cosines = self._matrix @ self._embedder.embed_query(question)
        best = np.full(len(self._ids), -np.inf)
        np.maximum.at(best, self._owner, cosines)
        order = np.argsort(-best, kind="stable")[:limit]
        return [self._ids[i] for i in order.tolist()]
