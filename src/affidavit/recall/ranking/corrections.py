"""What a correction inherits: the meaning of the memories it corrected (ADR 0235).

A correction (a memory stored with ``supersedes``) replaces what it corrects: the old memory
leaves search, so every question the old one answered is now the correction's to answer.
Its own words often do not say so: "Switched home energy from Octopus to Ecotricity"
corrects "Home energy is with Octopus on the Flexible tariff", and "Who supplies our
electricity and gas?" is closer in meaning to the old sentence than to the new one.

So the vector channel keeps the corrected memories' windows, under a slot of their own that
belongs to the correction (:class:`Inherited`), and a search reads the correction's cosine
as the best of its own windows and of the inherited ones less INHERITED_DISCOUNT: the
correction's own words are the direct evidence, the old ones say what it replaced. Only the
semantic channel inherits. A corrected memory never surfaces itself, and a memory that
corrected nothing is ranked as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from affidavit.recall.ranking import params


class Inherited:
    """Which vector slots hold inherited windows, and for which correction.

    A correction's slot owns at most one inherited slot (every memory down its chain of
    corrections, as one block of windows); ``sources`` names those memories, so a change to
    one of them (forgotten, shredded) can be carried to the correction that inherited it.
    """

    def __init__(self) -> None:
        self._owner: dict[int, int] = {}  # inherited slot -> the correction's slot
        self._inherited: dict[int, int] = {}  # the correction's slot -> its inherited slot
        self._heirs: dict[str, set[int]] = {}  # corrected memory id -> corrections' slots
        self._sources: dict[int, frozenset[str]] = {}  # correction's slot -> corrected ids

    def add(self, owner: int, slot: int, sources: Iterable[str]) -> None:
        """Record that ``slot`` holds windows of ``sources``, inherited by ``owner``."""
        self._owner[slot] = owner
        self._inherited[owner] = slot
        self._sources[owner] = frozenset(sources)
        for source in self._sources[owner]:
            self._heirs.setdefault(source, set()).add(owner)

    def pop(self, owner: int) -> int | None:
        """Forget what ``owner`` inherited; the slot whose windows are to be dropped."""
        slot = self._inherited.pop(owner, None)
        if slot is None:
            return None
        del self._owner[slot]
        for source in self._sources.pop(owner):
            heirs = self._heirs[source]
            heirs.discard(owner)
            if not heirs:
                del self._heirs[source]
        return slot

    def heirs(self, memory_id: str) -> frozenset[int]:
        """The slots of the corrections that inherited ``memory_id``'s windows."""
        return frozenset(self._heirs.get(memory_id, ()))

    def fold(self, cosines: dict[int, float]) -> dict[int, float]:
        """Per-slot cosines with every inherited slot's cosine, less INHERITED_DISCOUNT,
        given to its correction when that is higher than the correction's own."""
        if not self._owner:
            return cosines
        owner = self._owner
        own = {slot: c for slot, c in cosines.items() if slot not in owner}
        discount = params.INHERITED_DISCOUNT
        for slot, cosine in cosines.items():
            heir = owner.get(slot)
            if heir is not None and cosine - discount > own.get(heir, -2.0):
                own[heir] = cosine - discount
        return own
