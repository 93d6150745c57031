"""A correction inherits the meaning of what it corrected (ADR 0235), on synthetic vectors."""

from __future__ import annotations

import numpy as np
import pytest

from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import Entry, RecallIndex
from affidavit.recall.ranking import params as ranking


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((1, DIM)).astype(np.float32)
    return v / np.linalg.norm(v)


OLD, OWN, OTHER = _unit(1), _unit(2), _unit(3)


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> RecallIndex:
    """A correction ("new", its own meaning OWN) and an unrelated memory; cosines uncentred."""
    monkeypatch.setattr(ranking, "CENTRE_WEIGHT", 0.0)
    built = RecallIndex()
    built.add_many(
        [(Entry("new", "x", seq=2), OWN.copy()), (Entry("other", "y", seq=1), OTHER.copy())]
    )
    return built


def _cosines(index: RecallIndex, query: np.ndarray) -> dict[str, float]:
    return {h.id: h.parts.cosine for h in index.search("", query[0], top_k=5)}


def test_a_correction_answers_what_it_corrected_less_the_discount(index: RecallIndex) -> None:
    before = _cosines(index, OLD)
    index.inherit_many([("new", ["old"], OLD.copy())])
    after = _cosines(index, OLD)
    assert after["new"] == pytest.approx(1.0 - ranking.INHERITED_DISCOUNT, abs=1e-5)
    assert before["new"] < 0.3  # its own words are about something else
    assert after["other"] == pytest.approx(before["other"])
    assert set(after) == {"new", "other"}  # the inherited windows are never a hit of their own


def test_a_correction_keeps_its_own_meaning_when_that_is_closer(index: RecallIndex) -> None:
    index.inherit_many([("new", ["old"], OLD.copy())])
    assert _cosines(index, OWN)["new"] == pytest.approx(1.0, abs=1e-5)


def test_what_a_correction_inherited_goes_with_it_or_with_its_sources(
    index: RecallIndex,
) -> None:
    windows = len(index.vector)
    index.inherit_many([("new", ["old"], OLD.copy())])
    assert len(index.vector) == windows + 1
    assert index.inherited.heirs("old") == {index.entry("new").slot}  # type: ignore[union-attr]
    index.inherit_many([("new", [], np.zeros((0, DIM), dtype=np.float32))])  # source gone
    assert len(index.vector) == windows
    assert index.inherited.heirs("old") == frozenset()
    assert _cosines(index, OLD)["new"] < 0.3
    index.inherit_many([("new", ["old"], OLD.copy())])
    index.remove("new")
    assert len(index.vector) == windows - 1
    assert index.inherited.heirs("old") == frozenset()


def test_a_memory_that_corrected_nothing_is_ranked_as_before(index: RecallIndex) -> None:
    index.inherit_many([("missing", ["old"], OLD.copy())])  # not indexed: nothing to give
    assert len(index.vector) == 2
    assert _cosines(index, OTHER)["other"] == pytest.approx(1.0, abs=1e-5)
