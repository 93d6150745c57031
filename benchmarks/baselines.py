"""The two single-channel baselines a hybrid recall must beat, kept outside the product.

- :class:`Bm25`: Okapi BM25 (SQLite FTS5's ``bm25()``, k1 = 1.2, b = 0.75) over an OR of
  the question's words, with the porter stemmer over unicode61 tokens (``porter=True``):
  what a keyword memory store answers. It is the baseline column of ``affidavit bench
  retrieval`` too (there over the product's inflection stems), so it lives with that
  runner (``affidavit.recall.bench``) and is used from there.
- :class:`VectorOnly`: the product's sentence model through its public embedder API
  (``embed_windows`` for records, ``embed_query`` for questions), ranked by the best
  window's cosine alone: what a pure vector memory store answers.

Both rank the same records the product searches, so a benchmark's deltas measure ranking
and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from affidavit.recall.bench import Bm25

__all__ = ["Bm25", "VectorOnly"]


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
