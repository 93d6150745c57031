"""The recall commands as a user runs them: real processes on a real vault."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from affidavit.recall import NOTICE
from tests.support import run_cli


def _json(done) -> object:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_search_recent_and_expire(home: Path, cli_vault: dict[str, str]) -> None:
    for text in ("Deploys run every Friday afternoon", "Alice owns the billing service"):
        assert run_cli(["store", text, "--source", "chat"], home, env=cli_vault).returncode == 0
    found = _json(run_cli(["search", "when do we deploy", "--json"], home, env=cli_vault))
    assert [r["text"] for r in found["results"]] == ["Deploys run every Friday afternoon"]
    assert found["notice"]
    table = run_cli(["search", "who owns billing"], home, env=cli_vault)
    assert table.returncode == 0 and "Alice owns" in table.stdout
    nothing = run_cli(["search", "sourdough bread recipe"], home, env=cli_vault)
    assert "no memory matches" in nothing.stdout
    recent = _json(run_cli(["recent", "--limit", "1", "--json"], home, env=cli_vault))
    assert [r["text"] for r in recent["results"]] == ["Alice owns the billing service"]
    assert _json(run_cli(["expire", "--json"], home, env=cli_vault)) == {"expired": []}


def test_graph_commands(home: Path, cli_vault: dict[str, str]) -> None:
    edge = _json(run_cli(["link", "alice", "owns", "repo-x", "--json"], home, env=cli_vault))
    edge = edge["relation"]
    rel = _json(run_cli(["relations", "--entity", "ALICE", "--json"], home, env=cli_vault))
    assert [r["id"] for r in rel["relations"]] == [edge["id"]] and rel["truncated"] is False
    shown = run_cli(["relations", "--predicate", "owns"], home, env=cli_vault)
    assert "repo-x" in shown.stdout
    got = _json(run_cli(["get", edge["id"], "--json"], home, env=cli_vault))
    assert got == {"relation": edge, "notice": NOTICE}  # get reads a relation through recall too
    gone = _json(run_cli(["unlink", edge["id"], "--json"], home, env=cli_vault))
    assert gone == {"removed": True, "relation_id": edge["id"], "id": edge["id"]}
    missing = run_cli(["unlink", edge["id"]], home, env=cli_vault)
    assert missing.returncode == 3 and missing.stderr.startswith("affidavit: error:")


def test_without_a_model_keyword_recall_still_works(home: Path, cli_vault: dict[str, str]) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    assert (
        run_cli(["store", "Deploys run on Fridays", "--source", "s"], home, env=env).returncode == 0
    )
    found = _json(run_cli(["search", "deploys", "--json"], home, env=env))
    assert found["semantic"] is False and len(found["results"]) == 1
    shown = run_cli(["search", "deploys"], home, env=env)
    assert "semantic recall is off" in shown.stdout


def test_bad_search_input_is_one_clear_line(home: Path, cli_vault: dict[str, str]) -> None:
    done = run_cli(["search", "x", "--top-k", "0"], home, env=cli_vault)
    assert done.returncode == 2 and "'--top-k'" in done.stderr and "Traceback" not in done.stderr
    done = run_cli(["search", "x", "--since", "yesterday"], home, env=cli_vault)
    assert done.returncode == 2 and "YYYY-MM-DD" in done.stderr


def test_store_takes_the_recall_options(home: Path, cli_vault: dict[str, str]) -> None:
    def store(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(["store", *args, "--source", "chat"], home, env=cli_vault)

    first = _json(store("I prefer tabs over spaces", "--kind", "opinion", "--json"))
    assert first["status"] == "stored" and first["stored"] is True

    def got(item_id: str) -> dict:
        return _json(run_cli(["get", item_id, "--json"], home, env=cli_vault))["memory"]

    assert got(first["id"])["kind"] == "opinion"
    clash = store("I prefer spaces over tabs now", "--kind", "opinion")
    assert clash.returncode == 4 and first["id"] in clash.stderr and "--supersedes" in clash.stderr
    replaced = _json(
        store(
            "I prefer spaces over tabs now",
            "--kind",
            "opinion",
            "--supersedes",
            first["id"],
            "--json",
        )
    )
    assert replaced["superseded"] == [first["id"]]
    kept = store(
        "I prefer spaces over tabs, except in Makefiles", "--kind", "opinion", "--keep-both"
    )
    assert kept.returncode == 0
    timed = _json(
        store(
            "The sale price is 10 euros",
            "--expires",
            "2w",
            "--importance",
            "3",
            "--discovered",
            "2026-01-02",
            "--tag",
            "Shop",
            "--json",
        )
    )
    shown = got(timed["id"])
    assert shown["importance"] == 1.0 and shown["tags"] == ["shop"]
    assert shown["discovered"] == "2026-01-02" and shown["expires"]
    again = store("the sale price is 10 euros.")
    assert again.returncode == 0 and again.stdout.strip() == timed["id"]
    assert "duplicate" in again.stderr
    found = _json(run_cli(["search", "what does the sale cost", "--json"], home, env=cli_vault))
    assert found["results"][0]["id"] == timed["id"]
    assert "semantic" in found["results"][0]["channels"]  # store embedded it
    bad = store("Steps:\n- one\n- two")
    assert bad.returncode == 2 and "single claims" in bad.stderr and "store_many" not in bad.stderr


def test_status_says_whether_semantic_recall_is_on(home: Path, cli_vault: dict[str, str]) -> None:
    on = run_cli(["status"], home, env=cli_vault)
    assert "recall:  semantic + keyword" in on.stdout
    off = run_cli(["status", "--json"], home, env={**cli_vault, "AFFIDAVIT_EMBEDDER": "off"})
    assert json.loads(off.stdout)["recall"]["semantic"] is False


def test_imported_rows_without_vectors_get_semantic_recall(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    # a hand-written export: no vector field; only a paraphrase can find it (no shared word)
    row = {"id": "a1b2c3d4e5f6a7b8c9d0", "data": {"text": "Alice owns billing", "source": "x"}}
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row) + "\n")
    assert _json(run_cli(["import", str(rows), "--json"], home, env=cli_vault))["imported"] == 1
    found = _json(
        run_cli(["search", "who runs payments and invoices", "--json"], home, env=cli_vault)
    )
    assert [r["id"] for r in found["results"]] == [row["id"]]
    assert found["results"][0]["channels"] == ["semantic"]
