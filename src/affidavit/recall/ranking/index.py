"""The searchable memories of one vault view, and the search pipeline over them.

:class:`RecallIndex` keeps every searchable memory under a small integer slot: its
:class:`~.entry.Entry` (made from its record on first read when the index was restored,
:mod:`.entries`), its seq, importance and kind in arrays by slot, its text in the keyword
channel, its embedding windows in the vector channel (:mod:`.channels`), the
conversation links (:mod:`.conversation`) and, for a correction, the windows of what it
corrected (:mod:`.corrections`).
:meth:`RecallIndex.search` reads the channels, widens the vector pool while filters leave
too few, scores (:mod:`.score`), picks the page (:mod:`.page`) and fills out a ``top_k``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from affidavit.recall.dates import spans
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.ranking import params
from affidavit.recall.ranking.channels import KeywordIndex, VectorIndex
from affidavit.recall.ranking.conversation import Conversations, grown
from affidavit.recall.ranking.corrections import Inherited
from affidavit.recall.ranking.entries import Columns, Entries
from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts
from affidavit.recall.ranking.page import spread
from affidavit.recall.ranking.score import (
    Evidence,
    exact_evidence,
    literal_evidence,
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
        memories then come with :meth:`adopt`)."""
        import numpy as np

        self.keyword = keyword if keyword is not None else KeywordIndex()
        self.vector = VectorIndex()
        self.by_slot = Entries()
        self._slot_of: dict[str, int] = {}
        self._next_slot = 0
        self.conversations = Conversations()
        self.inherited = Inherited()
        #: Per slot: the memory's seq, importance and whether it is an opinion (what every
        #: search reads of every candidate: the bound of :func:`.score.prior_ceilings`).
        self.seqs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.importance: npt.NDArray[np.float64] = np.zeros(0)
        self.opinion: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._slot_of

    def entry(self, item_id: str) -> Entry | None:
        """The indexed entry for an id, if it is searchable."""
        slot = self._slot_of.get(item_id)
        return None if slot is None else self.by_slot[slot]

    def entry_at(self, slot: int) -> Entry | None:
        """The entry indexed under a slot (slots come from the channel searches)."""
        return self.by_slot.get(slot)

    def lexical_candidates(self, text: str, limit: int) -> list[tuple[int, Entry]]:
        """The records holding most of a text's information (store-time checks, no model)."""
        scores = literal_evidence(self.keyword, text).shares(())
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:limit]
        return [(slot, self.by_slot[slot]) for slot in best]

    def columns(self, keep: Callable[[Entry], bool]) -> Columns:
        """The per-memory columns of every indexed memory whose entry ``keep`` accepts (one
        not made yet came from the vault and is kept), in slot order: a snapshot's image."""
        import numpy as np

        pairs = sorted(
            (slot, rid)
            for rid, slot in self._slot_of.items()
            if (made := self.by_slot.made(slot)) is None or keep(made)
        )
        slots = np.array([slot for slot, _ in pairs], dtype=np.int64)
        return Columns(
            [rid for _, rid in pairs],
            slots,
            self.seqs[slots],
            self.importance[slots],
            self.opinion[slots],
            self.conversations.threaded(slots),
        )

    def adopt(self, columns: Columns, records: Sequence[Any], make: Callable[[Any], Entry]) -> None:
        """Index memories whose text the keyword index already holds under their slots (an
        index restored from a snapshot's image), each entry made from its record by ``make``
        when first read; their windows go to :attr:`vector` separately."""
        slots = columns.slots.tolist()
        if not slots:
            return
        self._slot_of.update(zip(columns.ids, slots, strict=True))
        self.by_slot.defer(slots, records, make)
        self._next_slot = max(self._next_slot, max(slots) + 1)
        self._fit(self._next_slot - 1)
        self.seqs[columns.slots] = columns.seqs
        self.importance[columns.slots] = columns.importance
        self.opinion[columns.slots] = columns.opinion
        for slot in columns.slots[columns.threaded].tolist():
            self.conversations.link(self.by_slot[slot])

    def _fit(self, slot: int) -> None:
        self.seqs = grown(self.seqs, slot, 0)
        self.importance = grown(self.importance, slot, 0.0)
        self.opinion = grown(self.opinion, slot, False)

    def add_many(self, items: Sequence[tuple[Entry, npt.NDArray[np.floating] | None]]) -> None:
        """Index entries with their embedding windows (``None`` = keyword only)."""
        texts: list[tuple[int, str]] = []
        vectors: list[tuple[int, npt.NDArray[np.floating]]] = []
        for entry, windows in items:
            if entry.id in self._slot_of:
                self.remove(entry.id)
            entry.slot = self._next_slot
            self._next_slot += 1
            texts.append((entry.slot, entry.text))
            self._slot_of[entry.id] = entry.slot
            self.by_slot.put(entry)
            self.conversations.link(entry)
            if windows is not None and len(windows):
                vectors.append((entry.slot, windows))
        if items:
            self._fit(self._next_slot - 1)
            for entry, _ in items:
                self.seqs[entry.slot] = entry.seq
                self.importance[entry.slot] = entry.importance
                self.opinion[entry.slot] = entry.kind == MemoryKind.OPINION
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
            owner = self._slot_of.get(item_id)
            if owner is None:
                continue
            self._disinherit(owner)
            if not len(windows):
                continue
            slot = self._next_slot
            self._next_slot += 1
            self.inherited.add(owner, slot, sources)
            vectors.append((slot, windows))
        self.vector.add_many(vectors)

    def _disinherit(self, owner: int) -> None:
        dropped = self.inherited.pop(owner)
        if dropped is not None:
            self.vector.remove(dropped)

    def remove(self, item_id: str) -> None:
        """Drop an entry from both channels (no-op if absent)."""
        slot = self._slot_of.pop(item_id, None)
        if slot is None:
            return
        self.by_slot.discard(slot)
        self._disinherit(slot)
        self.conversations.unlink(slot)
        self.keyword.remove(slot)
        self.vector.remove(slot)

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
            shown = {h.id: self.by_slot[self._slot_of[h.id]] for h in best}
            hits = spread(best, want, shown, self.vector.similarity)
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
                for e in map(self.by_slot.__getitem__, self._slot_of.values())
                if e.id not in taken and e.id not in exclude and filters.admits(e)
            ),
            key=lambda e: (-e.seq, e.id),
        )
        return [Hit(e.id, 0.0, 0.0, [], ScoreParts.unreached(), e.seq) for e in rest[:need]]
