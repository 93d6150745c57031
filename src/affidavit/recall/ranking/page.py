"""The page of a search: the best candidates, spread over the conversations they come from.

Ranking scores each candidate alone, so five turns of one conversation, or two turns that
restate each other, can fill a page and push out the turn from elsewhere that answers the
question. For memories that are turns of a recorded conversation (they name a ``thread``,
ADR 55), the page is therefore picked greedily from the best-scored candidates (maximal
marginal relevance, ADR 54): each next pick is the candidate whose score is highest after
two discounts for what the page already holds,

- redundancy: ``x (1 - weight * (c - start) / (1 - start))`` where ``c`` is its highest
  cosine to a memory already picked, when above ``start``;
- same thread: ``x decay ** n`` for ``n`` memories already picked from its thread.

An authored memory (no thread) is never discounted: two memories that differ in one port
number or name are both answers to someone, and one of them must not hide the other
(issue 24). The discounts only grow as the page fills, so the discounted scores never rise
down the page, and the first ``k`` picks are the same whatever the page size. Only the
candidates given are reordered: diversity never surfaces a memory that ranking did not
already score among the best.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from affidavit.recall.ranking import params
from affidavit.recall.ranking.entry import Entry, Hit

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def spread(
    best: list[Hit],
    want: int,
    entries: Mapping[str, Entry],
    similarity: Callable[[Sequence[int]], npt.NDArray[np.float64]],
) -> list[Hit]:
    """``want`` of the best hits (sorted by score), discounted for repeating the page.

    ``similarity`` gives the pairwise cosine of indexed records by slot
    (:meth:`~.channels.VectorIndex.similarity`). The hits were made by this search, so their
    scores are set to the discounted ones in place: no one else holds them.
    """
    if len(best) < 2:
        return best[:want]
    chosen = [entries[h.id] for h in best]
    threads = [(e.namespace, e.thread) if e.thread is not None else None for e in chosen]
    if not any(threads):
        return best[:want]  # no conversation turns: the page is ranking's order
    picks = spread_order(
        [h.score for h in best],
        similarity([e.slot for e in chosen]),
        threads,
        want,
        redundancy_weight=params.W_REDUNDANT,
        redundancy_from=params.REDUNDANT_FROM,
        same_thread_decay=params.SAME_THREAD_DECAY,
    )
    for i, score in picks:
        if best[i].score:
            best[i].parts = replace(best[i].parts, page=score / best[i].score)
        best[i].score = score
    return [best[i] for i, _ in picks]


def spread_order(
    scores: Sequence[float],
    similarity: npt.NDArray[np.float64],
    threads: Sequence[Hashable | None],
    want: int,
    *,
    redundancy_weight: float,
    redundancy_from: float,
    same_thread_decay: float,
) -> list[tuple[int, float]]:
    """Up to ``want`` (index, discounted score) picks from candidates sorted by score.

    ``similarity[i, j]`` is the cosine between candidates ``i`` and ``j`` (0 without
    vectors); ``threads[i]`` is candidate ``i``'s thread (``None``: it belongs to none). The
    three discount constants live in :mod:`.params`.
    """
    rows = similarity.tolist()  # a page is ~10 candidates: plain floats beat numpy calls
    closest = [0.0] * len(scores)  # each candidate's highest cosine to a pick so far
    on_page: dict[Hashable, int] = {}  # memories picked per thread
    left = list(range(len(scores)))
    span = 1.0 - redundancy_from
    picks: list[tuple[int, float]] = []
    while left and len(picks) < want:
        best_at, best = 0, -1.0
        for at, i in enumerate(left):  # the first of equals wins: ties keep ranking's order
            value = scores[i]
            if threads[i] is not None:
                excess = max(closest[i] - redundancy_from, 0.0) / span
                value *= 1.0 - redundancy_weight * excess
                value *= same_thread_decay ** on_page.get(threads[i], 0)
            if value > best:
                best_at, best = at, value
        chosen = left.pop(best_at)
        picks.append((chosen, best))
        closest = [max(c, s) for c, s in zip(closest, rows[chosen], strict=True)]
        if threads[chosen] is not None:
            on_page[threads[chosen]] = on_page.get(threads[chosen], 0) + 1
    return picks
