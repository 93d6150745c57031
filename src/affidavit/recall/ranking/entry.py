"""What ranking holds of one memory, which memories a search admits, and one ranked result.

:class:`Entry` is the plaintext view of one searchable memory, in RAM only; :class:`Filters`
run after ranking (:mod:`.index` widens the pool when they leave too few); :class:`Hit` is a
result with the evidence behind its score.
"""

from __future__ import annotations

from dataclasses import dataclass

from affidavit.recall.kinds import MemoryKind


@dataclass(slots=True)
class Entry:
    """What ranking needs to know about one searchable memory (plaintext, RAM only; slots:
    one is made per memory at every unlock)."""

    id: str
    text: str
    seq: int
    namespace: str = "default"
    tags: frozenset[str] = frozenset()
    saved_at: str = ""
    discovered: str | None = None
    importance: float = 0.5
    kind: str = MemoryKind.FACT
    affirmed: str | None = None
    #: Saved by an agent (not imported): then its save day is a day it is known to be from.
    authored: bool = True
    thread: str | None = None
    turn: int | None = None
    reply_to: str | None = None
    slot: int = -1

    @property
    def day(self) -> str | None:
        """The day the memory is known to belong to, or ``None``.

        When it was discovered; else, for an authored memory, the day it was saved. An
        imported row without a date has none: its save day is the day of the import.
        """
        if self.discovered:
            return self.discovered
        return self.saved_at[:10] or None if self.authored else None


@dataclass(frozen=True)
class Filters:
    """Post-ranking filters; dates are ISO strings compared on their date/time prefix."""

    namespaces: frozenset[str] | None = None
    tags: frozenset[str] | None = None
    kind: str | None = None
    saved_since: str | None = None
    saved_until: str | None = None
    discovered_since: str | None = None
    discovered_until: str | None = None
    #: Only these ids (e.g. the memories whose evidence is proven now); ``None``: any.
    only: frozenset[str] | None = None

    def active(self) -> bool:
        """True when any filter is set (then the pool may need widening)."""
        return any(
            v is not None
            for v in (
                self.namespaces,
                self.tags,
                self.kind,
                self.saved_since,
                self.saved_until,
                self.discovered_since,
                self.discovered_until,
                self.only,
            )
        )

    def admits(self, e: Entry) -> bool:
        """Whether one entry passes every filter (``until`` bounds are inclusive by day)."""
        if self.only is not None and e.id not in self.only:
            return False
        if self.namespaces is not None and e.namespace not in self.namespaces:
            return False
        if self.tags is not None and not (self.tags & e.tags):
            return False
        if self.kind is not None and e.kind != self.kind:
            return False
        return _within(e.saved_at, self.saved_since, self.saved_until) and _within(
            e.discovered, self.discovered_since, self.discovered_until
        )


def _within(value: str | None, since: str | None, until: str | None) -> bool:
    if since is None and until is None:
        return True
    if not value:
        return False
    if since is not None and value[: len(since)] < since:
        return False
    return not (until is not None and value[: len(until)] > until)


@dataclass(frozen=True)
class ScoreParts:
    """Why a memory matched: the terms its ranking score is made of.

    ``(semantic + literal + exact + context) * prior * date`` is the score ranking gave it;
    the page (:mod:`.page`) may then discount that for repeating a memory already shown, and
    the hit's final score is that times ``page``. ``cosine`` is the best window's cosine to
    the question (``semantic`` is its part above the floor); ``literal`` the question's
    words the memory holds, ``exact`` an id or name it holds verbatim.
    """

    cosine: float
    semantic: float
    literal: float
    exact: float
    context: float
    prior: float
    date: float
    page: float = 1.0

    @classmethod
    def unreached(cls) -> ScoreParts:
        """The parts of a memory no channel reached (it only fills out a ``top_k``)."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0)

    @property
    def ranked(self) -> float:
        """The score ranking gave, before the page's discount."""
        return (self.semantic + self.literal + self.exact + self.context) * self.prior * self.date


@dataclass
class Hit:
    """One ranked result with the evidence behind its score (``seq``: its save order)."""

    id: str
    score: float
    relevance: float
    channels: list[str]
    parts: ScoreParts
    seq: int
