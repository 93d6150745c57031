"""Page diversity (recall/ranking/page.py, ADR 54): properties, not fixed numbers."""

from __future__ import annotations

import numpy as np
import pytest

from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import Entry, RecallIndex
from affidavit.recall.ranking import params as ranking
from affidavit.recall.ranking.page import spread_order
from affidavit.recall.ranking.params import DIVERSITY_POOL

DISCOUNTS = {
    "redundancy_weight": ranking.W_REDUNDANT,
    "redundancy_from": ranking.REDUNDANT_FROM,
    "same_thread_decay": ranking.SAME_THREAD_DECAY,
}


def _picked(
    scores: list[float], similarity: np.ndarray, threads: list[str | None], want: int
) -> list[int]:
    return [i for i, _ in spread_order(scores, similarity, threads, want, **DISCOUNTS)]


def test_without_repetition_the_page_is_the_score_order() -> None:
    scores = [0.9, 0.8, 0.7, 0.6]
    assert _picked(scores, np.zeros((4, 4)), ["a", "b", "c", "d"], 4) == [0, 1, 2, 3]


def test_a_restated_memory_gives_way_to_a_different_one() -> None:
    similarity = np.eye(3)
    similarity[0, 1] = similarity[1, 0] = 0.99  # candidate 1 says what candidate 0 says
    assert _picked([1.0, 0.98, 0.9], similarity, ["a", "b", "c"], 3) == [0, 2, 1]


def test_one_thread_does_not_fill_the_page() -> None:
    # With the shipped decay, the third memory of one thread falls behind a slightly weaker
    # memory of another thread; the second does not.
    scores = [1.0, 0.99, 0.98, 0.9]
    assert _picked(scores, np.eye(4), ["t1", "t1", "t1", "t2"], 4) == [0, 1, 3, 2]


def test_memories_without_a_thread_are_never_discounted_for_it() -> None:
    scores = [1.0, 0.99, 0.98, 0.9]
    assert _picked(scores, np.eye(4), [None, None, None, "t2"], 4) == [0, 1, 2, 3]


def test_discounted_scores_never_rise_and_a_short_page_is_the_head_of_a_long_one() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        n = 12
        scores = sorted(rng.uniform(0.1, 1.0, n).tolist(), reverse=True)
        similarity = rng.uniform(0.0, 1.0, (n, n))
        threads = [str(d) if d else None for d in rng.integers(0, 3, n)]
        full = spread_order(scores, similarity, threads, n, **DISCOUNTS)
        values = [v for _, v in full]
        assert values == sorted(values, reverse=True)
        assert sorted(i for i, _ in full) == list(range(n))
        for k in (1, 3, 7):
            assert _picked(scores, similarity, threads, k) == [i for i, _ in full[:k]]


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32).reshape(1, DIM)


def _toward(q: np.ndarray, cosine: float, direction: int) -> np.ndarray:
    """A vector at ``cosine`` to ``q`` (axis 0), its remainder along one axis of its own."""
    v = np.zeros(DIM)
    v[0], v[direction] = cosine, np.sqrt(1 - cosine**2)
    return _unit(v)


def _index(rows: list[tuple[str, np.ndarray, str | None]]) -> RecallIndex:
    """Vector-only imported entries (no age); the third field is the thread (``None``: none)."""
    index = RecallIndex()
    index.add_many(
        [
            (Entry(i, f"row {n}", seq=n, thread=thread, authored=False), windows)
            for n, (i, windows, thread) in enumerate(rows)
        ]
    )
    return index


Q = _unit(np.eye(DIM)[0])[0]


def _restated(thread: str | None) -> list[str]:
    twin = _toward(Q, 0.70, 1) + np.float32(1e-3)
    index = _index(
        [
            ("first", _toward(Q, 0.70, 1), thread and f"{thread}-1"),
            ("restated", twin / np.linalg.norm(twin), thread and f"{thread}-2"),
            ("different", _toward(Q, 0.65, 2), thread and f"{thread}-3"),
        ]
    )
    return [h.id for h in index.search("zzz", Q, top_k=3)]


def test_search_puts_a_different_turn_before_a_restated_one() -> None:
    assert _restated("chat") == ["first", "different", "restated"]


def test_an_authored_memory_is_never_pushed_down_for_resembling_another() -> None:
    # two memories that differ in one detail (a port, a name) are both someone's answer
    assert _restated(None) == ["first", "restated", "different"]


def test_search_spreads_a_page_over_threads_only() -> None:
    def page(one: str | None, other: str | None) -> list[str]:
        index = _index(
            [
                ("a-1", _toward(Q, 0.70, 1), one),
                ("a-2", _toward(Q, 0.69, 2), one),
                ("a-3", _toward(Q, 0.68, 3), one),
                ("b", _toward(Q, 0.66, 4), other),
            ]
        )
        return [h.id for h in index.search("zzz", Q, top_k=4)]

    assert page("chat-1", "chat-2") == ["a-1", "a-2", "b", "a-3"]
    assert page(None, None) == ["a-1", "a-2", "a-3", "b"]  # authored: plain score order


def _crowded_index() -> RecallIndex:
    """60 memories near one question, in clusters and over a few days."""
    rng = np.random.default_rng(3)
    centres = [_toward(Q, c, d)[0] for c, d in ((0.8, 1), (0.75, 2), (0.7, 3))]
    rows = []
    for n in range(60):
        v = centres[n % 3] + rng.standard_normal(DIM).astype(np.float32) * 0.03
        rows.append((f"m{n}", _unit(v), f"chat-{n % 4}"))
    return _index(rows)


def test_diversity_only_reorders_the_best_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    index = _crowded_index()
    page = [h.id for h in index.search("zzz", Q, top_k=DIVERSITY_POOL)]
    monkeypatch.setattr(ranking, "W_REDUNDANT", 0.0)
    monkeypatch.setattr(ranking, "SAME_THREAD_DECAY", 1.0)
    by_score = [h.id for h in index.search("zzz", Q, top_k=DIVERSITY_POOL)]
    assert page != by_score  # the discounts did reorder this crowded page...
    assert set(page) == set(by_score)  # ...and surfaced nothing from further down


def test_a_short_page_is_the_head_of_a_full_one() -> None:
    index = _crowded_index()
    full = index.search("zzz", Q, top_k=DIVERSITY_POOL)
    scores = [h.score for h in full]
    assert scores == sorted(scores, reverse=True)
    for k in (1, 3, 5):
        assert [h.id for h in index.search("zzz", Q, top_k=k)] == [h.id for h in full[:k]]


def test_two_records_are_as_similar_as_their_closest_windows() -> None:
    from affidavit.recall.ranking.channels import VectorIndex

    rng = np.random.default_rng(0)
    sizes = [(1, 1), (2, 3), (3, 2), (4, 1)]
    windows = {slot: rng.standard_normal((n, DIM)).astype(np.float32) for slot, n in sizes}
    for w in windows.values():
        w /= np.linalg.norm(w, axis=1, keepdims=True)
    vectors = VectorIndex()
    vectors.add_many(list(windows.items()))

    def expected(order: list[int]) -> np.ndarray:
        return np.array(
            [
                [
                    (windows[a] @ windows[b].T).max() if a in windows and b in windows else 0.0
                    for b in order
                ]
                for a in order
            ]
        )

    for order in ([1, 2, 9, 3], [1, 4], [9]):  # slot 9 has no vectors (keyword-only)
        assert np.allclose(vectors.similarity(order), expected(order), atol=1e-5)
