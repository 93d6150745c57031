"""Hybrid recall: every ranking constant, and the search pipeline that uses them.

The core scorer, for every memory (docs/recall.md, "How ranking works"):

- Two channels are independent evidence, combined as a soft OR in log-odds space::

      evidence = -W_VEC * log(1 - p_vec) - W_LEX * log(1 - p_lex)

  ``p_vec`` maps the best-window cosine through fixed bounds (an L2-normalised encoder's
  cosines are comparable across questions; per-query min-max would promote the best hit of
  a hopeless question to certainty), capped below what a conclusive literal match reaches.
  ``p_lex`` is the share of the question's self-information ``I(t) = log((N+1)/df(t))``
  that a record holds, against at least one unique term's worth, so a term unique to one
  memory is near-conclusive and a term in a tenth of the vault is almost nothing.
- Priors multiply, so they reorder matches and never surface a non-match: importance
  centred on 0.5; for an opinion, a recency bonus halving every OPINION_HALF_LIFE_DAYS
  since its last re-affirmation; for a question that names a date
  (:mod:`affidavit.vault.when`), 1 + W_DATE for a memory known to be from then.
- Age is the share of the searched population written after a memory, applied to the
  semantic term in odds (:func:`aged`); imported rows have none.
- The evidence floor (ABSOLUTE_FLOOR) and, for an adaptive page, the relative cut
  (RELATIVE_CUT of the best) read the unaged, unweighted evidence, so a question the vault
  knows nothing about returns nothing, and priors never decide which memories qualify.
- The page is picked from the DIVERSITY_POOL best, discounting a restatement of a memory
  already on it (:mod:`affidavit.vault.diversity`).
- Filters run after ranking; the vector pool widens when they leave too few results, and
  the last widening is exhaustive, so a filter never loses a match behind the pool size.

Conversation structure, only for memories that name a ``thread``
(:mod:`affidavit.vault.conversation`, ADR 55): a turn gains W_NEIGHBOR of the stronger
adjacent turn's evidence and W_ANSWER of the question it replies to; a turn that ends in a
question counts QUESTION_DAMP of its own; one thread's turns are spread over the page
(SAME_THREAD_DECAY). Authored memories get none of it.

Each constant below says what it means and why it has its value. The measurements behind
them, and how a constant may change (a paired-bootstrap gain on the tuning halves of
``benchmarks/agent_memory.py`` and ``benchmarks/locomo.py``), are in docs/recall-tuning.md.
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

# --- channel weights ------------------------------------------------------------------------
#: Weight of the semantic channel: with MiniLM the literal channel is the stronger one on
#: LoCoMo (0.75/0.25 scored recall@5 0.499 against 0.585 before ADR 52), and 0.4/0.6 or
#: 0.5/0.5 gained nothing measurable on the agent-memory tuning half.
W_VEC = 0.3
#: Weight of the literal channel; its ceiling (4.8) stays far above the semantic one (0.64),
#: so a conclusive literal match (a ticket id, a SHA) outranks any paraphrase.
W_LEX = 0.7

# --- semantic channel ---------------------------------------------------------------------
#: Cosine where semantic evidence starts: MiniLM gives unrelated sentences 0.0-0.2, and the
#: LoCoMo figures are flat from 0.15 to 0.35.
VEC_LO = 0.25
#: Cosine read as near-certain: MiniLM's rewordings of one sentence sit above it (0.7 lost
#: recall@5 on LoCoMo and gained nothing on the agent-memory tuning half).
VEC_HI = 0.85
#: Ceiling of p_vec: a cosine says "about the same thing", never "the record you named".
VEC_CAP = 0.88

# --- literal channel ----------------------------------------------------------------------
#: Ceiling of p_lex, reached by a record holding every informative term of the question.
LEX_CAP = 0.999
#: A term in more than this share of records carries no evidence (above 50 records): the
#: LoCoMo figures are flat from 0.1 to 0.3, and 0.2 fetches fewer postings at 100k.
COMMON_SHARE = 0.20
#: Below this many records the share rule cannot tell a common term; every term counts.
COMMON_MIN_RECORDS = 50
#: The rarest terms' postings, up to this many records, create literal candidates; scoring
#: ~4,300 candidates a query cost 27 ms at 100k memories (recall_measures.py).
LEX_CANDIDATE_BUDGET = 1000
#: English function words, and the pieces the tokenizer leaves of possessives and
#: contractions ("Vera's" -> "vera", "s"): no evidence in any vault, and a tiny vault has
#: too few records for the share rule to see that. Dropping the pieces gained recall@5
#: +0.030 [+0.006, +0.061] on the agent-memory tuning half, LoCoMo unchanged.
_FUNCTION_WORDS = """
a an and are as at be been but by can could did do does for from had has have how i if in
is it its me my of on or our she he so than that the their them then there these they this
to was we were what when where which who whom why will with would you your about any all also
s t d ll re ve m
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

# --- conversation structure (rows with a thread only, ADR 55) -----------------------------
#: Share of the stronger adjacent turn's own evidence a turn gains: turns next to each other
#: are about one thing; more crowded the page with one session on LoCoMo.
W_NEIGHBOR = 0.05
#: Share of a question's own evidence its reply gains: the reply holds what the question's
#: words point at ("How long have you been married?" -> "5 years already!"); 0 cost LoCoMo
#: 0.05 recall@5, and 0.4-0.8 are within noise of 0.6.
W_ANSWER = 0.6
#: Own-evidence factor of a turn that ends in a question: it asks rather than states, while
#: it repeats the words of what it asks about (1 and 0.4 both scored lower on LoCoMo).
QUESTION_DAMP = 0.6

# --- priors -------------------------------------------------------------------------------
#: Importance prior, score x (1 + W_IMP * (2 * importance - 1)): reorders near-ties without
#: overturning a clearly better match.
W_IMP = 0.15
#: Opinion recency bonus at age 0: the newest opinion on a subject wins a near-tie.
W_OPINION = 0.30
#: The opinion bonus halves every this many days since the last re-affirmation.
OPINION_HALF_LIFE_DAYS = 30.0
#: Date prior, x (1 + W_DATE) for a memory known to be from a day, month or year the
#: question names: no larger than the opinion bonus, as issue 13 asks of a date (1.5, the
#: earlier value, scored LoCoMo recall@5 +0.012 [+0.006, +0.018] higher).
W_DATE = 0.3
#: Age in memories: the semantic odds halve once the whole searched vault was written after
#: a memory. 0.5 (halving at half the vault) lost the agent-memory tuning half recall@1
#: -0.043 [-0.085, -0.006]: older standalone facts are not less true.
AGE_HALF_LIFE_SHARE = 1.0

# --- cut and pool -------------------------------------------------------------------------
#: An adaptive page keeps hits whose evidence is at least this share of the best's.
RELATIVE_CUT = 0.5
#: No hit below this evidence is returned: about cosine 0.28 alone, or a small literal share
#: alone, so "how to bake sourdough" returns nothing from an ops vault.
ABSOLUTE_FLOOR = 0.04
#: An adaptive page never holds more than this many.
ADAPTIVE_CAP = 20
#: Vector candidates read first, widened POOL_GROWTH-fold up to POOL_WIDENINGS times (the
#: last exhaustive) when filters leave too few: the pool only bounds Python-side work.
POOL_START = 200
POOL_GROWTH = 4
POOL_WIDENINGS = 3

# --- page diversity (ADR 54) --------------------------------------------------------------
#: The page is picked from this many best (or the page size, if larger): picking from more
#: pushed one of the best ten off a ten-result page.
DIVERSITY_POOL = 10
#: A candidate whose cosine c to a memory on the page is above REDUNDANT_FROM counts
#: 1 - W_REDUNDANT * (c - REDUNDANT_FROM) / (1 - REDUNDANT_FROM): a restatement falls
#: behind a different match (0.2-0.4 and 0.4-0.7 scored alike on LoCoMo).
W_REDUNDANT = 0.3
REDUNDANT_FROM = 0.5
#: Each turn of its thread already on the page multiplies a candidate's score by this, so
#: one session does not fill the page (LoCoMo group_hit@5 0.914 -> 0.924 with redundancy).
SAME_THREAD_DECAY = 0.93

# --- store-time similarity (vault/duplicates.py, lifecycle) --------------------------------
#: Cosine above which two memories are "near-identical" for the duplicate rule, which also
#: requires the same content words in order: MiniLM puts rewordings of one sentence above it.
DUPLICATE_COSINE = 0.95
#: A new opinion this close to a live opinion is about the same subject: a conflict.
OPINION_CONFLICT_COSINE = 0.70
#: Without a model, the informative-word overlap (Jaccard) that stands in for each cosine.
DUPLICATE_JACCARD = 0.9
OPINION_CONFLICT_JACCARD = 0.5
#: Nearest memories examined for those decisions.
SIMILAR_POOL = 20


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
        if dates:
            dated = np.array([_dated(by_slot[slot], dates) for slot in listed])
        else:
            dated = np.zeros(len(listed), dtype=bool)
        date_prior = np.where(dated, 1.0 + W_DATE, 1.0)

        def admitted(i: int) -> bool:
            entry = by_slot[listed[i]]
            return entry.id not in exclude and filters.admits(entry)

        floor = ABSOLUTE_FLOOR
        if adaptive:
            best = next((i for i in np.argsort(-totals).tolist() if admitted(i)), None)
            floor = max(floor, RELATIVE_CUT * float(totals[best])) if best is not None else floor
        # Priors and age are computed in order of each candidate's best possible score, its
        # evidence x its prior ceiling x its date prior, and only while that could still
        # reach the pool: age only shrinks a score, so once the bound is below the pool's
        # worst score nothing further down can enter. (Scoring all ~600 candidates at 10k
        # memories cost more than the vector search itself; one ceiling for all,
        # 1 + W_IMP + W_OPINION, still let ~135 through.)
        bounds = totals * self._ceilings[slots] * date_prior
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
            score *= float(date_prior[i])
            pvs, pls = float(p_v[i]), float(p_l[i])
            channels = [name for name, p in (("semantic", pvs), ("literal", pls)) if p > 0]
            if shared[i] > 0:
                channels.append("context")
            if dated[i]:
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
