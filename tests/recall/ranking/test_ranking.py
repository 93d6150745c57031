"""Ranking as properties, not fixed numbers (issue 4, Tests)."""

from __future__ import annotations

import numpy as np
import pytest

from affidavit.recall.memory import Memory
from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import Entry, Filters, Hit, RecallIndex, score
from affidavit.recall.ranking import params as ranking
from affidavit.recall.ranking.params import ADAPTIVE_CAP, RELATIVE_CUT
from tests.recall import _recall_fixtures as fx
from tests.recall._recall_fixtures import store

memory = fx.memory
keyword_memory = fx.keyword_memory

PARAPHRASES = [
    "The flaky integration test is tracked in a ticket",
    "We keep a ticket open for the flaky integration test",
    "A ticket tracks why the integration test is flaky",
    "The integration test flakes and there is a ticket for it",
    "Flaky integration tests get a tracking ticket",
]


def ids(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


def _crowd(m: Memory, texts: list[str]) -> None:
    """Verbatim rows (imports skip near-duplicate folding, so every paraphrase stays)."""
    m.import_rows([{"id": f"p{i}", "text": t} for i, t in enumerate(texts)])


def test_literal_match_on_a_unique_term_beats_any_paraphrase(memory: Memory) -> None:
    _crowd(memory, PARAPHRASES)
    target = store(memory, "Ticket ZX-4471 is about the integration test")
    result = memory.search("which ticket tracks the flaky integration test ZX-4471")
    assert ids(result)[0] == target
    hit = result["results"][0]
    assert "literal" in hit["channels"]
    # without the identifier, the paraphrases are what the question is about
    plain = ids(memory.search("which ticket tracks the flaky integration test", top_k=3))
    assert set(plain) <= {f"p{i}" for i in range(len(PARAPHRASES))} | {target}
    assert len(set(plain) - {target}) >= 2


RANIA = [  # imported (no age), the answer first: p0
    "Rania reports to Leon",
    "Rania is based in Montreal",
    "Rania's dog is called Biscuit",
    "Rania prefers tea over coffee",
]
LUNCHES = [f"Team lunch number {i} was at the noodle place" for i in range(10)]


def test_a_word_that_only_shares_a_derivation_with_the_question_is_not_its_word(
    memory: Memory,
) -> None:
    # Porter's stem joined "manager" and "managed": the account memory then held every
    # informative term of the question and outranked the answer
    _crowd(memory, [*RANIA, "Ironbark Health's account is managed by Rania", *LUNCHES])
    assert ids(memory.search("Who is Rania's manager?"))[0] == "p0"


def test_a_question_word_whose_records_are_about_something_else_is_no_evidence(
    memory: Memory,
) -> None:
    # "manager" is in one memory, about someone else entirely (cosine 0.25 against the
    # answer's 0.66): on its rare word alone it outranked every memory about Rania
    _crowd(memory, [*RANIA, "Aiko joined the security team as an engineering manager", *LUNCHES])
    found = ids(memory.search("Who is Rania's manager?"))
    assert found[0] == "p0" and "p4" not in found[:3]


def test_a_lone_keyword_still_finds_a_memory_the_model_barely_reads(memory: Memory) -> None:
    # a URL dilutes the embedding (cosine 0.14 to "grafana"); nothing else is closer, so
    # the word is in the question's sense and the literal match stands
    target = store(
        memory,
        "Latency dashboard for ledger: "
        "https://grafana.acme.internal/d/0e66c6be/latency?orgId=1&var-service=ledger",
    )
    _crowd(memory, RANIA + LUNCHES)
    assert ids(memory.search("grafana"))[:1] == [target]


def test_importance_reorders_equal_evidence() -> None:
    rng = np.random.default_rng(5)
    v = rng.standard_normal((1, DIM)).astype(np.float32)
    v /= np.linalg.norm(v)
    index = RecallIndex()
    index.add_many(
        [
            (Entry("low", "x", seq=1, importance=0.1), v.copy()),
            (Entry("high", "x", seq=1, importance=1.0), v.copy()),
        ]
    )
    assert [h.id for h in index.search("", v[0])] == ["high", "low"]


def test_importance_never_surfaces_a_non_match(memory: Memory) -> None:
    answer = store(memory, "The staging database runs PostgreSQL 16", importance=0.1)
    loud = store(memory, "My favourite colour is teal", importance=1.0)
    store(memory, "Alice owns the billing service", importance=1.0)
    found = memory.search("which PostgreSQL version does staging run", top_k=5)["results"]
    assert found[0]["id"] == answer
    assert next(r for r in found if r["id"] == loud)["score"] == 0  # importance times nothing
    assert ids(memory.search("which PostgreSQL version does staging run")) == [answer]


def test_an_unrelated_question_returns_nothing(memory: Memory) -> None:
    for text in [*PARAPHRASES, "Alice owns the billing service", "Deploys happen on Fridays"]:
        store(memory, text)
    assert ids(memory.search("how to bake sourdough bread at home")) == []
    assert ids(memory.search("who owns billing"))  # the vault does answer real questions


def test_unrelated_question_returns_nothing_without_a_model(keyword_memory: Memory) -> None:
    for text in ["Alice owns the billing service", "Deploys happen on Fridays"]:
        store(keyword_memory, text)
    assert ids(keyword_memory.search("what is the best sourdough recipe")) == []
    found = keyword_memory.search("when do deploys happen")
    assert not found["semantic"] and len(ids(found)) == 1


def test_adaptive_results_cut_relative_to_the_best(memory: Memory) -> None:
    target = store(memory, "The VPN gateway address is vpn.example.net")
    _crowd(memory, [f"Team lunch number {i} was at the noodle place" for i in range(8)])
    adaptive = ids(memory.search("what is the VPN gateway address"))
    assert adaptive[0] == target and len(adaptive) < 5
    assert len(ids(memory.search("what is the VPN gateway address", top_k=3))) <= 3


def _synthetic(n_crowd: int, n_target: int) -> tuple[RecallIndex, np.ndarray, set[str]]:
    """A crowd in namespace 'a' closer to the query than every target in namespace 'b'."""
    rng = np.random.default_rng(7)
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)

    def around(cos: float) -> np.ndarray:
        noise = rng.standard_normal(DIM).astype(np.float32)
        noise -= (noise @ q) * q
        noise /= np.linalg.norm(noise)
        v = cos * q + np.sqrt(1 - cos * cos) * noise
        return (v / np.linalg.norm(v)).reshape(1, DIM)

    index = RecallIndex()
    items = [(Entry(f"a{i}", "crowd", seq=i, namespace="a"), around(0.8)) for i in range(n_crowd)]
    targets = {f"b{i}" for i in range(n_target)}
    items += [
        (Entry(f"b{i}", "target", seq=n_crowd + i, namespace="b"), around(0.6))
        for i in range(n_target)
    ]
    index.add_many(items)
    return index, q, targets


def test_filters_never_lose_matches_behind_the_pool() -> None:
    crowd = ranking.POOL_START * ranking.POOL_GROWTH ** (ranking.POOL_WIDENINGS - 1) + 50
    index, q, targets = _synthetic(crowd, 5)
    unfiltered = {h.id for h in index.search("", q, top_k=ranking.POOL_START)}
    assert not unfiltered & targets  # they sit past every pool but the exhaustive one
    hits = index.search("", q, top_k=len(targets), filters=Filters(namespaces=frozenset({"b"})))
    assert {h.id for h in hits} == targets


def test_the_kind_filter_fills_the_page_from_behind_the_facts() -> None:
    index = RecallIndex()
    index.add_many(
        [(Entry(f"fact{i}", f"kestrel deploy step {i}", seq=i), None) for i in range(30)]
        + [(Entry("opinion", "kestrel feels slow", seq=40, kind="opinion"), None)]
        + [(Entry(f"f{i}", f"lunch menu item {i}", seq=100 + i), None) for i in range(200)]
    )
    assert "opinion" not in {h.id for h in index.search("kestrel deploy", None, top_k=10)}
    hits = index.search("kestrel deploy", None, top_k=3, filters=Filters(kind="opinion"))
    assert [h.id for h in hits] == ["opinion"]


def test_an_older_fact_keeps_its_rank_and_age_only_breaks_ties() -> None:
    # issue 24: memories saved earlier in one sitting ranked below later ones
    rng = np.random.default_rng(3)
    v = rng.standard_normal((1, DIM)).astype(np.float32)
    v /= np.linalg.norm(v)
    near = 0.9 * v + 0.1 * rng.standard_normal((1, DIM)).astype(np.float32)
    near /= np.linalg.norm(near)
    index = RecallIndex()
    index.add_many([(Entry("old", "x", seq=1), v.copy()), (Entry("new", "x", seq=2), near)])
    index.add_many([(Entry(f"f{i}", "filler", seq=3 + i), -v.copy()) for i in range(20)])
    assert [h.id for h in index.search("", v[0], top_k=2)] == ["old", "new"]
    index.add_many([(Entry("twin", "x", seq=50), v.copy())])  # equal in every channel
    assert [h.id for h in index.search("", v[0], top_k=3)] == ["twin", "old", "new"]


def test_opinion_recency_prior_favours_the_newer_affirmation() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 6, 1, tzinfo=UTC)
    fresh = score.prior(0.5, "opinion", "2026-05-31T00:00:00Z", now)
    stale = score.prior(0.5, "opinion", "2026-01-01T00:00:00Z", now)
    fact = score.prior(0.5, "fact", None, now)
    assert fresh > stale > fact == 1.0
    assert score.prior(2.0, "fact", None, now) == score.prior(1.0, "fact", None, now)


def test_filters_never_lose_literal_matches_behind_the_candidate_budget() -> None:
    n_frequent = ranking.LEX_CANDIDATE_BUDGET + 100
    items = [(Entry(f"r{i}", f"zeta record {i}", seq=i), None) for i in range(5)]
    items += [
        (Entry(f"f{i}", f"alpha note {i}", seq=10 + i, namespace="b" if i < 3 else "a"), None)
        for i in range(n_frequent)
    ]
    items += [(Entry(f"x{i}", f"filler words {i}", seq=20000 + i), None) for i in range(10000)]
    index = RecallIndex()
    index.add_many(items)
    hits = index.search("alpha zeta", None, top_k=3, filters=Filters(namespaces=frozenset({"b"})))
    assert {h.id for h in hits if h.score > 0} == {"f0", "f1", "f2"}
    found = index.search("zeta", None, top_k=10)
    assert {h.id for h in found if h.score > 0} == {f"r{i}" for i in range(5)}
    assert len(found) == 10  # top_k means top_k: memories no channel reached fill the rest


def _conversation(rows: list[tuple[str, str, str]]) -> RecallIndex:
    """Keyword-only turns (id, thread, text) of imported chats, saved in list order.

    The thread "-" stands for none: a standalone memory.
    """
    index = RecallIndex()
    index.add_many(
        [
            (Entry(i, text, seq=n, thread=None if thread == "-" else thread, authored=False), None)
            for n, (i, thread, text) in enumerate(rows)
        ]
    )
    return index


FILLER = [(f"f{n}", "chat", f"lunch menu {word}") for n, word in enumerate("abcdef")]


def _near_and_far(strong: str = "chat", rest: str = "chat") -> RecallIndex:
    """A strong hit, a record saved right after it, filler, and that record's twin far away.

    "z-next" and "a-far" hold the same words; only the turn order tells them apart (the id
    tie-break alone would put "a-far" first). ``strong`` and ``rest`` are threads.
    """
    return _conversation(
        [
            ("strong", strong, "kestrel migration plan agreed"),
            ("z-next", rest, "the window opens at noon"),
            *FILLER,
            ("a-far", rest, "the window opens at noon"),
        ]
    )


def test_a_record_saved_next_to_a_strong_hit_outranks_its_equal_elsewhere() -> None:
    index = _near_and_far()
    found = [h.id for h in index.search("kestrel window opens", None, top_k=3)]
    assert set(found) == {"strong", "z-next", "a-far"}
    assert found.index("z-next") < found.index("a-far")


def test_locality_never_surfaces_a_record_without_evidence_of_its_own() -> None:
    index = _conversation([("strong", "chat", "kestrel migration plan agreed"), *FILLER[:2]])
    assert [h.id for h in index.search("kestrel", None, top_k=5) if h.score] == ["strong"]
    assert [h.id for h in index.search("kestrel", None)] == ["strong"]


def test_locality_stays_within_a_thread() -> None:
    index = _near_and_far(strong="work", rest="home")
    found = [h.id for h in index.search("kestrel window opens", None, top_k=3)]
    assert found.index("a-far") < found.index("z-next")


def test_memories_without_a_thread_have_no_locality() -> None:
    index = _near_and_far(strong="-", rest="-")
    found = [h.id for h in index.search("kestrel window opens", None, top_k=3)]
    assert found.index("a-far") < found.index("z-next")


def test_the_reply_to_a_matching_question_outranks_its_equal_elsewhere() -> None:
    # "z-reply" and "a-far" hold the same words; only z-reply answers the question saved
    # just before it (the id tie-break alone would put "a-far" first).
    index = _conversation(
        [
            ("asked", "chat", "how long have you been married to kestrel?"),
            ("z-reply", "chat", "five years already, time flies"),
            *FILLER,
            ("a-far", "chat", "five years already, time flies"),
        ]
    )
    found = [h.id for h in index.search("married to kestrel five years", None, top_k=3)]
    assert found.index("z-reply") < found.index("a-far")
    assert (
        "context"
        in next(h for h in index.search("kestrel years", None) if h.id == "z-reply").channels
    )


def test_a_reply_gains_more_from_the_question_it_answers_than_from_a_statement() -> None:
    def reply_score(first: str) -> float:
        index = _conversation([("first", "chat", first), ("reply", "chat", "five years")])
        return next(h.score for h in index.search("kestrel five", None) if h.id == "reply")

    asked = reply_score("how long is kestrel?")
    stated = reply_score("kestrel is long")
    assert asked > stated


def test_a_reply_without_evidence_of_its_own_never_surfaces() -> None:
    index = _conversation(
        [("asked", "chat", "what does kestrel cost?"), ("reply", "chat", "ten euros")]
    )
    assert [h.id for h in index.search("kestrel", None, top_k=5) if h.score] == ["asked"]
    assert [h.id for h in index.search("kestrel", None)] == ["asked"]


def test_a_question_in_a_thread_ranks_below_a_statement_of_the_same_words() -> None:
    index = _conversation(
        [
            ("a-question", "chat", "the kestrel window opens at noon?"),
            *FILLER,
            ("z-statement", "other", "the kestrel window opens at noon"),
        ]
    )
    assert [h.id for h in index.search("kestrel window", None, top_k=2)] == [
        "z-statement",
        "a-question",
    ]


def _dated(rows: list[tuple[str, str | None, str]]) -> RecallIndex:
    """Keyword-only entries (id, discovered, text) saved far apart (no locality)."""
    index = RecallIndex()
    index.add_many(
        [
            (Entry(i, text, seq=10 * n, discovered=day, saved_at="2026-12-01T10:00:00Z"), None)
            for n, (i, day, text) in enumerate(rows)
        ]
    )
    return index


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("where was the kestrel offsite on May 3, 2023?", "may-3"),
        ("where was the kestrel offsite in June 2023?", "june"),
        ("where was the kestrel offsite in 2024?", "y2024"),
        ("where was the kestrel offsite on 2023-05-03?", "may-3"),
    ],
)
def test_a_question_naming_a_date_favours_memories_from_then(question: str, expected: str) -> None:
    index = _dated(
        [
            ("a-first", "2022-01-10", "the kestrel offsite was in Lisbon"),
            ("may-3", "2023-05-03", "the kestrel offsite was in Porto"),
            ("june", "2023-06-20", "the kestrel offsite was in Faro"),
            ("y2024", "2024-02-01", "the kestrel offsite was in Braga"),
        ]
    )
    hits = index.search(question, None, top_k=4)
    assert hits[0].id == expected
    assert "date" in hits[0].channels
    undated = index.search("where was the kestrel offsite?", None, top_k=4)
    assert undated[0].id == "y2024"  # equal evidence: the newer save first


@pytest.mark.parametrize(
    "question",
    [
        "May I restart the kestrel gateway?",
        "kestrel gateway error 2023",
        "kestrel gateway port 2023",
        "kestrel gateway PROJ-2023",
    ],
)
def test_a_month_word_or_a_number_is_no_date(question: str) -> None:
    index = _dated(
        [
            ("a-first", "2021-01-10", "the kestrel gateway restarts nightly"),
            ("may", "2023-05-03", "the kestrel gateway restarts nightly"),
        ]
    )
    hits = index.search(question, None, top_k=2)
    assert [h.id for h in hits] == ["may", "a-first"]  # equal evidence: the newer save first
    assert not any("date" in h.channels for h in hits)


def test_a_named_date_weighs_no_more_than_the_other_priors() -> None:
    # The date is a prior like importance and opinion recency: it reorders near-ties only.
    strongest_other = max(ranking.W_IMP * 2, ranking.W_OPINION)
    assert strongest_other >= ranking.W_DATE
    index = _dated(
        [
            ("strong", None, "the kestrel offsite was in Porto near the river"),
            ("then", "2023-05-03", "the kestrel offsite"),
        ]
    )
    hits = index.search("kestrel offsite Porto river in May 2023", None, top_k=2)
    assert [h.id for h in hits] == ["strong", "then"]
    assert "date" in hits[1].channels


def test_a_date_alone_never_surfaces_a_memory() -> None:
    index = _dated([("hit", None, "kestrel lives in Porto"), ("then", "2023-05-03", "lunch menu")])
    assert [h.id for h in index.search("kestrel on May 3, 2023", None)] == ["hit"]


def test_a_memory_without_a_discovered_date_is_dated_by_its_save() -> None:
    index = _dated(
        [("a-old", "2025-01-01", "kestrel in Porto"), ("saved", None, "kestrel in Faro")]
    )
    assert index.search("kestrel in December 2026", None, top_k=2)[0].id == "saved"


def _varied_index() -> tuple[RecallIndex, np.ndarray, int]:
    """400 memories near one query, with varied importance, some opinions, some off-topic."""
    rng = np.random.default_rng(11)
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    items = []
    for i in range(400):
        v = q + rng.standard_normal(DIM).astype(np.float32) * rng.uniform(0.02, 0.2)
        kind = "opinion" if i % 7 == 0 else "fact"
        entry = Entry(
            f"m{i}",
            f"kestrel note {i}" if i % 3 else f"other words {i}",
            seq=i,
            importance=float(rng.uniform(0, 1)),
            kind=kind,
            affirmed="2026-12-01T00:00:00Z" if kind == "opinion" else None,
            discovered="2026-05-04" if i % 4 == 0 else None,
        )
        items.append((entry, (v / np.linalg.norm(v)).reshape(1, DIM)))
    index = RecallIndex()
    index.add_many(items)
    return index, q, len(items)


@pytest.fixture
def by_score_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages in plain score order (no diversity discounts), to check the bound itself."""
    monkeypatch.setattr(ranking, "W_REDUNDANT", 0.0)
    monkeypatch.setattr(ranking, "SAME_THREAD_DECAY", 1.0)


@pytest.mark.usefixtures("by_score_alone")
@pytest.mark.parametrize("question", ["kestrel note", "kestrel note in May 2026"])
def test_stopping_early_never_changes_the_page(question: str) -> None:
    # Priors and age are computed only while a candidate could still reach the page; asking
    # for every result scores them all, and its head must be the short page exactly.
    index, q, n = _varied_index()
    everything = [h.id for h in index.search(question, q, top_k=n)]
    for k in (1, 5, 20):
        assert [h.id for h in index.search(question, q, top_k=k)] == everything[:k]


@pytest.mark.usefixtures("by_score_alone")
def test_an_adaptive_page_is_what_the_question_is_about_in_score_order() -> None:
    index, q, n = _varied_index()
    everything = index.search("kestrel note", q, top_k=n)
    word_floor = ranking.W_LEX * ranking.ADAPTIVE_SHARE**ranking.LEX_POWER

    def qualifies(h: Hit) -> bool:
        p = h.parts
        return p.semantic >= ranking.ADAPTIVE_FLOOR or p.literal >= word_floor or p.exact > 0

    best = max((h for h in everything if qualifies(h)), key=lambda h: h.relevance)
    top_cosine = max(h.parts.cosine for h in everything)
    expected = [
        h.id
        for h in everything
        if qualifies(h)
        and (
            h.relevance >= RELATIVE_CUT * best.relevance
            or h.parts.cosine >= top_cosine - ranking.ADAPTIVE_BAND
        )
    ][:ADAPTIVE_CAP]
    assert len(expected) == ADAPTIVE_CAP  # the cap binds here
    assert [h.id for h in index.search("kestrel note", q)] == expected


def test_an_adaptive_page_never_hides_a_memory_as_close_in_meaning_as_the_best() -> None:
    # issue 24: one shared word must not push the closest meaning off the default page
    rng = np.random.default_rng(2)
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)

    def at(cos: float) -> np.ndarray:
        noise = rng.standard_normal(DIM).astype(np.float32)
        noise -= (noise @ q) * q
        v = cos * q + np.sqrt(1 - cos * cos) * noise / np.linalg.norm(noise)
        return v.reshape(1, DIM).astype(np.float32)

    index = RecallIndex()
    index.add_many(
        [
            (Entry("words", "the package shipped", seq=1), at(0.40)),
            (Entry("meaning", "our parcel went out", seq=2), at(0.42)),
            *[(Entry(f"f{i}", f"filler {i}", seq=10 + i), at(0.0)) for i in range(60)],
        ]
    )
    page = [h.id for h in index.search("when did the package ship", q)]
    assert "meaning" in page and "words" in page


def test_a_removed_turn_takes_its_links_with_it() -> None:
    index = _conversation(
        [
            ("asked", "chat", "how long have you been married to kestrel?"),
            ("reply", "chat", "five years already"),
            ("later", "chat", "five years already"),
            ("last", "chat", "lunch menu five"),
        ]
    )
    before = {h.id: h.score for h in index.search("kestrel five", None, top_k=4)}
    index.remove("reply")
    after = {h.id: h.score for h in index.search("kestrel five", None, top_k=4)}
    assert "reply" not in after
    # the thread closes up: "later" is now the turn after the question and answers it
    assert after["later"] > before["later"]


def test_the_pieces_of_a_possessive_or_contraction_are_no_evidence() -> None:
    # "Vera's" is indexed as "vera" + "s": the "s" matched every possessive in the vault and
    # put "Vera's cat" above "Vera reports to Jamal" for "who is Vera's boss".
    index = RecallIndex()
    index.add_many(
        [
            (Entry("cat", "Vera's cat is called Tofu", seq=0), None),
            (Entry("boss", "Vera reports to Jamal", seq=1), None),
            (Entry("other", "Jamal doesn't drink coffee", seq=2), None),
        ]
    )
    hits = {h.id: h for h in index.search("who is Vera's boss", None, top_k=3)}
    assert hits["cat"].relevance == pytest.approx(hits["boss"].relevance)
