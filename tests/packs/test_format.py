"""Every record, citation, date, manifest and PACK.json rule, one refusal message each."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError
from tests.packs.conftest import REFERENCE_RECORD_LINE, make_record, pack_json, records_bytes


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-02T08:20:00Z",
        "2026-03-02T08:20:00+00:00",
        "2026-03-02T08:20:00.5Z",
        "2026-03-02T08:20:00.123456789Z",
        "2024-02-29T23:59:59Z",
    ],
)
def test_utc_accepts(text: str) -> None:
    assert fmt.parse_utc(text).utcoffset().total_seconds() == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-03-02T08:20:00", "not a UTC ISO 8601 time"),
        ("2026-03-02T08:20:00+01:00", "not a UTC ISO 8601 time"),
        ("2026-03-02", "not a UTC ISO 8601 time"),
        ("2026-03-02 08:20:00Z", "not a UTC ISO 8601 time"),
        ("2026-03-02T08:20Z", "not a UTC ISO 8601 time"),
        ("2026-03-02T08:20:00.Z", "not a UTC ISO 8601 time"),
        ("٢٠٢٦-03-02T08:20:00Z", "not a UTC ISO 8601 time"),
        ("2026-03-02T08:20:00Z\n", "not a UTC ISO 8601 time"),
        ("2026-02-30T08:20:00Z", "not a real calendar time"),
        ("2025-02-29T08:20:00Z", "not a real calendar time"),
        ("2026-13-01T08:20:00Z", "not a real calendar time"),
        ("2026-03-02T24:00:00Z", "not a real calendar time"),
        ("2026-03-02T08:60:00Z", "not a real calendar time"),
        ("2026-03-02T08:20:60Z", "not a real calendar time"),
        ("0000-01-01T00:00:00Z", "not a real calendar time"),
    ],
)
def test_utc_refuses(text: str, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.parse_utc(text)


def test_utc_key_orders_fractions_and_offsets() -> None:
    assert fmt.utc_key("2026-03-02T08:20:00.1Z") > fmt.utc_key("2026-03-02T08:20:00.09Z")
    assert fmt.utc_key("2026-03-02T08:20:00.0000001Z") > fmt.utc_key("2026-03-02T08:20:00Z")
    assert fmt.utc_key("2026-03-02T08:20:00+00:00") == fmt.utc_key("2026-03-02T08:20:00Z")


def with_change(path: str, value: Any) -> dict[str, Any]:
    """A valid record with one field (``a.b.0.c``) replaced, or deleted when value is DELETE."""
    record = make_record(1)
    record["evidence"][0]["message_id"] = 1
    target: Any = record
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
    if value is DELETE:
        del target[key]
    else:
        target[key] = value
    return record


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("record_id", "X-1", "is not M- followed by"),
        ("record_id", "M-", "is not M- followed by"),
        ("record_id", "M-" + "a" * 128, "is not M- followed by"),
        ("record_id", "M-é", "is not M- followed by"),
        ("record_id", "M-a\n", "is not M- followed by"),
        ("record_id", 7, "is not M- followed by"),
        ("role", "system", 'role must be "user" or "agent"'),
        ("role", DELETE, 'role must be "user" or "agent"'),
        ("speaker", "", "speaker must be a non-empty string"),
        ("statement", "   ", "statement must be a non-empty string"),
        ("topic", ["x"], "topic must be a non-empty string"),
        ("category", DELETE, "category must be a non-empty string"),
        ("date_first_utc", "2026-03-02", "date_first_utc: .* not a UTC ISO 8601"),
        ("date_last_utc", 20260302, "date_last_utc must be a UTC ISO 8601 time string"),
        ("date_first_utc", "2026-12-31T00:00:00Z", "later than date_last_utc"),
        ("date_last_utc", "2026-02-30T00:00:00Z", "not a real calendar time"),
        ("evidence", [], "evidence must be a non-empty list"),
        ("evidence", {"quote": "x"}, "evidence must be a non-empty list"),
        ("evidence.0", "quote", r"evidence\[0\] must be a JSON object"),
        ("evidence.0.message_id", 0, r"evidence\[0\].message_id must be a positive integer"),
        ("evidence.0.message_id", True, "message_id must be a positive integer"),
        ("evidence.0.message_id", 1.5, "message_id must be a positive integer"),
        ("evidence.0.message_id", 2**53, "message_id must be a positive integer"),
        ("evidence.0.date_utc", "2026-01-01T00:00:00Z", "date_utc is outside the record"),
        ("evidence.0.date_utc", DELETE, "date_utc must be a UTC ISO 8601 time string"),
        ("evidence.0.quote", "", "quote must be a non-empty string"),
        ("evidence.0.start", -1, "start and .end must be integers >= 0"),
        ("evidence.0.end", "9", "start and .end must be integers >= 0"),
        ("evidence.0.end", 40, "end - start is 3 but the quote has 38 code points"),
        ("evidence.0.message_sha256", "A" * 64, "message_sha256 must be 64 lowercase hex"),
        ("evidence.0.message_sha256", "a" * 63, "message_sha256 must be 64 lowercase hex"),
    ],
)
def test_record_rules(path: str, value: Any, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.check_record(with_change(path, value))


def test_record_not_an_object() -> None:
    with pytest.raises(PackFormatError, match="not a JSON object"):
        fmt.check_record([make_record(1)])


def test_offsets_count_code_points_not_utf16_units() -> None:
    record = make_record(1)
    citation = record["evidence"][0]
    citation["quote"] = "seeds 🌱 here"
    citation["start"], citation["end"] = 3, 3 + 12
    assert fmt.check_record(record) == "M-garden-1"


def test_extra_fields_are_kept_and_record_order_is_file_order() -> None:
    first = make_record(2, supersedes="M-garden-9", approval={"by": "Rowan"})
    first["evidence"][0]["note"] = "kept"
    records = fmt.parse_records(records_bytes([first, make_record(1)]))
    assert [r["record_id"] for r in records] == ["M-garden-2", "M-garden-1"]
    assert records[0]["approval"] == {"by": "Rowan"}
    assert records[0]["evidence"][0]["note"] == "kept"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "has no records"),
        ("\n \r\n\ufeff\n".encode(), "has no records"),  # blank lines only
        (b"{not json}\n", "line 1: invalid JSON"),
        (b'{"record_id": NaN}\n', "line 1: invalid JSON"),
        (b'{"record_id": "M-\\ud800"}\n', "line 1: invalid JSON"),
        (b"\xef\xbb\xbf" + records_bytes([make_record(1)]), "line 1: invalid JSON"),
        (b'"just a string"\n', "line 1: the line is not a JSON object"),
        (records_bytes([make_record(1)])[:-5] + b'\xff\xfe"}\n', "not valid UTF-8"),
        (
            records_bytes([make_record(1), make_record(1)]),
            "line 2: record_id M-garden-1 appears twice",
        ),
    ],
)
def test_records_file_rules(data: bytes, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.parse_records(data)


def test_records_without_final_newline_and_with_crlf_parse() -> None:
    body = records_bytes([make_record(1), make_record(2)])
    assert len(fmt.parse_records(body.rstrip(b"\n"))) == 2
    assert len(fmt.parse_records(body.replace(b"\n", b"\r\n"))) == 2


def test_record_limit_is_10000() -> None:
    body = records_bytes(make_record(i) for i in range(1, 10_002))
    last = body.rindex(b'{"record_id"')
    assert len(fmt.parse_records(body[:last])) == 10_000
    with pytest.raises(PackFormatError, match="has more than 10000 records"):
        fmt.parse_records(body)
    with pytest.raises(PackFormatError, match="has more than 10000 records"):
        fmt.parse_records(body.rstrip(b"\n"))


HEX = "a" * 64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{HEX} records.jsonl\n", "line 1 is not '<64 lowercase hex>  <file name>'"),
        (f"{HEX} *records.jsonl\n", "line 1 is not"),
        (f"{'A' * 64}  records.jsonl\n", "line 1 is not"),
        (f"{HEX}  records.jsonl\n\n", "line 2 is not"),
        (f"{HEX}  records.jsonl\r", "lists 'records.jsonl\\\\r', which is not a file of a pack"),
        (f"{HEX}  SHA256SUMS\n", "lists SHA256SUMS; the manifest never lists itself"),
        (f"{HEX}  SHA256SUMS.sig\n", "never lists the signature over it"),
        (f"{HEX}  ./records.jsonl\n", "which is not a file of a pack"),
        (f"{HEX}  records.jsonl\n{HEX}  records.jsonl\n", "lists records.jsonl twice"),
    ],
)
def test_manifest_rules(text: str, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.parse_manifest(text.encode())


def test_manifest_size_limit_and_render_roundtrip() -> None:
    with pytest.raises(PackFormatError, match="at most 4096"):
        fmt.parse_manifest(b"#" * 4097)
    digests = {"records.jsonl": HEX, "MEMORY.md": "b" * 64, "README.md": "c" * 64}
    rendered = fmt.render_manifest(digests)
    assert rendered.decode().splitlines()[0].endswith("  MEMORY.md")
    assert fmt.parse_manifest(rendered) == digests


def pack_json_bytes(**changes: Any) -> bytes:
    body = pack_json(sequence=3)
    for key, value in changes.items():
        if value is DELETE:
            del body[key]
        else:
            body[key] = value
    return json.dumps(body).encode()


def test_pack_json_valid() -> None:
    meta = fmt.parse_pack_json(pack_json_bytes())
    assert (meta.created_utc, meta.expires_utc, meta.sequence) == (
        "2026-01-01T00:00:00Z",
        "2099-01-01T00:00:00Z",
        3,
    )
    assert fmt.parse_pack_json(pack_json_bytes(sequence=DELETE)).sequence is None
    assert fmt.parse_pack_json(pack_json_bytes(sequence=0)).sequence == 0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"signer": "alice"}, "unknown key 'signer'"),
        ({"format": DELETE}, "missing format"),
        ({"expires_utc": DELETE}, "missing expires_utc"),
        ({"format": "verified-memory"}, "format must be 'verified-memory-pack'"),
        ({"version": 3}, "version must be 2"),
        ({"version": "2"}, "version must be 2"),
        ({"version": True}, "version must be 2"),
        ({"version": 2.5}, "version must be 2"),
        ({"created_utc": "2026-01-01"}, "PACK.json: .* not a UTC ISO 8601"),
        ({"expires_utc": "2026-01-01T00:00:00Z"}, "created_utc must be before expires_utc"),
        ({"expires_utc": "2025-01-01T00:00:00Z"}, "created_utc must be before expires_utc"),
        ({"sequence": -1}, "sequence must be a whole number"),
        ({"sequence": 1.5}, "sequence must be a whole number"),
        ({"sequence": True}, "sequence must be a whole number"),
        ({"sequence": "3"}, "sequence must be a whole number"),
        ({"sequence": None}, "sequence must be a whole number"),
    ],
)
def test_pack_json_rules(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.parse_pack_json(pack_json_bytes(**changes))


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"[]", "must be a JSON object"), (b"{", "PACK.json: invalid JSON"), (b"\xff", "not valid")],
)
def test_pack_json_not_an_object(data: bytes, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        fmt.parse_pack_json(data)


def test_meta_roundtrip() -> None:
    meta = fmt.parse_pack_json(pack_json_bytes())
    again = fmt.make_meta(meta.created, meta.expires, meta.sequence)
    assert fmt.parse_pack_json(again.as_json_bytes()) == again == meta
    assert copy.deepcopy(meta) == meta


def test_reference_documented_record_is_accepted() -> None:
    """The example line of the verified-memory format description, as published."""
    line = REFERENCE_RECORD_LINE
    (record,) = fmt.parse_records(line.encode("utf-8") + b"\n")
    assert record["record_id"] == "M-garden-3"
