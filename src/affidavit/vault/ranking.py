"""Hybrid recall: every ranking constant, and the search pipeline that uses them.

The two channels are independent evidence, combined as a soft OR in log-odds space::

    P(relevant) = 1 - (1 - p_vec)(1 - p_lex)
    evidence    = (-W_VEC * log(1 - p_vec) - W_LEX * log(1 - p_lex)) * own + context

- ``p_vec`` maps the best-window cosine through fixed bounds (an L2-normalised encoder's
  cosines are comparable across questions; per-query min-max would promote the best hit of
  a hopeless question to certainty). It is capped below what a conclusive literal match
  reaches: a cosine says "about the same thing", never "the record you named".
- ``p_lex`` is the share of the question's self-information ``I(t) = log((N+1)/df(t))``
  that a record contains, against at least the information of one unique term, so a term
  unique to one memory is near-conclusive and a term in a tenth of the vault is almost
  nothing, whatever its BM25.
- A record that asks a question holds no claim, so its own evidence counts
  :data:`QUESTION_DAMP` of a statement's (``own``).
- Conversation context: a candidate gains a small share of the evidence of the memory
  saved next to it on the same day (:data:`W_NEIGHBOR`), and a larger share
  (:data:`W_ANSWER`) when that memory is the question it replies to: in a conversation the
  reply holds what the question's words point at. Only candidates gain, so a record
  without evidence of its own never surfaces.
- A question that names a day, month or year (:mod:`affidavit.vault.when`) multiplies the
  evidence of candidates discovered inside it by ``1 + W_DATE``; a date alone is never
  evidence.
- Priors multiply, so they reorder matches and never surface a non-match: importance
  centred on the 0.5 default, and for opinions a bonus halving every
  :data:`OPINION_HALF_LIFE_DAYS` since the last re-affirmation.
- Age is the share of the searched population written after a memory, applied to the
  semantic term in odds (:func:`aged`); a literal identifier is not aged, and the relevance
  cut reads the unaged evidence, so recency orders results but never decides which return.
- The cut is relative to the best hit (scores are not comparable between questions) plus an
  absolute floor, so a question the vault knows nothing about returns nothing.
- The page is picked from the DIVERSITY_POOL best by score, discounting a candidate that
  repeats a memory already on the page or comes from the same day (:mod:`diversity`), so
  one conversation or one fact said twice does not crowd out the rest.
- Filters run after ranking; the vector pool widens when they leave too few results, and
  the last widening is exhaustive, so a filter never loses a match behind the pool size.

Each constant's comment names the benchmark figure that justifies it
(``python benchmarks/locomo.py``; ``python benchmarks/vault.py``).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from affidavit.vault import when
from affidavit.vault.conversation import Conversations, grown
from affidavit.vault.diversity import spread_order
from affidavit.vault.index import KeywordIndex, VectorIndex, query_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Figures below: LoCoMo categories 1-4, turn-level recall@5 / recall@10 / session
# group_hit@5 (python benchmarks/locomo.py; one-at-a-time sweeps in docs/recall.md,
# "Tuning"). Final values: see docs/recall.md; BM25 in the same run 0.471 / 0.558 / 0.835.
# A rank-agreement (reciprocal rank) term was removed with the context rules: without it
# the earlier settings scored 0.606 / 0.687 / 0.896, with it 0.602 / 0.684 / 0.897.
# Figures above the page-diversity block were measured without it (final 0.678 / 0.750 /
# 0.914); with it the final values score 0.671 / 0.750 / 0.924 (ADR 54).

# --- channel weights --------------------------------------------------------------------
#: Weight of the semantic channel. 0.75/0.25 (the reference vault's split) gave 0.499 /
#: 0.591 / 0.809 here, 0.4/0.6 gave 0.578 / 0.661 / 0.890, 0.3/0.7 the best 0.585 / 0.668 /
#: 0.896, 0.2/0.8 0.583 / 0.664 / 0.896: with MiniLM the literal channel is the stronger one.
#: With the context rules 0.4/0.6 gave 0.672 / 0.741 / 0.904, 0.2/0.8 0.672 / 0.746 / 0.913.
W_VEC = 0.3
#: Weight of the literal channel. Its ceiling W_LEX * -log(1 - LEX_CAP) = 4.8 stays above the
#: semantic ceiling W_VEC * -log(1 - VEC_CAP) = 0.64, so a conclusive literal match always
#: outranks a paraphrase (test_ranking: literal unique term beats any paraphrase).
W_LEX = 0.7

# --- semantic channel -------------------------------------------------------------------
#: Cosine at which semantic evidence starts. 0.15 gave 0.587 / 0.669, 0.25 0.585 / 0.668,
#: 0.35 0.584 / 0.664: flat, so the value that keeps the "unrelated question returns nothing"
#: test passing with margin (sourdough vs ops memories: MiniLM cosines 0.0-0.2) wins.
#: With the context rules 0.15 / 0.35 gave 0.679 / 0.744 / 0.909 and 0.670 / 0.739 / 0.910.
VEC_LO = 0.25
#: Cosine treated as near-certain. 0.7 lost 0.013 recall@5 (0.572) against 0.85.
VEC_HI = 0.85
#: Ceiling of p_vec: a cosine is similarity, never identity (see W_LEX for the ordering).
VEC_CAP = 0.88

# --- literal channel --------------------------------------------------------------------
#: Ceiling of p_lex: a record holding every informative term of the question.
LEX_CAP = 0.999
#: A term in more than this share of records is dropped from the literal channel. 0.1 / 0.3
#: gave 0.673 / 0.748 / 0.911 and 0.679 / 0.750 / 0.914 (before the context rules, 0.03
#: cost 0.016 recall@5); 0.3 equals 0.2 but fetches more postings at 100k records
#: (benchmarks/vault.py search p95).
COMMON_SHARE = 0.20
#: The share rule only applies from this many records; below it every term counts.
COMMON_MIN_RECORDS = 50
#: Postings of the rarest terms, up to this many records, create literal candidates; more
#: frequent terms only add evidence to records already in play (until the exhaustive pool).
#: benchmarks/recall_measures.py at 100k: scoring ~4,300 candidates a query cost 27 ms of
#: a 55 ms search; LoCoMo's conversations hold <= 700 turns, so its figures are unchanged.
LEX_CANDIDATE_BUDGET = 1000
#: English function words: they carry no evidence about a memory in any vault, and a tiny
#: vault has too few records for the share rule to see that (the "unrelated question returns
#: nothing" test fails on a 5-memory vault without this list).
_FUNCTION_WORDS = """
a an and are as at be been but by can could did do does for from had has have how i if in
is it its me my of on or our she he so than that the their them then there these they this
to was we were what when where which who whom why will with would you your about any all also
s t d ll re ve m
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

# --- conversation context ---------------------------------------------------------------
# Each row below changes one constant from the final values (0.678 / 0.750 / 0.914), with
# the in-process sweep over the same ranking code and cached vectors (docs/recall.md).
#: Share of the stronger adjacent candidate's own evidence (the memory saved just before or
#: after, same namespace, same ``discovered`` day) that a candidate gains: memories written
#: next to each other are often about one thing. 0 / 0.1 / 0.2 gave 0.673 / 0.748 / 0.916,
#: 0.680 / 0.751 / 0.909, 0.678 / 0.753 / 0.907: more crowds the page with one session.
#: (Before W_ANSWER, 0 -> 0.1 had lifted 0.585 -> 0.602 recall@5 on its own.)
W_NEIGHBOR = 0.05
#: Share of a question's own evidence that the memory saved right after it (same namespace,
#: same day) gains: the reply holds what the question's words point at ("How long have you
#: been married?" -> "5 years already!"). 0 / 0.2 / 0.4 / 0.8 gave recall@5 0.627 / 0.661 /
#: 0.671 / 0.676 and recall@10 0.710 / 0.734 / 0.747 / 0.744.
W_ANSWER = 0.6
#: Own-evidence factor of a record that ends in a question mark: it asks rather than states,
#: repeating the words of what it asks about. 1 / 0.8 / 0.4 gave 0.672 / 0.746 / 0.910,
#: 0.679 / 0.750 / 0.912, 0.672 / 0.739 / 0.910.
QUESTION_DAMP = 0.6
#: A candidate discovered (else saved) inside a day, month or year the question names counts
#: its evidence (1 + W_DATE) times; 13% of LoCoMo's questions name one. 0 / 0.5 / 1 / 3 gave
#: 0.656 / 0.730 / 0.893, 0.669 / 0.745 / 0.908, 0.677 / 0.750 / 0.913, 0.678 / 0.753 /
#: 0.912.
W_DATE = 0.3

# --- priors -----------------------------------------------------------------------------
#: Importance prior: final *= 1 + W_IMP * (2 * importance - 1). 0.15 reorders near-ties
#: (test_ranking: importance reorders) without overturning a clearly better match.
W_IMP = 0.15
#: Opinion recency bonus at age 0 (from the last re-affirmation).
W_OPINION = 0.30
#: The opinion bonus halves every this many days, so the newest opinion on a subject wins.
OPINION_HALF_LIFE_DAYS = 30.0
#: Age in memories: the semantic odds halve when this share of the vault was written after a
#: memory. Imported rows (a pack, a migration, the benchmark corpus) arrive at one instant
#: and have no age in this sense, so they neither age nor count in the population: on
#: LoCoMo, aging imported turns by import order cost 0.23 semantic-only recall@5.
AGE_HALF_LIFE_SHARE = 1.0

# --- cut and pool -----------------------------------------------------------------------
#: Adaptive results keep hits whose unaged evidence is at least this share of the best.
RELATIVE_CUT = 0.5
#: No hit below this unaged evidence is ever returned (the "nothing relevant" floor):
#: equals p_vec ~ 0.05 (cosine ~0.28) alone or a small literal share alone.
ABSOLUTE_FLOOR = 0.04
#: Adaptive results never exceed this many.
ADAPTIVE_CAP = 20
#: Vector candidates considered first; widened POOL_GROWTH-fold up to POOL_WIDENINGS times,
#: the last time exhaustive (test_ranking: filters never lose matches behind the pool).
#: The pool only bounds Python-side work after one BLAS product over all rows, so its size
#: shows in benchmarks/vault.py search p50 only through that per-candidate loop.
POOL_START = 200
POOL_GROWTH = 4
POOL_WIDENINGS = 3

# --- page diversity (ADR 54) ------------------------------------------------------------
#: The page is picked from this many best-scored candidates (or the page size, if larger),
#: so the first five of a ten-result page are also the five-result page. Picking from the
#: best 15-30 instead lost recall@10 (0.749), since a diversified pick then pushes one of
#: the best ten out; within the ten, recall@10 is unchanged by construction.
DIVERSITY_POOL = 10
#: A candidate whose cosine to a memory already on the page is c > REDUNDANT_FROM counts
#: 1 - W_REDUNDANT * (c - REDUNDANT_FROM) / (1 - REDUNDANT_FROM) of its score. Alone,
#: 0.3 / 0.5 gave 0.680 / 0.750 / 0.919 (0.2: 0.914, 0.4: 0.918, from 0.6: 0.916).
W_REDUNDANT = 0.3
REDUNDANT_FROM = 0.5
#: Each memory already on the page from the same namespace and day multiplies a candidate's
#: score by this. Alone, 0.93 gave 0.666 / 0.750 / 0.918 and 0.9 0.661 / 0.750 / 0.921
#: (a steady trade of recall@5 for sessions covered). With the redundancy discount, 0.95
#: gave 0.674 / 0.750 / 0.922, 0.93 0.671 / 0.750 / 0.924, 0.9 0.667 / 0.750 / 0.926.
SAME_THREAD_DECAY = 0.93

# --- store-time similarity (lifecycle) --------------------------------------------------
#: A new memory at least this close (cosine) to a live one in its namespace and kind is a
#: near-duplicate: the store returns the existing id. MiniLM puts rewordings of one sentence
#: (case, punctuation, a word order swap) at 0.95+ and distinct facts about one subject
#: below 0.9 (tests/vault/test_memory_lifecycle.py checks both sides).
DUPLICATE_COSINE = 0.95
#: A new opinion at least this close to a live opinion is about the same subject: the store
#: returns the conflicting records instead of inserting (unless ``supersedes`` is given).
OPINION_CONFLICT_COSINE = 0.70
#: Without a model, the same two decisions use the overlap of informative words (Jaccard).
DUPLICATE_JACCARD = 0.9
#: Candidates examined for those two decisions (nearest by cosine, or best literal share).
SIMILAR_POOL = 20
OPINION_CONFLICT_JACCARD = 0.5


@dataclass
class Entry:
    """What ranking needs to know about one searchable memory (plaintext, RAM only)."""

    id: str
    text: str
    seq: int
    namespace: str = "default"
    tags: frozenset[str] = frozenset()
    saved_at: str = ""
    discovered: str | None = None
    importance: float = 0.5
    kind: str = "fact"
    affirmed: str | None = None
    ages: bool = True
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
        return self.saved_at[:10] or None if self.ages else None


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
            )
        )

    def admits(self, e: Entry) -> bool:
        """Whether one entry passes every filter (``until`` bounds are inclusive by day)."""
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


@dataclass
class Hit:
    """One ranked result with the evidence behind its score."""

    id: str
    score: float
    evidence: float
    p_vec: float
    p_lex: float
    cosine: float | None = None
    channels: list[str] = field(default_factory=list)


def p_vec(cosines: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Best-window cosines as probabilities of relevance, through fixed bounds and the cap."""
    import numpy as np

    return np.clip((cosines - VEC_LO) / (VEC_HI - VEC_LO), 0.0, VEC_CAP)


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
    factor = 2.0 ** (-share_after / AGE_HALF_LIFE_SHARE)
    return math.log1p(factor * math.expm1(s))


def prior(importance: float, kind: str, affirmed: str | None, now: datetime) -> float:
    """The multiplicative prior: centred importance, plus the opinion recency bonus."""
    value = _importance_prior(importance)
    if kind == "opinion" and affirmed:
        days = max(0.0, (now - _parse_time(affirmed)).total_seconds() / 86400.0)
        value += W_OPINION * 2.0 ** (-days / OPINION_HALF_LIFE_DAYS)
    return value


def prior_ceiling(importance: float, kind: str) -> float:
    """The largest :func:`prior` a memory can get: its opinion bonus at age 0."""
    return _importance_prior(importance) + (W_OPINION if kind == "opinion" else 0.0)


def _importance_prior(importance: float) -> float:
    return 1.0 + W_IMP * (2.0 * min(1.0, max(0.0, importance)) - 1.0)


def _parse_time(value: str) -> datetime:
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


@dataclass
class _Literal:
    """Literal evidence for one question.

    The rarest terms' postings (up to LEX_CANDIDATE_BUDGET records) create candidates; more
    frequent terms only add their information to records already in play, unless the search
    is exhaustive (the last pool widening), where every posting counts.
    """

    core: dict[int, float]
    boosts: list[tuple[set[int], float]]
    denominator: float

    def p_lex(self, extra: Iterable[int] | None) -> dict[int, float]:
        """p_lex for the core candidates plus ``extra`` slots (``None``: every posting)."""
        raw = dict(self.core)
        if extra is None:
            extra = set().union(*(members for members, _ in self.boosts))
        for slot in extra:
            if slot not in raw:
                got = sum(info for members, info in self.boosts if slot in members)
                if got:
                    raw[slot] = got
        return {slot: min(LEX_CAP, s / self.denominator) for slot, s in raw.items()}


class RecallIndex:
    """The searchable memories of one vault view: entries, keyword index, vector index."""

    def __init__(self) -> None:
        import numpy as np

        self.keyword = KeywordIndex()
        self.vector = VectorIndex()
        self._entries: dict[str, Entry] = {}
        self._by_slot: dict[int, Entry] = {}
        self._next_slot = 0
        # Kept up to date one entry at a time: rebuilding it after every store cost a sort
        # over the whole vault on the next search (~20 ms at 100k memories).
        self._seqs: dict[frozenset[str] | None, list[int]] = {}
        self._conversations = Conversations()
        #: Per slot, the entry's :func:`prior_ceiling` (the bound that lets ranking stop early).
        self._ceilings: npt.NDArray[np.float64] = np.zeros(0)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._entries

    def entry(self, item_id: str) -> Entry | None:
        """The indexed entry for an id, if it is searchable."""
        return self._entries.get(item_id)

    def entry_at(self, slot: int) -> Entry | None:
        """The entry indexed under a slot (slots come from the channel searches)."""
        return self._by_slot.get(slot)

    def lexical_candidates(self, text: str, limit: int) -> list[tuple[int, Entry]]:
        """The records holding most of a text's information (store-time checks, no model)."""
        scores = self._lexical(text).p_lex(())
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:limit]
        return [(slot, self._by_slot[slot]) for slot in best]

    def entries(self) -> Iterable[Entry]:
        """Every searchable entry (no order promised)."""
        return self._entries.values()

    def add_many(self, items: Sequence[tuple[Entry, npt.NDArray[np.float32] | None]]) -> None:
        """Index entries with their embedding windows (``None`` = keyword only)."""
        texts: list[tuple[int, str]] = []
        vectors: list[tuple[int, npt.NDArray[np.float32]]] = []
        for entry, windows in items:
            if entry.id in self._entries:
                self.remove(entry.id)
            entry.slot = self._next_slot
            self._next_slot += 1
            self._entries[entry.id] = entry
            self._by_slot[entry.slot] = entry
            self._conversations.link(entry)
            self._ceilings = grown(self._ceilings, entry.slot, 0.0)
            self._ceilings[entry.slot] = prior_ceiling(entry.importance, entry.kind)
            self._count_age(entry, +1)
            texts.append((entry.slot, entry.text))
            if windows is not None and len(windows):
                vectors.append((entry.slot, windows))
        self.keyword.add_many(texts)
        self.vector.add_many(vectors)

    def add(self, entry: Entry, windows: npt.NDArray[np.float32] | None) -> None:
        """Index one entry."""
        self.add_many([(entry, windows)])

    def remove(self, item_id: str) -> None:
        """Drop an entry from both channels (no-op if absent)."""
        entry = self._entries.pop(item_id, None)
        if entry is None:
            return
        del self._by_slot[entry.slot]
        self._conversations.unlink(entry.slot)
        self._count_age(entry, -1)
        self.keyword.remove(entry.slot)
        self.vector.remove(entry.slot)

    def _count_age(self, entry: Entry, sign: int) -> None:
        """Add or drop an entry in the cached age populations it belongs to."""
        if not entry.ages:
            return
        for namespaces, seqs in self._seqs.items():
            if namespaces is None or entry.namespace in namespaces:
                if sign > 0:
                    bisect.insort(seqs, entry.seq)
                else:
                    at = bisect.bisect_left(seqs, entry.seq)
                    if at < len(seqs) and seqs[at] == entry.seq:
                        del seqs[at]

    def _share_after(self, entry: Entry, namespaces: frozenset[str] | None) -> float:
        seqs = self._seqs.get(namespaces)
        if seqs is None:
            seqs = sorted(
                e.seq
                for e in self._entries.values()
                if e.ages and (namespaces is None or e.namespace in namespaces)
            )
            self._seqs[namespaces] = seqs
        if not seqs or not entry.ages:
            return 0.0
        return (len(seqs) - bisect.bisect_right(seqs, entry.seq)) / len(seqs)

    def _lexical(self, question: str) -> _Literal:
        """The question's literal evidence: per-term postings weighted by self-information."""
        n = len(self.keyword)
        terms: list[tuple[int, float, str]] = []
        info_total = 0.0
        for term in query_terms(question) if n else []:
            if term in FUNCTION_WORDS:
                continue
            df = self.keyword.df(term)
            if n >= COMMON_MIN_RECORDS and df > COMMON_SHARE * n:
                continue
            info = math.log((n + 1) / max(df, 1))
            info_total += info
            if df:
                terms.append((df, info, term))
        terms.sort()
        core: dict[int, float] = {}
        boosts: list[tuple[set[int], float]] = []
        fetched = 0
        for i, (df, info, term) in enumerate(terms):
            postings = self.keyword.postings(term)
            if i == 0 or fetched + df <= LEX_CANDIDATE_BUDGET:
                fetched += df
                for slot in postings:
                    core[slot] = core.get(slot, 0.0) + info
            else:
                boosts.append((set(postings), info))
        for slot in core:
            core[slot] += sum(info for members, info in boosts if slot in members)
        return _Literal(core, boosts, max(info_total, math.log(n + 1)))

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

        ``query_vector`` may be a callable that returns it: it is called after the literal
        channel is read, so a caller can embed the question meanwhile.
        """
        filters = filters or Filters()
        now = now or datetime.now(UTC)
        want = top_k if top_k is not None else ADAPTIVE_CAP
        literal = self._lexical(question)
        dates = when.spans(question)
        if callable(query_vector):
            query_vector = query_vector()
        pool: int | None = POOL_START
        hits: list[Hit] = []
        for attempt in range(POOL_WIDENINGS + 1):
            if attempt == POOL_WIDENINGS:
                pool = None
            semantic = self.vector.search(query_vector, pool) if query_vector is not None else {}
            exhausted = pool is None or query_vector is None or pool >= len(self.vector)
            lexical = literal.p_lex(None if exhausted else semantic.keys())
            hits = self._rank(semantic, lexical, dates, filters, now, exclude, want, top_k is None)
            if pool is None or len(hits) >= want or exhausted or not filters.active():
                break
            pool = pool * POOL_GROWTH
        return hits

    def _rank(
        self,
        semantic: dict[int, float],
        lexical: dict[int, float],
        dates: tuple[when.Span, ...],
        filters: Filters,
        now: datetime,
        exclude: frozenset[str],
        want: int,
        adaptive: bool,
    ) -> list[Hit]:
        """The page: ``want`` of the best admitted candidates, above the evidence floor.

        The floor is ABSOLUTE_FLOOR, and for an adaptive page also RELATIVE_CUT of the best
        admitted candidate's evidence. The page is picked from the best
        ``max(want, DIVERSITY_POOL)`` by score (:meth:`_spread`).
        """
        import numpy as np

        by_slot = self._by_slot
        vec_slots, p_v = _channel(semantic, p_vec)
        lex_slots, p_l = _channel(lexical)
        slots = _union(vec_slots, lex_slots)
        if not len(slots):
            return []
        p_v, p_l = _aligned(slots, vec_slots, p_v), _aligned(slots, lex_slots, p_l)
        listed = slots.tolist()
        s_vec = -W_VEC * np.log1p(-p_v)
        s_lex = -W_LEX * np.log1p(-p_l)
        shared = self._conversations.shares(slots, s_vec + s_lex, W_NEIGHBOR, W_ANSWER)
        own = np.where(self._conversations.asking(slots), QUESTION_DAMP, 1.0)
        s_vec, s_lex = s_vec * own, s_lex * own
        totals = s_vec + s_lex + shared
        dated = np.array([_dated(by_slot[slot], dates) for slot in listed]) if dates else None
        when_prior = np.where(dated, 1.0 + W_DATE, 1.0) if dated is not None else None

        def admitted(i: int) -> bool:
            entry = by_slot[listed[i]]
            return entry.id not in exclude and filters.admits(entry)

        floor = ABSOLUTE_FLOOR
        if adaptive:
            best = next((i for i in np.argsort(-totals).tolist() if admitted(i)), None)
            floor = max(floor, RELATIVE_CUT * float(totals[best])) if best is not None else floor
        # Priors and age are computed in order of each candidate's best possible score, its
        # evidence x its prior ceiling, and only while that could still reach the pool: age
        # only shrinks a score, so once the bound is below the pool's worst score nothing
        # further down can enter. (Scoring all ~600 candidates at 10k memories cost more
        # than the vector search itself; one ceiling for all, 1 + W_IMP + W_OPINION, still
        # let ~135 through.)
        bounds = totals * self._ceilings[slots]
        if when_prior is not None:
            bounds = bounds * when_prior
        eligible = np.flatnonzero(totals >= floor)
        pool = max(want, DIVERSITY_POOL)
        pool_scores: list[float] = []  # min-heap of the pool's scores so far
        hits: list[Hit] = []
        for i in eligible[np.argsort(-bounds[eligible], kind="stable")].tolist():
            if len(pool_scores) >= pool and bounds[i] < pool_scores[0]:
                break
            if not admitted(i):
                continue
            entry = by_slot[listed[i]]
            age = self._share_after(entry, filters.namespaces)
            score = (aged(float(s_vec[i]), age) + float(s_lex[i] + shared[i])) * prior(
                entry.importance, entry.kind, entry.affirmed, now
            )
            if when_prior is not None:
                score *= float(when_prior[i])
            pvs, pls = float(p_v[i]), float(p_l[i])
            channels = [name for name, p in (("semantic", pvs), ("literal", pls)) if p > 0]
            if shared[i] > 0:
                channels.append("context")
            if dated is not None and dated[i]:
                channels.append("date")
            hits.append(
                Hit(entry.id, score, float(totals[i]), pvs, pls, semantic.get(listed[i]), channels)
            )
            if len(pool_scores) < pool:
                heapq.heappush(pool_scores, score)
            else:
                heapq.heappushpop(pool_scores, score)
        hits.sort(key=lambda h: (-h.score, h.id))
        return self._spread(hits[:pool], want)

    def _spread(self, best: list[Hit], want: int) -> list[Hit]:
        """``want`` of the best hits, discounted for repeating the page (vault/diversity.py)."""
        if len(best) < 2:
            return best[:want]
        entries = [self._entries[h.id] for h in best]
        similarity = self.vector.similarity([e.slot for e in entries])
        threads = [(e.namespace, e.thread) if e.thread is not None else None for e in entries]
        picks = spread_order(
            [h.score for h in best],
            similarity,
            threads,
            want,
            redundancy_weight=W_REDUNDANT,
            redundancy_from=REDUNDANT_FROM,
            same_thread_decay=SAME_THREAD_DECAY,
        )
        for i, score in picks:  # the hits were made by this search: no one else holds them
            best[i].score = score
        return [best[i] for i, _ in picks]

    def bm25(self, question: str, limit: int) -> list[str]:
        """The plain BM25 baseline over the same records, as ids (benchmarks only)."""
        return [self._by_slot[s].id for s, _ in self.keyword.bm25(question, limit)]


def _dated(entry: Entry, dates: tuple[when.Span, ...]) -> bool:
    """Whether a memory's known day (:attr:`Entry.day`) falls inside a span the question names."""
    return any(span.contains(entry.day) for span in dates)
