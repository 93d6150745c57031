"""How one question's candidates are scored: channel evidence, priors, age, and the floors.

Literal evidence is the question's informative terms with their postings
(:func:`literal_evidence`), each scaled by how far its records share the question's sense
(:func:`sense`).

The formulas are in :mod:`affidavit.recall.ranking` (the package docstring); every constant
they use is read from :mod:`.params` at call time. :func:`rank` returns the best candidates
by score, the pool :mod:`.page` then picks the page from.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from affidavit.recall import dates as named_dates
from affidavit.recall.ranking import params
from affidavit.recall.ranking.channels import KeywordIndex, VectorIndex, query_terms
from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from affidavit.recall.ranking.conversation import Conversations


class Scored(Protocol):
    """What scoring reads of the index (:class:`~.index.RecallIndex`)."""

    by_slot: dict[int, Entry]
    conversations: Conversations
    #: Per slot, the entry's :func:`prior_ceiling` (the bound that lets ranking stop early).
    ceilings: npt.NDArray[np.float64]

    def share_after(self, entry: Entry, namespaces: frozenset[str] | None) -> float:
        """The share of the searched population written after ``entry`` (its age)."""
        ...


def p_vec(cosines: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Best-window cosines as probabilities of relevance, through fixed bounds and the cap."""
    import numpy as np

    lo, hi = params.VEC_LO, params.VEC_HI
    return np.clip((cosines - lo) / (hi - lo), 0.0, params.VEC_CAP)


def _channel(
    evidence: dict[int, float],
    as_p: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """One channel's slots and probabilities (``as_p`` maps raw values; ``None``: they are
    probabilities already), sorted by slot, zero evidence left out."""
    import numpy as np

    slots = np.fromiter(evidence.keys(), dtype=np.int64, count=len(evidence))
    p = np.fromiter(evidence.values(), dtype=np.float64, count=len(evidence))
    if as_p is not None:
        p = as_p(p)
    keep = p > 0
    order = np.argsort(slots[keep])
    return slots[keep][order], p[keep][order]


def _union(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The sorted distinct slots of both (np.union1d's generic unique measured 9x slower)."""
    import numpy as np

    both = np.concatenate([a, b])
    both.sort()
    return both[np.concatenate([[True], both[1:] != both[:-1]])] if len(both) else both


def _aligned(
    slots: npt.NDArray[np.int64], some: npt.NDArray[np.int64], values: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``values`` (given for the sorted subset ``some`` of ``slots``) spread over ``slots``."""
    import numpy as np

    out = np.zeros(len(slots))
    out[np.searchsorted(slots, some)] = values
    return out


def aged(s: float, share_after: float) -> float:
    """Shift a log-odds-style evidence term by age in memories (odds halve per half-life)."""
    factor = 2.0 ** (-share_after / params.AGE_HALF_LIFE_SHARE)
    return math.log1p(factor * math.expm1(s))


def prior(importance: float, kind: str, affirmed: str | None, now: datetime) -> float:
    """The multiplicative prior: centred importance, plus the opinion recency bonus."""
    value = _importance_prior(importance)
    if kind == "opinion" and affirmed:
        days = max(0.0, (now - _parse_time(affirmed)).total_seconds() / 86400.0)
        value += params.W_OPINION * 2.0 ** (-days / params.OPINION_HALF_LIFE_DAYS)
    return value


def prior_ceiling(importance: float, kind: str) -> float:
    """The largest :func:`prior` a memory can get: its opinion bonus at age 0."""
    return _importance_prior(importance) + (params.W_OPINION if kind == "opinion" else 0.0)


def _importance_prior(importance: float) -> float:
    return 1.0 + params.W_IMP * (2.0 * min(1.0, max(0.0, importance)) - 1.0)


def _parse_time(value: str) -> datetime:
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


@dataclass(frozen=True)
class _Term:
    """One informative question term: its information and the records holding it.

    ``core`` terms (the rarest, up to LEX_CANDIDATE_BUDGET records) create candidates; the
    others only add their information to records already in play, unless the search is
    exhaustive (the last pool widening), where every posting counts.
    """

    info: float
    postings: Collection[int]
    core: bool


@dataclass(frozen=True)
class LiteralEvidence:
    """Literal evidence for one question: its informative terms, and the question's whole
    information (the share's denominator)."""

    terms: tuple[_Term, ...]
    denominator: float

    def p_lex(self, extra: Iterable[int] | None) -> dict[int, float]:
        """p_lex for the core candidates plus ``extra`` slots (``None``: every posting)."""
        boosts = [t for t in self.terms if not t.core and t.info > 0]
        raw: dict[int, float] = {}
        for term in self.terms:
            if term.core and term.info > 0:
                for slot in term.postings:
                    raw[slot] = raw.get(slot, 0.0) + term.info
        for slot in raw:
            raw[slot] += sum(t.info for t in boosts if slot in t.postings)
        if extra is None:
            extra = set().union(*(t.postings for t in boosts))
        for slot in extra:
            if slot not in raw:
                got = sum(t.info for t in boosts if slot in t.postings)
                if got:
                    raw[slot] = got
        return {slot: min(params.LEX_CAP, s / self.denominator) for slot, s in raw.items()}

    def in_sense(self, related: Callable[[Collection[int]], float]) -> LiteralEvidence:
        """Each term's information scaled by ``related`` of its postings (0-1); the
        denominator stays: a term in the wrong sense is information no memory answers."""
        terms = tuple(replace(t, info=t.info * related(t.postings)) for t in self.terms)
        return LiteralEvidence(terms, self.denominator)


def literal_evidence(keyword: KeywordIndex, question: str) -> LiteralEvidence:
    """The question's literal evidence: per-term postings weighted by self-information."""
    n = len(keyword)
    found: list[tuple[int, float, str]] = []
    info_total = 0.0
    for term in query_terms(question) if n else []:
        if term in params.FUNCTION_WORDS:
            continue
        df = keyword.df(term)
        if n >= params.COMMON_MIN_RECORDS and df > params.COMMON_SHARE * n:
            continue
        info = math.log((n + 1) / max(df, 1))
        info_total += info
        if df:
            found.append((df, info, term))
    found.sort()
    terms: list[_Term] = []
    fetched = 0
    for i, (df, info, term) in enumerate(found):
        postings = keyword.postings(term)
        if i == 0 or fetched + df <= params.LEX_CANDIDATE_BUDGET:
            fetched += df
            terms.append(_Term(info, postings, core=True))
        else:
            terms.append(_Term(info, set(postings), core=False))
    return LiteralEvidence(tuple(terms), max(info_total, math.log(n + 1)))


def sense(
    vector: VectorIndex,
    semantic: dict[int, float],
    query_vector: npt.NDArray[np.float32],
    exhaustive: bool,
) -> Callable[[Collection[int]], float]:
    """How far a term's records share the question's sense (0-1): the best cosine among
    them against the best of all (LEX_SENSE_NEAR, LEX_SENSE_FAR).

    ``semantic`` is the vector pool (the best cosines; ``exhaustive``: every record with
    a vector), so a record outside it is below the pool's worst: only when that could
    still count is anything computed, over the term's records alone.
    """
    best = max(semantic.values())
    worst = min(semantic.values())

    def related(postings: Collection[int]) -> float:
        pooled = semantic.keys() & postings
        if pooled:
            closest: float | None = max(semantic[slot] for slot in pooled)
        elif exhaustive:
            closest = None  # none of them has a vector: nothing to judge by
        elif best - worst >= params.LEX_SENSE_FAR:
            closest = worst  # below the pool: out of the question's sense either way
        else:
            closest = vector.best_cosine(postings, query_vector)
        if closest is None:
            return 1.0
        gap = best - closest
        near, far = params.LEX_SENSE_NEAR, params.LEX_SENSE_FAR
        return min(1.0, max(0.0, (far - gap) / (far - near)))

    return related


def rank(
    index: Scored,
    semantic: dict[int, float],
    lexical: dict[int, float],
    dates: tuple[named_dates.Span, ...],
    filters: Filters,
    now: datetime,
    exclude: frozenset[str],
    want: int,
    adaptive: bool,
) -> list[Hit]:
    """The pool a page is picked from: the best admitted candidates above the evidence floor.

    The floor is ABSOLUTE_FLOOR, and for an adaptive page also RELATIVE_CUT of the best
    admitted candidate's evidence. The pool holds the best ``max(want, DIVERSITY_POOL)`` by
    score, best first (ties by id).
    """
    import numpy as np

    by_slot = index.by_slot
    vec_slots, p_v = _channel(semantic, p_vec)
    lex_slots, p_l = _channel(lexical)
    slots = _union(vec_slots, lex_slots)
    if not len(slots):
        return []
    p_v, p_l = _aligned(slots, vec_slots, p_v), _aligned(slots, lex_slots, p_l)
    listed = slots.tolist()
    s_vec = -params.W_VEC * np.log1p(-p_v)
    s_lex = -params.W_LEX * np.log1p(-p_l)
    conversations = index.conversations
    shared = conversations.shares(slots, s_vec + s_lex, params.W_NEIGHBOR, params.W_ANSWER)
    own = np.where(conversations.asking(slots), params.QUESTION_DAMP, 1.0)
    s_vec, s_lex = s_vec * own, s_lex * own
    totals = s_vec + s_lex + shared
    if dates:
        dated = np.array([_dated(by_slot[slot], dates) for slot in listed])
    else:
        dated = np.zeros(len(listed), dtype=bool)
    date_prior = np.where(dated, 1.0 + params.W_DATE, 1.0)

    def admitted(i: int) -> bool:
        entry = by_slot[listed[i]]
        return entry.id not in exclude and filters.admits(entry)

    floor = params.ABSOLUTE_FLOOR
    if adaptive:
        best = next((i for i in np.argsort(-totals).tolist() if admitted(i)), None)
        if best is not None:
            floor = max(floor, params.RELATIVE_CUT * float(totals[best]))
    # Priors and age are computed in order of each candidate's best possible score, its
    # evidence x its prior ceiling x its date prior, and only while that could still
    # reach the pool: age only shrinks a score, so once the bound is below the pool's
    # worst score nothing further down can enter. (Scoring all ~600 candidates at 10k
    # memories cost more than the vector search itself; one ceiling for all,
    # 1 + W_IMP + W_OPINION, still let ~135 through.)
    bounds = totals * index.ceilings[slots] * date_prior
    eligible = np.flatnonzero(totals >= floor)
    pool = max(want, params.DIVERSITY_POOL)
    pool_scores: list[float] = []  # min-heap of the pool's scores so far
    hits: list[Hit] = []
    for i in eligible[np.argsort(-bounds[eligible], kind="stable")].tolist():
        if len(pool_scores) >= pool and bounds[i] < pool_scores[0]:
            break
        if not admitted(i):
            continue
        entry = by_slot[listed[i]]
        age = index.share_after(entry, filters.namespaces)
        pvs, pls = float(p_v[i]), float(p_l[i])
        parts = ScoreParts(
            p_vec=pvs,
            p_lex=pls,
            semantic=aged(float(s_vec[i]), age),
            literal=float(s_lex[i]),
            context=float(shared[i]),
            prior=prior(entry.importance, entry.kind, entry.affirmed, now),
            date=float(date_prior[i]),
            age=age,
        )
        score = parts.ranked
        channels = [name for name, p in (("semantic", pvs), ("literal", pls)) if p > 0]
        if shared[i] > 0:
            channels.append("context")
        if dated[i]:
            channels.append("date")
        hits.append(Hit(entry.id, score, float(totals[i]), pvs, pls, channels, parts))
        if len(pool_scores) < pool:
            heapq.heappush(pool_scores, score)
        else:
            heapq.heappushpop(pool_scores, score)
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits[:pool]


def _dated(entry: Entry, dates: tuple[named_dates.Span, ...]) -> bool:
    """Whether a memory's known day (:attr:`Entry.day`) falls inside a span the question names."""
    return any(span.contains(entry.day) for span in dates)
