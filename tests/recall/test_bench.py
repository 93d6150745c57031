"""The generic retrieval benchmark: its metrics, its JSON contract, its input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.recall import bench
from tests.support import run_cli

CORPUS = [
    {
        "collection": "c1",
        "id": "a1",
        "text": "Nina: I adopted a grey cat named Pixel",
        "group": "s1",
    },
    {
        "collection": "c1",
        "id": "a2",
        "text": "Omar: our team ships the release on Fridays",
        "group": "s1",
    },
    {
        "collection": "c1",
        "id": "a3",
        "text": "Nina: the kettle broke again this morning",
        "group": "s2",
    },
    {"collection": "c1", "id": "a4", "text": "Omar: I started learning the cello", "group": "s2"},
    {
        "collection": "c2",
        "id": "b1",
        "text": "Pia: the ferry to the island leaves at nine",
        "group": "t1",
    },
    {"collection": "c2", "id": "b2", "text": "Quinn: my laptop fan is very loud", "group": "t2"},
]
QUERIES = [
    {
        "collection": "c1",
        "id": "q1",
        "text": "What is the name of Nina's cat?",
        "relevant": ["a1"],
        "category": "1",
    },
    {
        "collection": "c1",
        "id": "q2",
        "text": "Which instrument is Omar learning to play?",
        "relevant": ["a4"],
        "category": "2",
    },
    {
        "collection": "c2",
        "id": "q3",
        "text": "When does the ferry leave?",
        "relevant": ["b1"],
        "category": "1",
    },
    {"collection": "c2", "id": "q4", "text": "unknown ids only", "relevant": ["zz"]},
]
METRICS = {
    "recall@1",
    "hit@1",
    "group_hit@1",
    "recall@3",
    "hit@3",
    "group_hit@3",
    "mrr",
    "ms_per_query",
}


def test_metrics_on_a_corpus_with_known_answers() -> None:
    seen: dict[str, tuple[int, int]] = {}
    report = bench.run(
        CORPUS,
        QUERIES,
        ks=(3, 1),
        progress=lambda phase, done, total: seen.__setitem__(phase, (done, total)),
    )
    # every phase ran to its total: both collections' rows, every query (one skipped)
    assert seen == {"embedding": (6, 6), "sealing": (6, 6), "searching": (4, 4)}
    assert report["_skipped"] == 1  # the query with no known relevant id
    system = report["system"]
    assert set(system) == METRICS == set(report["bm25"])
    assert system["recall@3"] == 1.0 and system["hit@3"] == 1.0 and system["mrr"] > 0.5
    for name, value in system.items():
        if name != "ms_per_query":
            assert 0.0 <= value <= 1.0
            assert 0.0 <= report["bm25"][name] <= 1.0
    assert system["group_hit@1"] >= system["hit@1"]  # a hit's group is always a group hit
    assert set(report["by_category"]) == {"1", "2"}


def test_scored_categories_restrict_the_overall_figures() -> None:
    report = bench.run(CORPUS, QUERIES, ks=(1,), scored_categories={"2"})
    assert report["_overall"] == 1 and set(report["by_category"]) == {"1", "2"}


def test_a_query_for_an_unknown_collection_is_refused() -> None:
    with pytest.raises(InputError, match="no corpus rows"):
        bench.run(CORPUS, [{**QUERIES[0], "collection": "nope"}])


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_writes_exactly_the_documented_json(home: Path, tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    queries = _write(tmp_path / "q.jsonl", QUERIES)
    out = tmp_path / "report.json"
    done = run_cli(
        [
            "bench",
            "retrieval",
            "--corpus",
            str(corpus),
            "--queries",
            str(queries),
            "--k",
            "1",
            "--k",
            "3",
            "--json",
            str(out),
        ],
        home,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert set(report) == {"system", "bm25", "by_category"}
    assert set(report["system"]) == METRICS
    assert set(report["by_category"]["1"]) == {"system", "bm25"}
    assert "recall@3" in done.stdout and "bm25" in done.stdout  # the table


def test_cli_bad_row_is_one_line_naming_file_and_line(home: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(CORPUS[0]) + "\n{not json\n")
    queries = _write(tmp_path / "q.jsonl", QUERIES)
    done = run_cli(["bench", "retrieval", "--corpus", str(corpus), "--queries", str(queries)], home)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"{corpus}:2" in done.stderr
    assert "Traceback" not in done.stderr


def test_bm25_ranks_the_term_dense_record_first() -> None:
    # The baseline column's ranking (moved here from the product's keyword index with it).
    baseline = bench.Bm25([(1, "cache cache cache key"), (2, "a cache"), (3, "unrelated words")])
    ranked = baseline.rank("cache", 10)
    assert ranked[:2] == [1, 2] and 3 not in ranked


def test_bm25_reads_the_product_s_inflection_stems_and_porter_only_when_asked() -> None:
    # bench retrieval's baseline reads text as the keyword channel does (ADR 59): Porter's
    # stem joined "manager" and "managed"; the agent-memory benchmark's keyword store is Porter
    records = [(1, "The account is managed by Rania"), (2, "Releases go out on Friday")]
    assert bench.Bm25(records).rank("manager", 10) == []
    assert bench.Bm25(records).rank("released", 10) == [2]
    assert bench.Bm25(records, porter=True).rank("manager", 10) == [1]
