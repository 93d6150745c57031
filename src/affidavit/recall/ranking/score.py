"""How one question's candidates are scored: meaning first, words and ids as added evidence.

The formulas are in :mod:`affidavit.recall.ranking` (the package docstring); every constant
they use is read from :mod:`.params` at call time. :func:`rank` returns the best candidates
by score, the pool :mod:`.page` then picks the page from.

Three kinds of evidence, each only ever *added* to a memory's relevance:

- meaning: the best window's cosine above :data:`~.params.VEC_FLOOR`;
- words: the share of the question's information (self-information of its informative
  terms) that the memory holds (:class:`LiteralEvidence`), raised to
  :data:`~.params.LEX_POWER` so one shared word out of five is little and most of the
  question's words is much;
- exact terms: an id, port, version, env var, path or host written in the question
  (:func:`exact_terms`) that the memory holds verbatim, weighted by how few memories hold it.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from affidavit.recall import dates as named_dates
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.ranking import params
from affidavit.recall.ranking.channels import KeywordIndex, VectorIndex, query_terms
from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from affidavit.recall.ranking.conversation import Conversations


class Scored(Protocol):
    """What scoring reads of the index (:class:`~.index.RecallIndex`)."""

    @property
    def by_slot(self) -> Mapping[int, Entry]:
        """The indexed entries by slot."""

    conversations: Conversations
    #: Per slot, the entry's importance and whether it is an opinion (:func:`prior_ceilings`).
    importance: npt.NDArray[np.float64]
    opinion: npt.NDArray[np.bool_]


def prior(importance: float, kind: str, affirmed: str | None, now: datetime) -> float:
    """The multiplicative prior: centred importance, plus the opinion recency bonus."""
    value = _importance_prior(importance)
    if kind == MemoryKind.OPINION and affirmed:
        days = max(0.0, (now - _parse_time(affirmed)).total_seconds() / 86400.0)
        value += params.W_OPINION * 2.0 ** (-days / params.OPINION_HALF_LIFE_DAYS)
    return value


def prior_ceilings(
    importance: npt.NDArray[np.float64], opinion: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """The largest :func:`prior` each memory can get: its opinion bonus at age 0 (the same
    arithmetic as :func:`prior`, so a ceiling is never below the prior it bounds)."""
    import numpy as np

    ceilings: npt.NDArray[np.float64] = (
        1.0 + params.W_IMP * (2.0 * np.minimum(1.0, np.maximum(0.0, importance)) - 1.0)
    ) + np.where(opinion, params.W_OPINION, 0.0)
    return ceilings


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

    def shares(self, extra: Iterable[int] | None) -> dict[int, float]:
        """The share of the question's information each record holds (0-1), for the core
        candidates plus ``extra`` slots (``None``: every posting)."""
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
        return {slot: min(1.0, s / self.denominator) for slot, s in raw.items()}

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


#: A written token that may be an exact term: letters and digits joined by ``_ - . : /``.
_TOKEN = re.compile(r"[^\W_](?:[\w.:/-]*[^\W_])?|_\w+", re.UNICODE)


def exact_terms(question: str) -> list[str]:
    """The tokens of a question that name something exactly (lower-cased, distinct).

    A token counts when it holds a digit (``IR-32``, ``8086``, ``v1.4.2``, ``4e7b1d9``), an
    underscore (``FEED_CACHE_TTL``), or joins word pieces with ``-``, ``.``, ``:`` or
    ``/`` (``ic-rota``, ``ch-earshot.pbc.internal``, ``gs://bucket``): ids, ports,
    versions, env vars, hosts and paths, the things an agent looks up by name. A plain word
    ("deploy", "SQL") is never one; the word channel reads those.
    """
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(question):
        token = match.group(0).lower()
        if any(c.isdigit() for c in token) or re.search(r"[_.:/-]", token):
            seen.setdefault(token, None)
    return list(seen)


def _verbatim(token: str) -> re.Pattern[str]:
    """Matches ``token`` in a lower-cased text where it is not part of a longer token."""
    return re.compile(r"(?<![\w])" + re.escape(token) + r"(?![\w]|[.:/-]\w)")


def exact_evidence(
    keyword: KeywordIndex, texts: Mapping[int, Entry], question: str
) -> dict[int, float]:
    """Per record, how specifically it holds an exact term of the question (0-1).

    A term held by one memory is conclusive (1.0); held by ``n``, each gets ``1/n``: an id
    the whole vault repeats names nothing in particular. A record's value is its best term.
    Candidates come from the term's rarest word piece in the keyword index, then the
    verbatim check runs on their text, so ``8086`` never matches ``80861``.
    """
    out: dict[int, float] = {}
    for token in exact_terms(question):
        pieces = [p for p in query_terms(token) if p not in params.FUNCTION_WORDS]
        if not pieces:
            continue
        rarest = min(pieces, key=keyword.df)
        pattern = _verbatim(token)
        holders = [
            slot
            for slot in keyword.postings(rarest)
            if slot in texts and pattern.search(texts[slot].text.lower())
        ]
        for slot in holders:
            out[slot] = max(out.get(slot, 0.0), 1.0 / len(holders))
    return out


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


@dataclass(frozen=True)
class Evidence:
    """One question's evidence per candidate slot, from each channel (absent = none)."""

    cosines: dict[int, float]
    words: dict[int, float]
    exact: dict[int, float]


def _union(*parts: Iterable[int]) -> npt.NDArray[np.int64]:
    import numpy as np

    slots = set().union(*parts)
    return np.array(sorted(slots), dtype=np.int64)


def _spread(slots: npt.NDArray[np.int64], values: dict[int, float]) -> npt.NDArray[np.float64]:
    import numpy as np

    return np.array([values.get(s, 0.0) for s in slots.tolist()], dtype=np.float64)


def relevance(
    cosines: npt.NDArray[np.float64],
    words: npt.NDArray[np.float64],
    exact: npt.NDArray[np.float64],
    turns: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each channel's additive share of relevance: meaning, words, exact terms.

    ``turns`` marks turns of a recorded conversation, whose words weigh W_LEX_TURN.
    """
    import numpy as np

    meaning = np.maximum(cosines - params.VEC_FLOOR, 0.0)
    weight = np.where(turns, params.W_LEX_TURN, params.W_LEX)
    return meaning, weight * words**params.LEX_POWER, params.W_EXACT * exact


def rank(
    index: Scored,
    evidence: Evidence,
    dates: tuple[named_dates.Span, ...],
    filters: Filters,
    now: datetime,
    exclude: frozenset[str],
    want: int,
    adaptive: bool,
) -> list[Hit]:
    """The pool a page is picked from: the best admitted candidates, best first.

    With ``adaptive`` (no ``top_k``), only what the question is about: a candidate
    qualifies by meaning (relevance from its cosine at least ADAPTIVE_FLOOR), by words (at
    least ADAPTIVE_SHARE of the question's information) or by an exact term; nothing when
    none does, else every qualifying candidate whose cosine is within ADAPTIVE_BAND of the
    best cosine or whose relevance reaches RELATIVE_CUT of the best qualifying one.
    Otherwise every candidate may fill the pool. The pool holds the best ``max(want,
    DIVERSITY_POOL)``; equal scores are ordered by cosine, then the newer save, then id.
    """
    import numpy as np

    by_slot = index.by_slot
    slots = _union(evidence.cosines, evidence.words, evidence.exact)
    if not len(slots):
        return []
    listed = slots.tolist()
    cosines = _spread(slots, evidence.cosines)
    has_vector = np.array([s in evidence.cosines for s in listed])
    conversations = index.conversations
    meaning, words, exact = relevance(
        cosines,
        _spread(slots, evidence.words),
        _spread(slots, evidence.exact),
        conversations.threaded(slots),
    )
    own = np.where(conversations.asking(slots), params.QUESTION_DAMP, 1.0)
    meaning, words, exact = meaning * own, words * own, exact * own
    totals = meaning + words + exact
    shared = conversations.shares(slots, totals, params.W_NEIGHBOR, params.W_ANSWER)
    totals = totals + shared
    if dates:
        dated = np.array([_dated(by_slot[slot], dates) for slot in listed])
    else:
        dated = np.zeros(len(listed), dtype=bool)
    date_prior = np.where(dated, 1.0 + params.W_DATE, 1.0)

    def admitted(i: int) -> bool:
        entry = by_slot[listed[i]]
        return entry.id not in exclude and filters.admits(entry)

    eligible = np.arange(len(listed))
    if adaptive:
        qualifies = (
            (meaning >= params.ADAPTIVE_FLOOR)
            | (_spread(slots, evidence.words) >= params.ADAPTIVE_SHARE)
            | (exact > 0)
        )
        order = np.lexsort((-cosines, -totals))
        best = next((i for i in order.tolist() if qualifies[i] and admitted(i)), None)
        if best is None:
            return []  # nothing the question is about
        by_cosine = np.argsort(-cosines, kind="stable").tolist()  # stops at the first admitted
        top_cosine = next(
            (float(cosines[i]) for i in by_cosine if has_vector[i] and admitted(i)), None
        )
        keep = totals >= params.RELATIVE_CUT * totals[best]
        if top_cosine is not None:
            keep |= has_vector & (cosines >= top_cosine - params.ADAPTIVE_BAND)
        eligible = np.flatnonzero(keep & qualifies)
    # Priors are computed in order of each candidate's best possible score, its relevance
    # x its prior ceiling x its date prior, and only while that could still reach the
    # pool: once the bound is below the pool's worst score nothing further down can enter.
    ceilings = prior_ceilings(index.importance[slots], index.opinion[slots])
    bounds = totals * ceilings * date_prior
    pool = max(want, params.DIVERSITY_POOL)
    pool_scores: list[float] = []  # min-heap of the pool's scores so far
    hits: list[Hit] = []
    for i in eligible[np.lexsort((-cosines[eligible], -bounds[eligible]))].tolist():
        if len(pool_scores) >= pool and (bounds[i] < pool_scores[0] or not bounds[i]):
            break  # nothing further down can enter (an empty bound only ties at 0, later)
        if not admitted(i):
            continue
        entry = by_slot[listed[i]]
        parts = ScoreParts(
            cosine=float(cosines[i]),
            semantic=float(meaning[i]),
            literal=float(words[i]),
            exact=float(exact[i]),
            context=float(shared[i]),
            prior=prior(entry.importance, entry.kind, entry.affirmed, now),
            date=float(date_prior[i]),
        )
        channels = [
            name
            for name, value in (("semantic", meaning[i]), ("literal", words[i] + exact[i]))
            if value > 0
        ]
        if shared[i] > 0:
            channels.append("context")
        if dated[i]:
            channels.append("date")
        hits.append(Hit(entry.id, parts.ranked, float(totals[i]), channels, parts, entry.seq))
        if len(pool_scores) < pool:
            heapq.heappush(pool_scores, parts.ranked)
        else:
            heapq.heappushpop(pool_scores, parts.ranked)
    hits.sort(key=order_key)
    return hits[:pool]


def order_key(hit: Hit) -> tuple[float, float, int, str]:
    """The documented order of a page: score, then cosine, then the newer save, then id."""
    return (-hit.score, -hit.parts.cosine, -hit.seq, hit.id)


def _dated(entry: Entry, dates: tuple[named_dates.Span, ...]) -> bool:
    """Whether a memory's known day (:attr:`Entry.day`) falls inside a span the question names."""
    return any(span.contains(entry.day) for span in dates)
