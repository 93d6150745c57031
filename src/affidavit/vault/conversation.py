"""Which memories form a conversation, and what a candidate takes from its neighbours.

Memories saved one after another on the same day in one namespace are read as one
conversation (an imported chat, an agent's working session). Ranking (ADR 52) lets a
candidate take a share of its neighbours' evidence: ``W_NEIGHBOR`` of the stronger
neighbour, and ``W_ANSWER`` of the memory before it when that one asks a question (the
candidate is its reply). A record that ends in a question counts ``QUESTION_DAMP`` of its
own evidence.

The links are kept per index slot in arrays, updated one entry at a time, so a search
computes every candidate's share with a few vector operations instead of a Python loop
over hundreds of candidates (benchmarks/vault.py, hybrid search p50 at 10k).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NONE = -1


class Linked(Protocol):
    """What the links need to know of an indexed memory (``ranking.Entry``)."""

    slot: int
    seq: int
    text: str
    namespace: str
    discovered: str | None


def grown(array: npt.NDArray[Any], slot: int, fill: object) -> npt.NDArray[Any]:
    """``array`` with room for index ``slot`` (doubling, so appends stay amortised O(1))."""
    import numpy as np

    if slot < len(array):
        return array
    size = max(1024, 2 * (slot + 1))
    return np.concatenate([array, np.full(size - len(array), fill, dtype=array.dtype)])


def _same_conversation(a: Linked, b: Linked) -> bool:
    return (a.namespace, a.discovered) == (b.namespace, b.discovered)


class Conversations:
    """Per-slot links to the memory saved just before and just after, same conversation."""

    def __init__(self) -> None:
        import numpy as np

        self.before: npt.NDArray[np.int64] = np.full(0, NONE, dtype=np.int64)
        self.after: npt.NDArray[np.int64] = np.full(0, NONE, dtype=np.int64)
        self.asks: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.question: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)

    def _fit(self, slot: int) -> None:
        self.before = grown(self.before, slot, NONE)
        self.after = grown(self.after, slot, NONE)
        self.asks = grown(self.asks, slot, False)
        self.question = grown(self.question, slot, False)

    def link(self, entry: Linked, at_seq: Mapping[int, Linked]) -> None:
        """Record a new entry and join it to the entries saved right before and after it.

        The text is read here once, not per search: whether it holds a question (its reply
        may follow, W_ANSWER) and whether it ends in one (QUESTION_DAMP).
        """
        self._fit(entry.slot)
        self.asks[entry.slot] = "?" in entry.text
        self.question[entry.slot] = entry.text.rstrip().endswith("?")
        earlier, later = at_seq.get(entry.seq - 1), at_seq.get(entry.seq + 1)
        if earlier is not None and _same_conversation(earlier, entry):
            self.before[entry.slot], self.after[earlier.slot] = earlier.slot, entry.slot
        if later is not None and _same_conversation(later, entry):
            self.after[entry.slot], self.before[later.slot] = later.slot, entry.slot

    def unlink(self, slot: int) -> None:
        """Forget an entry's links (its neighbours then have none on that side)."""
        earlier, later = int(self.before[slot]), int(self.after[slot])
        if earlier != NONE:
            self.after[earlier] = NONE
        if later != NONE:
            self.before[later] = NONE
        self.before[slot] = self.after[slot] = NONE

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

        position = np.full(len(self.before), NONE, dtype=np.int64)
        position[slots] = np.arange(len(slots))

        def evidence_of(links: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            linked = links[slots]
            at = np.where(linked != NONE, position[np.maximum(linked, 0)], NONE)
            return np.where(at != NONE, own[np.maximum(at, 0)], 0.0)

        earlier, later = evidence_of(self.before), evidence_of(self.after)
        asked = np.where(self.asks[np.maximum(self.before[slots], 0)], earlier, 0.0)
        return neighbour * np.maximum(earlier, later) + answer * asked
