"""The indexed memories of a :class:`~.index.RecallIndex`: their per-memory columns, and their
:class:`~.entry.Entry` objects, each made from its record only when something reads it.

Why: an index restored from a vault's sealed snapshot holds every memory of the vault, and
making an ``Entry`` for each of 10,000 at every start cost ~50 ms of Python, with as much
again to file each one away (issue 27). Ranking reads few of them per search (the
candidates, the page), so a restored memory keeps only its record until one of those reads
it (:meth:`Entries.defer`); what every search needs of every memory (its importance and
whether it is an opinion, for ranking's early stop; its seq) sits in arrays by slot, which
the snapshot's image keeps as :class:`Columns` and restores with a few array operations.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from affidavit.recall.ranking.entry import Entry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Entries(Mapping[int, Entry]):
    """Entries by slot; a deferred one is made (and kept) the first time it is read."""

    def __init__(self) -> None:
        self._made: dict[int, Entry] = {}
        self._later: dict[int, Any] = {}
        self._make: Callable[[Any], Entry] | None = None

    def __getitem__(self, slot: int) -> Entry:
        entry = self._made.get(slot)
        if entry is None:
            record = self._later.pop(slot)  # KeyError: no entry under this slot
            assert self._make is not None  # set with every deferred record
            entry = self._make(record)
            entry.slot = slot
            self._made[slot] = entry
        return entry

    def __contains__(self, slot: object) -> bool:
        return slot in self._made or slot in self._later

    def __iter__(self) -> Iterator[int]:
        return itertools.chain(list(self._made), list(self._later))

    def __len__(self) -> int:
        return len(self._made) + len(self._later)

    def put(self, entry: Entry) -> None:
        """File an entry under its slot."""
        self._made[entry.slot] = entry

    def defer(
        self, slots: Sequence[int], records: Sequence[Any], make: Callable[[Any], Entry]
    ) -> None:
        """File ``records`` under ``slots`` as they are; ``make`` turns one into its entry
        when it is first read (the same ``make`` for every deferred record)."""
        self._make = make
        self._later.update(zip(slots, records, strict=True))

    def discard(self, slot: int) -> None:
        """Drop whatever is filed under a slot (no-op if nothing is)."""
        self._made.pop(slot, None)
        self._later.pop(slot, None)

    def made(self, slot: int) -> Entry | None:
        """The entry under a slot if it was made already (reading nothing)."""
        return self._made.get(slot)


@dataclass(frozen=True)
class Columns:
    """Per-memory columns of an index, one row per memory, in slot order: what a snapshot's
    image keeps so a restore needs no object per memory."""

    ids: list[str]
    slots: npt.NDArray[np.int64]
    seqs: npt.NDArray[np.int64]
    importance: npt.NDArray[np.float64]
    opinion: npt.NDArray[np.bool_]
    #: Turns of a conversation: made and linked at restore (the links are per slot).
    threaded: npt.NDArray[np.bool_]

    def rows(self, which: npt.NDArray[np.int64]) -> Columns:
        """The columns of the rows ``which`` only."""
        return Columns(
            [self.ids[i] for i in which.tolist()],
            self.slots[which],
            self.seqs[which],
            self.importance[which],
            self.opinion[which],
            self.threaded[which],
        )
