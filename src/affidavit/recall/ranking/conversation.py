"""Explicit conversation structure: which memories are turns of one thread, and who replies.

Only rows that say they belong to a conversation get any of this (ADR 55). A row carries a
``thread`` (any name, unique within its namespace), optionally its ``turn`` number and the
id it ``reply_to``s: an imported chat, a meeting transcript. Authored memories carry none,
and nothing here ever links them, whatever their dates or save order: an agent's standalone
facts saved weeks apart, undated, are not a conversation.

Within a thread, turns are ordered by ``turn`` (rows without one follow, in save order).
Ranking (:mod:`.score`) lets a candidate take ``W_NEIGHBOR`` of the stronger adjacent
turn's own evidence, and ``W_ANSWER`` of the memory it replies to when that one asks a
question (a sentence ending in "?", not a URL's query string): in a chat, the reply holds
what the question's words point at. The replied-to memory is ``reply_to`` when given, else
the previous turn. A threaded record that ends in a question counts ``QUESTION_DAMP`` of its
own evidence; an authored one keeps all of it.

The links are kept per index slot in arrays, updated one entry at a time, so a search
computes every candidate's share with a few vector operations (benchmarks/vault.py, hybrid
search p50 at 10k); a vault without threads skips them altogether.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NONE = -1

#: A question mark that ends a sentence: followed by a space, a closing quote or bracket, or
#: the end. In a URL it starts a query string ("?orgId=1") and is followed by a character.
_ASKS = re.compile(r"\?+(?=[\s\"'\u2019\u201d)\]]|$)")


def asks(text: str) -> bool:
    """Whether a text asks a question somewhere (its next turn may be the answer)."""
    return _ASKS.search(text) is not None


def ends_asking(text: str) -> bool:
    """Whether a text ends in a question: it asks rather than states."""
    return text.rstrip(" \"'\u2019\u201d)]").endswith("?")


class Turn(Protocol):
    """What the links need to know of an indexed memory (:class:`.entry.Entry`)."""

    id: str
    slot: int
    seq: int
    text: str
    namespace: str
    thread: str | None
    turn: int | None
    reply_to: str | None


def grown(array: npt.NDArray[Any], slot: int, fill: object) -> npt.NDArray[Any]:
    """``array`` with room for index ``slot`` (doubling, so appends stay amortised O(1))."""
    import numpy as np

    if slot < len(array):
        return array
    size = max(1024, 2 * (slot + 1))
    return np.concatenate([array, np.full(size - len(array), fill, dtype=array.dtype)])


def _position(entry: Turn) -> tuple[bool, int, int]:
    """Where a turn sits in its thread: by turn number, unnumbered rows after, by save order."""
    return (entry.turn is None, entry.turn or 0, entry.seq)


class Conversations:
    """Per-slot links within threads: the adjacent turns, and the memory a turn replies to."""

    def __init__(self) -> None:
        import numpy as np

        self.before: npt.NDArray[np.int64] = np.full(0, NONE, dtype=np.int64)
        self.after: npt.NDArray[np.int64] = np.full(0, NONE, dtype=np.int64)
        self.parent: npt.NDArray[np.int64] = np.full(0, NONE, dtype=np.int64)
        self.asks: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.question: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        #: Each thread's turns in order: (position, slot), keyed by (namespace, thread).
        self._threads: dict[tuple[str, str], list[tuple[tuple[bool, int, int], int]]] = {}
        self._turns: dict[int, Turn] = {}
        self._slot_of: dict[tuple[str, str], int] = {}  # (namespace, id) -> slot, threaded
        #: The slots replying to each (namespace, id), whether that memory is indexed or not
        #: (an import may bring a reply before its question; an update re-indexes both).
        self._replies: dict[tuple[str, str], set[int]] = {}

    def __bool__(self) -> bool:
        """Whether any indexed memory belongs to a thread (else no search pays for links)."""
        return bool(self._turns)

    def _fit(self, slot: int) -> None:
        self.before = grown(self.before, slot, NONE)
        self.after = grown(self.after, slot, NONE)
        self.parent = grown(self.parent, slot, NONE)
        self.asks = grown(self.asks, slot, False)
        self.question = grown(self.question, slot, False)

    def link(self, entry: Turn) -> None:
        """Place a new entry in its thread (no-op without one) and resolve who it replies to.

        The text is read here once, not per search: whether it asks a question (its reply
        gains W_ANSWER) and whether it ends in one (QUESTION_DAMP).
        """
        if entry.thread is None:
            return
        self._fit(entry.slot)
        self.asks[entry.slot] = asks(entry.text)
        self.question[entry.slot] = ends_asking(entry.text)
        self._turns[entry.slot] = entry
        self._slot_of[(entry.namespace, entry.id)] = entry.slot
        turns = self._threads.setdefault((entry.namespace, entry.thread), [])
        at = bisect.bisect(turns, (_position(entry), entry.slot))
        turns.insert(at, (_position(entry), entry.slot))
        self._relink(turns, at - 1, at + 2)
        if entry.reply_to is not None:
            asked = (entry.namespace, entry.reply_to)
            self._replies.setdefault(asked, set()).add(entry.slot)
            self.parent[entry.slot] = self._slot_of.get(asked, NONE)
        for reply in self._replies.get((entry.namespace, entry.id), ()):
            self.parent[reply] = entry.slot

    def unlink(self, slot: int) -> None:
        """Take an entry out of its thread: its neighbours become adjacent, its replies lose it."""
        entry = self._turns.pop(slot, None)
        if entry is None or entry.thread is None:
            return
        del self._slot_of[(entry.namespace, entry.id)]
        turns = self._threads[(entry.namespace, entry.thread)]
        at = bisect.bisect_left(turns, (_position(entry), slot))
        del turns[at]
        if not turns:
            del self._threads[(entry.namespace, entry.thread)]
        self._relink(turns, at - 1, at + 1)
        if entry.reply_to is not None:
            asked = (entry.namespace, entry.reply_to)
            self._replies[asked].discard(slot)
            if not self._replies[asked]:
                del self._replies[asked]
        for reply in self._replies.get((entry.namespace, entry.id), ()):
            self.parent[reply] = NONE
        self.before[slot] = self.after[slot] = self.parent[slot] = NONE

    def _relink(self, turns: list[tuple[tuple[bool, int, int], int]], lo: int, hi: int) -> None:
        """Refresh the links of the turns at positions ``lo`` to ``hi`` - 1 of a thread."""
        for at in range(max(lo, 0), min(hi, len(turns))):
            slot = turns[at][1]
            self.before[slot] = turns[at - 1][1] if at > 0 else NONE
            self.after[slot] = turns[at + 1][1] if at + 1 < len(turns) else NONE
            if self._turns[slot].reply_to is None:
                self.parent[slot] = self.before[slot]

    def shares(
        self,
        slots: npt.NDArray[np.int64],
        own: npt.NDArray[np.float64],
        neighbour: float,
        answer: float,
    ) -> npt.NDArray[np.float64]:
        """Each candidate's share of its candidate neighbours' ``own`` evidence.

        Only candidates count as neighbours, so a record with no evidence of its own neither
        gains nor gives; the share is of the neighbour's own evidence, so it never compounds.
        """
        import numpy as np

        if not self._turns:
            return np.zeros(len(slots))
        size = len(self.before)
        inside = slots < size  # slots indexed after the last threaded one have no links
        safe = np.where(inside, slots, 0)
        position = np.full(size, NONE, dtype=np.int64)
        position[slots[inside]] = np.flatnonzero(inside)

        def evidence_of(links: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            linked = np.where(inside, links[safe], NONE)
            at = np.where(linked != NONE, position[np.maximum(linked, 0)], NONE)
            return np.where(at != NONE, own[np.maximum(at, 0)], 0.0)

        earlier, later = evidence_of(self.before), evidence_of(self.after)
        parent = np.where(inside, self.parent[safe], NONE)
        replied = np.where(self.asks[np.maximum(parent, 0)] & (parent != NONE), 1.0, 0.0)
        return neighbour * np.maximum(earlier, later) + answer * replied * evidence_of(self.parent)

    def threaded(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which candidates are turns of a thread."""
        import numpy as np

        if not self._turns:
            return np.zeros(len(slots), dtype=bool)
        return np.fromiter((int(s) in self._turns for s in slots), dtype=bool, count=len(slots))

    def asking(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which candidates are threaded records that end in a question."""
        import numpy as np

        if not self._turns:
            return np.zeros(len(slots), dtype=bool)
        inside = slots < len(self.question)
        return np.where(inside, self.question[np.where(inside, slots, 0)], False)
