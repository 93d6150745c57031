"""``pack build --from-chatgpt / --from-claude``: a chat export as the messages records cite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import InputError, UsageError
from affidavit.packs.verify import verify_pack
from tests.exports.synthetic import write_chatgpt, write_claude
from tests.support import run_cli

RECORDS = [
    {
        "record_id": "M-library-1",
        "role": "user",
        "topic": "Running the tool library",
        "category": "roles",
        "quotes": [{"message_id": 1, "quote": "I run the tool library on Larkspur Lane."}],
    },
    {
        "record_id": "M-repair-1",
        "role": "user",
        "topic": "Repair café hours",
        "category": "places",
        "quotes": [{"message_id": 4, "quote": "Saturday mornings at nine"}],
    },
]


def build_from(flag: str, export: Path, records: Path, out: Path, home: Path):
    """``affidavit pack build FLAG EXPORT --records R --out OUT --title T``."""
    args = ["--records", str(records), "--out", str(out), "--title", "T"]
    return run_cli(["pack", "build", flag, str(export), *args], home)


def records_file(tmp_path: Path, records: list[dict] = RECORDS) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("flag", "write"), [("--from-chatgpt", write_chatgpt), ("--from-claude", write_claude)]
)
def test_an_export_becomes_the_numbered_messages_a_verified_pack_cites(tmp_path, home, flag, write):
    export = write(tmp_path / "conversations.json")
    listed = run_cli(["pack", "messages", flag, str(export)], home)
    assert listed.returncode == 0, listed.stderr
    messages = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [m["id"] for m in messages] == [1, 2, 3, 4, 5]
    assert messages[3] == {
        "id": 4,
        "date": "2026-03-02T09:21:00Z",
        "speaker": "user",
        "text": "The repair café opens on Saturday mornings at nine.",
    }
    out = tmp_path / "pack"
    done = build_from(flag, export, records_file(tmp_path), out, home)
    assert done.returncode == 0, done.stderr
    pack = verify_pack(out)
    cited = {r["record_id"]: r["evidence"][0] for r in pack.records}
    assert cited["M-repair-1"]["date_utc"] == "2026-03-02T09:21:00Z"
    assert cited["M-repair-1"]["start"] == len("The repair café opens on ")
    verified = run_cli(["pack", "verify", str(out)], home)
    assert verified.returncode == 0, verified.stderr


def test_a_quote_not_in_the_export_is_the_builders_error(tmp_path, home):
    export = write_chatgpt(tmp_path / "conversations.json")
    bad = [
        {
            **RECORDS[0],
            "quotes": [{"message_id": 1, "quote": "I run the tool library on Lark Lane."}],
        }
    ]
    out = tmp_path / "pack"
    done = build_from("--from-chatgpt", export, records_file(tmp_path, bad), out, home)
    assert done.returncode == InputError.exit_code
    assert done.stderr.strip().splitlines() == [
        "affidavit: error: records.jsonl line 1: quote 'I run the tool library on Lark Lane.' does "
        "not appear verbatim in message 1; copy it exactly from the message text (same case, "
        "spaces and punctuation)"
    ]
    assert not out.exists()


def test_a_broken_export_names_its_place_and_nothing_is_written(tmp_path, home):
    export = write_chatgpt(tmp_path / "conversations.json")
    data = json.loads(export.read_text())
    data[1]["mapping"] = "gone"
    export.write_text(json.dumps(data))
    out = tmp_path / "pack"
    done = build_from("--from-chatgpt", export, records_file(tmp_path), out, home)
    assert done.returncode == InputError.exit_code
    assert done.stderr.strip().splitlines() == [
        "affidavit: error: conversations.json: conversation 2 ('Bike repair'): mapping is not a "
        "JSON object; export your data again, or check you picked the right file"
    ]
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["conversations.json", "home", "records.jsonl"]  # no pack, no staging


def test_exactly_one_source_is_given(tmp_path, home):
    export = write_claude(tmp_path / "conversations.json")
    args = ["--records", str(records_file(tmp_path)), "--out", str(tmp_path / "p"), "--title", "T"]
    both = run_cli(
        ["pack", "build", "--from-claude", str(export), "--from-chatgpt", str(export), *args], home
    )
    none = run_cli(["pack", "build", *args], home)
    for done in (both, none):
        assert done.returncode == UsageError.exit_code
        assert "give exactly one of --messages, --from-chatgpt and --from-claude" in done.stderr
