"""The bootstrap of benchmarks/stats.py: per question, and resampling clusters whole."""

from __future__ import annotations

import pytest

import stats


def test_singleton_clusters_are_the_plain_bootstrap() -> None:
    values = [float(n % 3 == 0) for n in range(90)]
    plain = stats.interval(values)
    assert stats.interval(values, clusters=[str(n) for n in range(90)]) == plain


def test_correlated_clusters_widen_the_interval() -> None:
    # ten families of nine questions; a family is answered all right or all wrong
    values = [float(n // 9 % 2 == 0) for n in range(90)]
    families = [f"f{n // 9}" for n in range(90)]
    plain = stats.interval(values)
    grouped = stats.interval(values, clusters=families)
    assert plain.mean == grouped.mean == 0.5
    assert grouped.high - grouped.low > 2 * (plain.high - plain.low)


def test_paired_delta_resamples_clusters_and_checks_lengths() -> None:
    a = [1.0] * 20
    b = [0.0] * 10 + [1.0] * 10
    delta = stats.paired_delta(a, b, clusters=[f"f{n // 10}" for n in range(20)])
    assert delta.mean == 0.5
    assert delta.excludes_zero() is False  # two clusters: one of them may be drawn twice
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_delta(a, b[:5])
    with pytest.raises(ValueError, match="cluster labels"):
        stats.interval(a, clusters=["x"])
