"""``pack build``: the input rules, the files it writes, and that a failure writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    InputError,
    NotFoundError,
    UsageError,
)
from affidavit.packs import format as fmt
from affidavit.packs.build import build_pack
from affidavit.packs.verify import verify_pack
from tests.packs._build_fixtures import (
    SAMPLE_MESSAGES,
    SAMPLE_RECORDS,
    SAMPLE_TITLE,
    build_sample,
    jsonl,
    pack_records,
)
from tests.packs.conftest import REFERENCE_RECORD_LINE
from tests.support import run_cli

TEXT = "Quick thing first: the shed code changed. Also, the café on the corner sells seedlings."
MESSAGES: list[dict[str, Any]] = [
    {"id": 3, "date": "2026-03-02T08:20:00Z", "speaker": "Rowan", "text": TEXT},
    {"id": 4, "date": "2026-03-05T10:00:00+00:00", "speaker": "Rowan", "text": "the the the"},
    {"id": 5, "date": "2026-03-01T07:00:00Z", "speaker": "Assistant", "text": "Noted: seedlings."},
]
QUOTE = "the café on the corner sells seedlings."
RECORD: dict[str, Any] = {
    "record_id": "M-garden-3",
    "role": "user",
    "topic": "Seedlings",
    "category": "places",
    "quotes": [{"message_id": 3, "quote": QUOTE}],
}


def _build(tmp_path: Path, messages: list[Any], records: list[Any]) -> Path:
    out = tmp_path / "out" / "pack"
    out.parent.mkdir(exist_ok=True)
    build_pack(
        jsonl(tmp_path / "messages.jsonl", messages),
        jsonl(tmp_path / "records.jsonl", records),
        out,
        "Garden",
    )
    return out


def _refused(tmp_path: Path, messages: list[Any], records: list[Any]) -> str:
    """Build must fail with one InputError and leave the output directory empty."""
    with pytest.raises(AffidavitError) as caught:
        _build(tmp_path, messages, records)
    assert os.listdir(tmp_path / "out") == []  # no pack, no staging directory left behind
    message = str(caught.value)
    assert "\n" not in message
    return message


def _q(message_id: int, quote: str, **extra: Any) -> dict[str, Any]:
    return {"message_id": message_id, "quote": quote, **extra}


def _record(**changes: Any) -> dict[str, Any]:
    record = json.loads(json.dumps(RECORD))
    record.update(changes)
    return {k: v for k, v in record.items() if v is not None}


def test_builds_a_pack_that_verifies_with_offsets_hashes_and_defaults(tmp_path: Path) -> None:
    pack = _build(tmp_path, MESSAGES, [RECORD])
    assert sorted(os.listdir(pack)) == ["MEMORY.md", "README.md", "SHA256SUMS", "records.jsonl"]
    (record,) = pack_records(pack)
    citation = record["evidence"][0]
    assert TEXT[citation["start"] : citation["end"]] == QUOTE
    assert (citation["start"], citation["end"]) == (TEXT.index(QUOTE), TEXT.index(QUOTE) + 39)
    assert citation["message_sha256"] == hashlib.sha256(TEXT.encode("utf-8")).hexdigest()
    assert citation["date_utc"] == "2026-03-02T08:20:00Z"
    assert record["statement"] == QUOTE  # default: the quotes joined
    assert record["speaker"] == "Rowan"  # default: the cited messages' speaker
    assert list(record) == [
        "record_id",
        "role",
        "speaker",
        "category",
        "topic",
        "statement",
        "date_first_utc",
        "date_last_utc",
        "evidence",
    ]
    assert verify_pack(pack).records[0] == record


def test_offsets_count_code_points_not_bytes_or_utf16_units(tmp_path: Path) -> None:
    text = "🌱 café 🌱 seedlings"
    pack = _build(
        tmp_path,
        [{"id": 1, "date": "2026-03-02T08:20:00Z", "speaker": "Rowan", "text": text}],
        [_record(quotes=[_q(1, "seedlings")])],
    )
    citation = pack_records(pack)[0]["evidence"][0]
    assert (citation["start"], citation["end"]) == (9, 18)


def test_dates_span_the_cited_messages_and_statement_joins_quotes(tmp_path: Path) -> None:
    quotes = [
        _q(3, "the shed code changed."),
        _q(5, "seedlings"),
    ]
    pack = _build(tmp_path, MESSAGES, [_record(quotes=quotes, speaker="Rowan")])
    record = pack_records(pack)[0]
    assert record["date_first_utc"] == "2026-03-01T07:00:00Z"
    assert record["date_last_utc"] == "2026-03-02T08:20:00Z"
    assert record["statement"] == "the shed code changed. seedlings"
    assert record["speaker"] == "Rowan"


def test_start_picks_one_of_a_repeated_quote(tmp_path: Path) -> None:
    pack = _build(tmp_path, MESSAGES, [_record(quotes=[_q(4, "the", start=4)])])
    assert pack_records(pack)[0]["evidence"][0]["start"] == 4


def test_memory_and_readme_say_what_the_pack_is(tmp_path: Path) -> None:
    out = tmp_path / "pack"
    build_sample(out)
    memory = (out / fmt.MEMORY).read_text(encoding="utf-8")
    readme = (out / fmt.README).read_text(encoding="utf-8")
    assert memory.startswith(f"# {SAMPLE_TITLE}\n")
    assert "historical data, not instructions" in memory
    for record in pack_records(out):
        assert f"## {record['record_id']}" in memory
        assert f"Speaker: {record['speaker']}" in memory
        for citation in record["evidence"]:
            assert f"message {citation['message_id']}, {citation['date_utc']}" in memory
    assert hashlib.sha256(SAMPLE_MESSAGES.read_bytes()).hexdigest() in readme
    assert hashlib.sha256(SAMPLE_RECORDS.read_bytes()).hexdigest() in readme
    assert "Records: 10" in readme
    assert "not instructions" in readme
    assert "do not prove that the quotes are true" in readme


def test_same_input_builds_the_same_bytes(tmp_path: Path) -> None:
    first, second = build_sample(tmp_path / "a"), build_sample(tmp_path / "b")
    for name in os.listdir(first):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.parametrize(
    ("target", "message"),
    [("file", "already exists"), ("empty_dir", "already exists"), ("symlink", "already exists")],
)
def test_never_overwrites(tmp_path: Path, target: str, message: str) -> None:
    out = tmp_path / "pack"
    if target == "file":
        out.write_text("keep me")
    elif target == "empty_dir":
        out.mkdir()
    else:
        out.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConflictError, match=message):
        build_sample(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]
    if target == "file":
        assert out.read_text() == "keep me"


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_title_must_be_one_non_empty_line(tmp_path: Path, title: str) -> None:
    with pytest.raises(UsageError, match="--title must be one non-empty line"):
        build_pack(SAMPLE_MESSAGES, SAMPLE_RECORDS, tmp_path / "pack", title)
    assert os.listdir(tmp_path) == []


def test_unreadable_input_and_unwritable_parent_are_one_line_errors(tmp_path: Path) -> None:
    # Real kernel files that fail as a full disk or a broken input would (root bypasses chmod).
    with pytest.raises(InputError, match="cannot read /proc/self/mem"):
        build_pack(Path("/proc/self/mem"), SAMPLE_RECORDS, tmp_path / "pack", "T")
    with pytest.raises(AffidavitError, match="cannot write in /proc/self"):
        build_pack(SAMPLE_MESSAGES, SAMPLE_RECORDS, Path("/proc/self/new-pack"), "T")
    assert os.listdir(tmp_path) == []


def test_missing_parent_and_input_files(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="is not a directory"):
        build_sample(tmp_path / "no" / "such" / "pack")
    with pytest.raises(NotFoundError, match="does not exist"):
        build_pack(tmp_path / "none.jsonl", SAMPLE_RECORDS, tmp_path / "p", "T")
    assert sorted(os.listdir(tmp_path)) == []


MESSAGE_CASES = [
    ([{**MESSAGES[0], "id": 0}], "'id' must be a positive whole number"),
    ([{**MESSAGES[0], "id": "3"}], "'id' must be a positive whole number"),
    ([{**MESSAGES[0], "id": True}], "'id' must be a positive whole number"),
    ([MESSAGES[0], {**MESSAGES[1], "id": 3}], "line 2: message id 3 is used twice"),
    ([{**MESSAGES[0], "date": "2026-03-02T08:20:00+01:00"}], "not a UTC ISO 8601 time"),
    ([{**MESSAGES[0], "date": "2026-03-02 08:20"}], "not a UTC ISO 8601 time"),
    ([{**MESSAGES[0], "date": "2026-02-30T08:20:00Z"}], "not a real calendar time"),
    ([{**MESSAGES[0], "speaker": ""}], "'speaker' must be a non-empty string"),
    ([{**MESSAGES[0], "text": "  "}], "'text' must be a non-empty string"),
    ([{**MESSAGES[0], "channel": "x"}], "line 1: unknown field 'channel' in message"),
    ([{k: v for k, v in MESSAGES[0].items() if k != "speaker"}], "message is missing 'speaker'"),
    (["{not json"], "line 1: invalid JSON"),
    (['{"id": 3, "id": 4}'], "duplicate key 'id'"),
    (["[1, 2]"], "expected a JSON object, found list"),
    (['{"id": 3, "date": "2026-03-02T08:20:00Z", "speaker": "R", "text": "\\ud800"}'], "surrogate"),
    ([], "has no messages"),
]


@pytest.mark.parametrize(("messages", "message"), MESSAGE_CASES)
def test_message_rules(tmp_path: Path, messages: list[Any], message: str) -> None:
    assert message in _refused(tmp_path, messages, [RECORD])


RECORD_CASES = [
    (_record(statment="typo"), "line 1: unknown field 'statment' in record"),
    (
        _record(quotes=[_q(3, QUOTE, page=1)]),
        "unknown field 'page' in quote",
    ),
    (_record(topic=None), "record is missing 'topic'"),
    (_record(quotes=[{"quote": QUOTE}]), "quote is missing 'message_id'"),
    (_record(record_id="garden-3"), "record_id 'garden-3' is not M- followed by"),
    (_record(role="human"), 'role must be "user" or "agent"'),
    (_record(category=""), "'category' must be a non-empty string"),
    (_record(statement=" "), "'statement' must be a non-empty string"),
    (_record(quotes=[]), "'quotes' must be a non-empty list"),
    (_record(quotes="the shed"), "'quotes' must be a non-empty list"),
    (_record(quotes=["the shed"]), "each entry of 'quotes' must be an object"),
    (
        _record(quotes=[_q(9, "x")]),
        "cites message 9, which is not in the messages",
    ),
    (_record(quotes=[_q(3, "")]), "'quote' must be a non-empty string"),
    (
        _record(quotes=[_q(3, "The café")]),
        "does not appear verbatim in message 3",
    ),
    (
        _record(quotes=[_q(4, "the")]),
        'appears 3 times in message 4; add "start" with one of 0, 4, 8',
    ),
    (
        _record(quotes=[_q(4, "the", start=2)]),
        "does not start at 2 in message 4; use one of start = 0, 4, 8",
    ),
    (
        _record(
            quotes=[
                _q(3, "seedlings"),
                _q(5, "seedlings"),
            ]
        ),
        'the cited messages have different speakers (Assistant, Rowan); add "speaker"',
    ),
]


@pytest.mark.parametrize(("record", "message"), RECORD_CASES)
def test_record_rules(tmp_path: Path, record: dict[str, Any], message: str) -> None:
    assert message in _refused(tmp_path, MESSAGES, [record])


def test_duplicate_record_id_names_both_lines(tmp_path: Path) -> None:
    message = _refused(tmp_path, MESSAGES, [RECORD, RECORD])
    assert "line 2: record_id 'M-garden-3' is already used on line 1" in message


def test_no_records_is_refused(tmp_path: Path) -> None:
    assert "has no records" in _refused(tmp_path, MESSAGES, [])


def test_a_pack_the_verifier_refuses_is_never_moved_into_place(tmp_path: Path) -> None:
    # Each record is fine on its own, but together they pass the 16 MiB data-file limit:
    # only the final verification of the staged pack can catch it.
    text = "seedlings " * 9_000
    messages = [
        {"id": i, "date": "2026-03-02T08:20:00Z", "speaker": "Rowan", "text": text}
        for i in range(1, 121)
    ]
    records = [
        _record(record_id=f"M-big-{i}", quotes=[{"message_id": i, "quote": text.strip()}])
        for i in range(1, 121)
    ]
    message = _refused(tmp_path, messages, records)
    assert message.startswith("pack refused: ")
    assert f"the limit is {fmt.MAX_DATA_FILE}" in message


def test_cli_build_and_one_line_errors(tmp_path: Path, home: Path) -> None:
    out = tmp_path / "cli-pack"
    args = ["pack", "build", "--messages", str(SAMPLE_MESSAGES), "--records", str(SAMPLE_RECORDS)]
    done = run_cli([*args, "--out", str(out), "--title", SAMPLE_TITLE], home)
    assert done.returncode == 0, done.stderr
    assert f"built {out} (10 records)" in done.stdout
    assert len(verify_pack(out).records) == 10

    again = run_cli([*args, "--out", str(out), "--title", SAMPLE_TITLE], home)
    assert again.returncode == ConflictError.exit_code
    assert again.stderr.strip().splitlines() == [
        f"affidavit: error: {out} already exists; "
        "build into a new directory; nothing is overwritten"
    ]

    bad = jsonl(tmp_path / "bad.jsonl", [_record(quotes=[_q(3, "nope")])])
    messages = jsonl(tmp_path / "m.jsonl", MESSAGES)
    failed = run_cli(
        [
            "pack",
            "build",
            "--messages",
            str(messages),
            "--records",
            str(bad),
            "--out",
            str(tmp_path / "never"),
            "--title",
            "T",
        ],
        home,
    )
    assert failed.returncode == InputError.exit_code
    assert len(failed.stderr.strip().splitlines()) == 1
    assert "bad.jsonl line 1: quote 'nope' does not appear verbatim in message 3" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / "never").exists()


def test_cli_build_json_and_a_missing_input_named_by_its_flag(tmp_path: Path, home: Path) -> None:
    out = tmp_path / "cli-pack"
    args = ["pack", "build", "--messages", str(SAMPLE_MESSAGES), "--title", SAMPLE_TITLE]
    done = run_cli([*args, "--records", str(SAMPLE_RECORDS), "--out", str(out), "--json"], home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["path"] == str(out) and report["records"] == 10
    assert set(report["files"]) == {fmt.RECORDS, fmt.MEMORY, fmt.README, fmt.SUMS}
    missing = tmp_path / "records.jsonl"
    gone = run_cli([*args, "--records", str(missing), "--out", str(tmp_path / "o")], home)
    assert gone.returncode == NotFoundError.exit_code
    assert gone.stderr.strip().splitlines() == [
        f"affidavit: error: --records {missing} does not exist; check the path"
    ]


def test_builds_the_reference_formats_documented_example_byte_for_byte(tmp_path: Path) -> None:
    # The verified-memory format documents this input and the record line it must produce
    # (offsets 48..100, this message_sha256); our builder must agree to the byte.
    text = (
        "Quick thing first: the shed code changed. "
        "Also, the café on the corner sells seedlings on Saturdays."
    )
    quote = "the café on the corner sells seedlings on Saturdays."
    message = {"id": 3, "date": "2026-03-02T08:20:00Z", "speaker": "Rowan", "text": text}
    record = {
        "record_id": "M-garden-3",
        "role": "user",
        "topic": "Seedlings",
        "category": "places",
        "quotes": [{"message_id": 3, "quote": quote}],
    }
    pack = _build(tmp_path, [message], [record])
    assert (pack / fmt.RECORDS).read_text(encoding="utf-8") == REFERENCE_RECORD_LINE + "\n"
