"""The in-RAM indexes: stemming, postings, exact and HNSW vector search, removal."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import channels as index_module
from affidavit.recall.ranking.channels import KeywordIndex, VectorIndex, query_terms, stem


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_stemming_finds_inflections() -> None:
    k = KeywordIndex()
    k.add(1, "Deploys run every Friday")
    k.add(2, "Nothing about releases")
    assert k.postings("deploy") == [1]
    assert k.df("deploying") == 1
    k.remove(1)
    assert k.postings("deploy") == [] and len(k) == 1


def test_removing_many_counts_the_records_removed_only() -> None:
    """The record count is every term's information: a restored index removes its stale
    records in one batch, and FTS5's own bookkeeping writes must not count as records."""
    k = KeywordIndex()
    k.add_many([(slot, f"record {slot} about the kettle and the shelf") for slot in range(20)])
    restored = KeywordIndex(k.image(), len(k))
    restored.remove_many([3, 5, 7, 99])  # 99 was never there
    assert len(restored) == 17
    assert restored.df("kettle") == 17


def test_stemming_keeps_inflections_together_and_other_words_apart() -> None:
    k = KeywordIndex()
    k.add_many(
        [
            (1, "The Ironbark account is managed by Rania"),
            (2, "Ines reports to Carmen"),
            (3, "The runbook is in the wiki"),
            (4, "Releases go out every Friday; the meetings stopped; two case studies"),
        ]
    )
    # a derivation is another word: Porter cut "manager" and "managed" to one stem,
    # and the name "Ines" to the word "in"
    assert k.postings("manager") == []
    assert k.postings("managed") == k.postings("managing") == k.postings("manages") == [1]
    assert k.postings("ines") == [2] and k.postings("in") == [3]
    for inflected in ("released", "releasing", "meeting", "stop", "stopping", "study"):
        assert k.postings(inflected) == [4], inflected


def test_stem_reduces_inflections_only() -> None:
    assert {stem(w) for w in ("release", "releases", "released", "releasing")} == {"releas"}
    assert {stem(w) for w in ("copy", "copies", "copied")} == {"copy"}
    assert {stem(w) for w in ("box", "boxes")} == {"box"}
    assert stem("manager") != stem("managed")
    assert [stem(w) for w in ("bus", "analysis", "class", "speed", "agreed")] == [
        "bus",
        "analysis",
        "class",
        "speed",
        "agreed",
    ]


def test_best_cosine_of_some_records() -> None:
    rng = np.random.default_rng(4)
    vecs = _unit(rng, 4)
    v = VectorIndex()
    v.add_many([(1, vecs[:2]), (2, vecs[2:3])])
    assert v.best_cosine([1, 9], vecs[1]) == pytest.approx(1.0, abs=1e-5)
    assert v.best_cosine([2], vecs[3]) == pytest.approx(v.search(vecs[3], None)[2], abs=1e-6)
    assert v.best_cosine([9], vecs[0]) is None  # no vector: nothing to judge by


def test_ranking_cosines_take_the_vaults_mean_out_of_both_sides() -> None:
    from affidavit.recall.ranking import params

    rng = np.random.default_rng(8)
    shared = rng.standard_normal(DIM)  # what every memory of this vault has in common
    rows = shared + 0.8 * rng.standard_normal((300, DIM))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    v = VectorIndex()
    v.add_many([(i, rows[i : i + 1]) for i in range(len(rows))])
    query = rows[0] * 0.5 + rows[1] * 0.5
    query = (query / np.linalg.norm(query)).astype(np.float32)
    a = params.CENTRE_WEIGHT * len(rows) / (len(rows) + params.CENTRE_PRIOR)
    centred = rows - a * rows.mean(axis=0)
    q = query - a * rows.mean(axis=0)
    expected = centred @ q / (np.linalg.norm(centred, axis=1) * np.linalg.norm(q))
    found = v.search(query, None)
    assert [found[i] for i in range(len(rows))] == pytest.approx(expected.tolist(), abs=1e-4)
    raw = v.search(query, None, centred=False)  # the store-time rules read the model's own
    assert [raw[i] for i in range(len(rows))] == pytest.approx((rows @ query).tolist(), abs=1e-4)
    assert max(found.values()) - np.median(list(found.values())) > max(raw.values()) - np.median(
        list(raw.values())
    )  # the shared part no longer lifts every memory alike


def test_query_terms_are_distinct_words() -> None:
    assert query_terms("Deploy the deploy, THE end") == ["deploy", "the", "end"]
    assert query_terms("  ") == []


def test_best_window_scores_a_record() -> None:
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 3)
    v = VectorIndex()
    v.add(7, vecs[:2])  # one record, two windows
    v.add(8, vecs[2:])
    hits = v.search(vecs[1], pool=None)
    assert abs(hits[7] - 1.0) < 1e-5  # its second window is the query itself
    v.remove(7)
    assert set(v.search(vecs[1], pool=None)) == {8}


def test_hnsw_above_threshold_finds_what_exact_finds() -> None:
    rng = np.random.default_rng(2)
    vecs = _unit(rng, 600)
    exact, approx = VectorIndex(threshold=10**9), VectorIndex(threshold=100)
    for index in (exact, approx):
        index.add_many([(i, vecs[i : i + 1]) for i in range(600)])
    assert {max(approx.search(vecs[9], 5), key=approx.search(vecs[9], 5).get)} == {9}  # exact
    assert approx.wait_ready(120) and not exact.wait_ready(0)
    assert (approx.mode, exact.mode) == ("hnsw", "exact")
    for probe in (3, 150, 599):
        assert max(approx.search(vecs[probe], 10), key=approx.search(vecs[probe], 10).get) == probe
        assert set(exact.search(vecs[probe], 10)) & set(approx.search(vecs[probe], 10))
    approx.remove(150)
    assert 150 not in approx.search(vecs[150], 10)
    approx.add(600, vecs[150:151])  # added after the build: found through HNSW too
    assert max(approx.search(vecs[150], 10), key=approx.search(vecs[150], 10).get) == 600


def test_changes_during_the_background_build_are_kept() -> None:
    rng = np.random.default_rng(4)
    vecs = _unit(rng, 3000)
    index = VectorIndex(threshold=100)
    index.add_many([(i, vecs[i : i + 1]) for i in range(2500)])
    for gone in range(0, 50):
        index.remove(gone)  # most likely while the builder runs
    index.add_many([(i, vecs[i : i + 1]) for i in range(2500, 3000)])
    assert index.wait_ready(120)
    for gone in range(0, 50):
        assert gone not in index.search(vecs[gone], 10)
    for probe in (60, 2499, 2999):
        hits = index.search(vecs[probe], 10)
        assert max(hits, key=hits.get) == probe


def test_hnsw_before_the_model_does_not_crash_the_process() -> None:
    """usearch loaded before onnxruntime used to segfault onnxruntime's import."""
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "from affidavit.recall.ranking.channels import VectorIndex\n"
        "v = VectorIndex(threshold=4)\n"
        "m = np.eye(8, 384, dtype=np.float32)\n"
        "v.add_many([(i, m[i : i + 1]) for i in range(8)])\n"
        "assert v.wait_ready(120)\n"
        "from affidavit.recall.embedder import shared_embedder\n"
        "print(shared_embedder().embed_query('still alive').shape)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert "(384,)" in done.stdout


@contextlib.contextmanager
def _built_while_searching(seed: int) -> Iterator[VectorIndex]:
    """An index whose HNSW build starts while a search holds the foreground."""
    vecs = _unit(np.random.default_rng(seed), 300)
    index = VectorIndex(threshold=100)
    with index.foreground():
        index.add_many([(i, vecs[i : i + 1]) for i in range(300)])
        yield index


def test_the_background_build_waits_for_a_search_in_progress(monkeypatch) -> None:
    monkeypatch.setattr(index_module, "HNSW_MAX_PAUSE", 60.0)
    with _built_while_searching(6) as index:
        assert not index.wait_ready(1.0)  # paused before its first insert
        assert index.mode == "exact (hnsw building)"
    assert index.wait_ready(120)


def test_a_stream_of_searches_slows_the_build_but_never_stops_it(monkeypatch) -> None:
    monkeypatch.setattr(index_module, "HNSW_MAX_PAUSE", 0.001)
    with _built_while_searching(7) as index:
        assert index.wait_ready(120)


def _exit_of(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run in a fresh interpreter over 8,000 random windows in an index whose
    HNSW threshold is 1,000 (``index``), to its normal exit."""
    prelude = (
        "import sys, threading\n"
        "import numpy as np\n"
        "from affidavit.recall.ranking import channels\n"
        "rng = np.random.default_rng(5)\n"
        "vecs = rng.standard_normal((8000, 384)).astype(np.float32)\n"
        "vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)\n"
        "index = channels.VectorIndex(threshold=1000)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + script], capture_output=True, text=True, timeout=120
    )


def test_a_process_that_exits_while_the_graph_builds_exits_cleanly() -> None:
    """The build used to be a daemon thread inside usearch's ``add`` when the interpreter
    went: the process aborted ("terminate called without an active exception", 134)."""
    done = _exit_of(
        "import onnxruntime  # first, as the build does (usearch first breaks its import)\n"
        "from usearch.index import Index\n"
        "inserting = threading.Event()\n"
        "real_add = Index.add\n"
        "def add(self, *args, **kwargs):\n"
        "    inserting.set()\n"
        "    return real_add(self, *args, **kwargs)\n"
        "Index.add = add\n"
        "index.add_many([(i, vecs[i : i + 1]) for i in range(8000)])\n"
        "index.wait_ready(0)  # start the build now\n"
        "assert inserting.wait(60)\n"
        "print(index.mode)\n"  # and exit while it inserts
    )
    assert (done.returncode, done.stderr) == (0, ""), (done.stdout, done.stderr[-800:])


def test_a_command_that_answers_and_exits_never_starts_the_build() -> None:
    done = _exit_of(
        "channels.HNSW_BUILD_DELAY = 3600.0\n"
        "index.add_many([(i, vecs[i : i + 1]) for i in range(8000)])\n"
        "assert max(hits := index.search(vecs[7], 5), key=hits.get) == 7\n"
        "print(index.mode, 'usearch.index' in sys.modules)\n"
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-800:]
    assert done.stdout.split() == ["exact", "(hnsw", "building)", "False"]


def test_remembered_postings_follow_every_change(monkeypatch) -> None:
    """Answers are remembered between changes, never across one, and never past the cap."""
    monkeypatch.setattr(index_module, "POSTINGS_CACHE_SLOTS", 3)
    k = KeywordIndex()
    k.add_many([(1, "deploy on friday"), (2, "deploys again")])
    assert (k.postings("deploy"), k.df("deploy")) == ([1, 2], 2)
    k.add(3, "deployed twice")
    assert (k.postings("deploy"), k.df("deploy")) == ([1, 2, 3], 3)
    k.remove(1)
    assert (k.postings("deploy"), k.df("deploy")) == ([2, 3], 2)
    k.remove_many([2])
    assert (k.postings("deploy"), k.df("deploy")) == ([3], 1)
    k.add_many([(4, "friday deploy"), (5, "friday again"), (6, "friday")])
    assert k.postings("friday") == [4, 5, 6] and k.postings("deploy") == [3, 4]
    assert k.postings("friday") == [4, 5, 6]  # the cap let one of them go, answers hold


def test_an_index_dropped_while_its_graph_builds_is_freed_and_the_build_ends() -> None:
    """A server whose vault is locked drops its index: the build must not keep it (and its
    decrypted vectors) alive, nor go on using a core for a graph no one will search."""
    import gc
    import threading
    import weakref

    vecs = _unit(np.random.default_rng(8), 8000)
    index = VectorIndex(threshold=100)
    index.add_many([(i, vecs[i : i + 1]) for i in range(8000)])
    index.wait_ready(0)  # start the build now
    build = next(t for t in threading.enumerate() if t.name == "affidavit-hnsw")
    dropped = weakref.ref(index)
    del index
    gc.collect()
    assert dropped() is None
    build.join(60)
    assert not build.is_alive()
