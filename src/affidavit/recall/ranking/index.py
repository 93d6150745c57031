"""The searchable memories of one vault view, and the search pipeline over them.

:class:`RecallIndex` keeps every searchable memory's :class:`~.entry.Entry` under a small
integer slot, its text in the keyword channel, its embedding windows in the vector channel
(:mod:`.channels`), the conversation links (:mod:`.conversation`) and, for a correction, the
windows of what it corrected (:mod:`.corrections`).
:meth:`RecallIndex.search` reads the channels, widens the vector pool while filters leave
too few, scores (:mod:`.score`), picks the page (:mod:`.page`) and fills out a ``top_k``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from affidavit.recall.dates import spans
from affidavit.recall.ranking import params
from affidavit.recall.ranking.channels import KeywordIndex, VectorIndex
from affidavit.recall.ranking.conversation import Conversations, grown
from affidavit.recall.ranking.corrections import Inherited
from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts
from affidavit.recall.ranking.page import spread
from affidavit.recall.ranking.score import (
    Evidence,
    exact_evidence,
    literal_evidence,
    prior_ceiling,
    rank,
    sense,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class RecallIndex:
    """The searchable memories of one vault view: entries, keyword index, vector index."""

    def __init__(self, keyword: KeywordIndex | None = None) -> None:
        """An empty index, or one over ``keyword`` restored from a snapshot's image (its
        entries then come with :meth:`add_many` ``indexed=True``)."""
        import numpy as np

        self.keyword = keyword if keyword is not None else KeywordIndex()
        self.vector = VectorIndex()
        self._entries: dict[str, Entry] = {}
        self.by_slot: dict[int, Entry] = {}
        self._next_slot = 0
        self.conversations = Conversations()
        self.inherited = Inherited()
        #: Per slot, the entry's :func:`.score.prior_ceiling` (the bound that lets ranking stop
        #: early).
        self.ceilings: npt.NDArray[np.float64] = np.zeros(0)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._entries

    def entry(self, item_id: str) -> Entry | None:
        """The indexed entry for an id, if it is searchable."""
        return self._entries.get(item_id)

    def entry_at(self, slot: int) -> Entry | None:
        """The entry indexed under a slot (slots come from the channel searches)."""
        return self.by_slot.get(slot)

    def lexical_candidates(self, text: str, limit: int) -> list[tuple[int, Entry]]:
        """The records holding most of a text's information (store-time checks, no model)."""
        scores = literal_evidence(self.keyword, text).shares(())
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:limit]
        return [(slot, self.by_slot[slot]) for slot in best]

    def entries(self) -> Iterable[Entry]:
        """Every searchable entry (no order promised)."""
        return self._entries.values()

    def add_many(
        self,
        items: Sequence[tuple[Entry, npt.NDArray[np.floating] | None]],
        *,
        indexed: bool = False,
    ) -> None:
        """Index entries with their embedding windows (``None`` = keyword only).

        ``indexed``: each entry keeps the slot it carries, under which the keyword index
        already holds its text (an index restored from a snapshot's image): nothing is
        stemmed or inserted again.
        """
        texts: list[tuple[int, str]] = []
        vectors: list[tuple[int, npt.NDArray[np.floating]]] = []
        for entry, windows in items:
            if entry.id in self._entries:
                self.remove(entry.id)
            if indexed:
                self._next_slot = max(self._next_slot, entry.slot + 1)
            else:
                entry.slot = self._next_slot
                self._next_slot += 1
                texts.append((entry.slot, entry.text))
            self._entries[entry.id] = entry
            self.by_slot[entry.slot] = entry
            self.conversations.link(entry)
            self.ceilings = grown(self.ceilings, entry.slot, 0.0)
            self.ceilings[entry.slot] = prior_ceiling(entry.importance, entry.kind)
            if windows is not None and len(windows):
                vectors.append((entry.slot, windows))
        self.keyword.add_many(texts)
        self.vector.add_many(vectors)

    def add(self, entry: Entry, windows: npt.NDArray[np.float32] | None) -> None:
        """Index one entry."""
        self.add_many([(entry, windows)])

    def inherit_many(
        self, items: Sequence[tuple[str, Collection[str], npt.NDArray[np.floating]]]
    ) -> None:
        """Give each indexed correction ``(id, corrected ids, their windows)`` the meaning of
        what it corrected (:mod:`.corrections`), in place of what it inherited before."""
        vectors: list[tuple[int, npt.NDArray[np.floating]]] = []
        for item_id, sources, windows in items:
            entry = self._entries.get(item_id)
            if entry is None:
                continue
            self._disinherit(entry.slot)
            if not len(windows):
                continue
            slot = self._next_slot
            self._next_slot += 1
            self.inherited.add(entry.slot, slot, sources)
            vectors.append((slot, windows))
        self.vector.add_many(vectors)

    def _disinherit(self, slot: int) -> None:
        dropped = self.inherited.pop(slot)
        if dropped is not None:
            self.vector.remove(dropped)

    def remove(self, item_id: str) -> None:
        """Drop an entry from both channels (no-op if absent)."""
        entry = self._entries.pop(item_id, None)
        if entry is None:
            return
        del self.by_slot[entry.slot]
        self._disinherit(entry.slot)
        self.conversations.unlink(entry.slot)
        self.keyword.remove(entry.slot)
        self.vector.remove(entry.slot)

    def search(
        self,
        question: str,
        query_vector: npt.NDArray[np.float32] | Callable[[], npt.NDArray[np.float32]] | None,
        *,
        filters: Filters | None = None,
        top_k: int | None = None,
        now: datetime | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> list[Hit]:
        """Rank the memories for a question; adaptive length when ``top_k`` is ``None``.

        With ``top_k``, exactly ``top_k`` hits when that many memories pass the filters:
        the vector pool widens until it holds them (the last time over every memory), and
        memories no channel reaches fill the rest by the documented order
        (:func:`.score.order_key`). ``query_vector`` may be a callable that returns it: it
        is called after the literal channels are read, so a caller can embed the question
        meanwhile.
        """
        filters = filters or Filters()
        now = now or datetime.now(UTC)
        want = top_k if top_k is not None else params.ADAPTIVE_CAP
        literal = literal_evidence(self.keyword, question)
        exact = exact_evidence(self.keyword, self.by_slot, question)
        dates = spans(question)
        if callable(query_vector):
            query_vector = query_vector()
        pool: int | None = params.POOL_START
        hits: list[Hit] = []
        for attempt in range(params.POOL_WIDENINGS + 1):
            if attempt == params.POOL_WIDENINGS:
                pool = None
            semantic = (
                self.inherited.fold(self.vector.search(query_vector, pool))
                if query_vector is not None
                else {}
            )
            exhausted = pool is None or query_vector is None or pool >= len(self.vector)
            if attempt == 0 and semantic and query_vector is not None:
                literal = literal.in_sense(sense(self.vector, semantic, query_vector, exhausted))
            words = literal.shares(None if exhausted else semantic.keys())
            evidence = Evidence(semantic, words, exact)
            best = rank(self, evidence, dates, filters, now, exclude, want, top_k is None)
            hits = spread(best, want, self._entries, self.vector.similarity)
            if pool is None or len(hits) >= want or exhausted or not filters.active():
                break
            pool = pool * params.POOL_GROWTH
        if top_k is not None and len(hits) < top_k:
            hits += self._unreached(hits, top_k - len(hits), filters, exclude)
        return hits

    def _unreached(
        self, hits: list[Hit], need: int, filters: Filters, exclude: frozenset[str]
    ) -> list[Hit]:
        """Up to ``need`` admitted memories no channel reached (score 0), newest first."""
        taken = {h.id for h in hits}
        rest = sorted(
            (
                e
                for e in self._entries.values()
                if e.id not in taken and e.id not in exclude and filters.admits(e)
            ),
            key=lambda e: (-e.seq, e.id),
        )
        return [Hit(e.id, 0.0, 0.0, [], ScoreParts.unreached(), e.seq) for e in rest[:need]]
