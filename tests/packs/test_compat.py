"""Compatibility with the reference verifier, both directions, one class of input at a time.

The reference is JavaScript: it reads records and SHA256SUMS line by line (LF or CRLF, the
last line may lack its newline, blank record lines are skipped), parses with ``JSON.parse``
(so ``2.0`` *is* the integer 2), and judges "non-empty" text with ``String.prototype.trim()``.
Packs it accepts because of that must load here; what it refuses must be refused here, with
a specific message. The character set and the number rule are checked against a real Node
where one is installed, not against our own reading of the spec.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError, PackRefused
from affidavit.packs.verify import verify_pack
from affidavit.servers.packs import GET_TOOL
from tests.packs._build_fixtures import SAMPLE_MESSAGES, SAMPLE_RECORDS, build_sample, tool_body
from tests.packs.conftest import (
    SshKey,
    keygen_sign,
    make_record,
    pack_json,
    records_bytes,
    reseal,
    ssh_keygen_verify,
    trusted_keys_file,
    write_pack,
)
from tests.support import NODE_TOOLS, mcp_client, run_cli

_BUNDLED_NODE = NODE_TOOLS / ".bin" / "node"
NODE = str(_BUNDLED_NODE) if _BUNDLED_NODE.exists() else shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="no Node.js to compare with")


def _node(script: str, *args: str) -> Any:
    """Run ``script`` in a real Node.js; it prints one JSON value, returned parsed."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", script, "--", *args], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def _refused(pack: Path) -> PackRefused:
    with pytest.raises(PackRefused) as caught:
        verify_pack(pack)
    assert "\n" not in str(caught.value)
    return caught.value


def _rewrite(pack: Path, name: str, data: bytes) -> Path:
    """Replace one sealed file and reseal, as a hand-editing pack maker would."""
    (pack / name).write_bytes(data)
    reseal(pack)
    return pack


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


# --- the two rules checked against a real JavaScript engine ------------------------------


def test_trimmed_characters_are_javascripts_whitespace_and_line_terminators() -> None:
    """ECMAScript's WhiteSpace (TAB, VT, FF, ZWNBSP, every Zs) plus its LineTerminators."""
    space_separators = {chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Zs"}
    expected = {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"} | space_separators
    assert set(fmt.JS_WHITESPACE) == expected
    assert len(fmt.JS_WHITESPACE) == len(expected) == 25
    assert "\x1c" not in expected and "\x85" not in expected  # Python's isspace() differs
    # fmt.is_blank relies on bytes.strip() removing exactly the ASCII part of the set.
    ascii_stripped = {chr(byte) for byte in range(128) if not bytes([byte]).strip()}
    assert ascii_stripped == {char for char in expected if char < "\x80"}


@needs_node
def test_trimmed_characters_match_node_trim() -> None:
    script = (
        "const out = [];"
        "for (let cp = 0; cp <= 0x10ffff; cp++) {"
        "  if (cp >= 0xd800 && cp <= 0xdfff) continue;"
        "  if (String.fromCodePoint(cp).trim() === '') out.push(cp);"
        "}"
        "process.stdout.write(JSON.stringify(out));"
    )
    assert sorted(map(ord, fmt.JS_WHITESPACE)) == _node(script)


NUMBER_SPELLINGS = [
    "3", "3.0", "3.00", "3e0", "30e-1", "0.3e1", "3.0000000000000001", "-0", "-0.0", "0",
    "2.5", "-1", "-1.0", "9007199254740991", "9007199254740991.0", "9007199254740992",
    "9007199254740993", "1e16", "1e300", "true", "false", "null", '"3"', "[3]",
]  # fmt: skip


@needs_node
def test_whole_numbers_are_what_javascript_reads_as_safe_integers() -> None:
    script = (
        "const out = process.argv.slice(1).map(s => {"
        "  const v = JSON.parse(s); return Number.isSafeInteger(v) ? v : null; });"
        "process.stdout.write(JSON.stringify(out));"
    )
    javascript = _node(script, *NUMBER_SPELLINGS)
    ours = [
        fmt.whole_number(orjson.loads(spelling), -fmt.MAX_SAFE_INTEGER)
        for spelling in NUMBER_SPELLINGS
    ]
    assert ours == javascript
    assert all(type(value) is int for value in ours if value is not None)


# --- packs the reference accepts load here --------------------------------------------


def test_crlf_manifest_without_final_newline_loads_and_its_signature_verifies(
    tmp_path: Path, ssh_key: SshKey
) -> None:
    """SHA256SUMS written on Windows (CRLF), last line unterminated, signed by ssh-keygen."""
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=2))
    sums = pack / fmt.SUMS
    sums.write_bytes(sums.read_bytes().replace(b"\n", b"\r\n").removesuffix(b"\r\n"))
    signature = keygen_sign(pack, ssh_key)
    allowed = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    assert ssh_keygen_verify(allowed, "alice", signature, sums.read_bytes()).returncode == 0

    verified = verify_pack(pack)
    assert verified.report.signature.fingerprint == ssh_key.fingerprint
    assert sorted(verified.report.digests) == [fmt.MEMORY, fmt.PACK_JSON, fmt.README, fmt.RECORDS]
    assert verified.report.meta is not None and verified.report.meta.sequence == 2


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda sums: sums.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(lambda sums: sums.removesuffix(b"\n"), id="no-final-newline"),
        pytest.param(lambda sums: sums.replace(b"\n", b"\r\n", 1), id="mixed-line-endings"),
    ],
)
def test_manifest_line_endings(tmp_path: Path, shape: Any) -> None:
    pack = write_pack(tmp_path / "pack")
    sums = pack / fmt.SUMS
    sums.write_bytes(shape(sums.read_bytes()))
    assert verify_pack(pack).report.record_count == 2


ONE, TWO = _line(make_record(1)), _line(make_record(2))


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(f"{ONE}\r\n{TWO}\r\n", id="crlf"),
        pytest.param(f"{ONE}\n{TWO}", id="no-final-newline"),
        pytest.param(f"{ONE}\r\n{TWO}", id="crlf-no-final-newline"),
        pytest.param(f"\n{ONE}\n\n\n{TWO}\n\n", id="empty-lines"),
        pytest.param(f"{ONE}\r\n\r\n{TWO}\r\n", id="crlf-empty-line"),
        pytest.param(f"{ONE}\n \t\x0b\x0c\n{TWO}\n", id="ascii-whitespace-line"),
        pytest.param(f"{ONE}\n\u00a0\u3000\n{TWO}\n", id="unicode-space-line"),
        pytest.param(f"{ONE}\n\ufeff\n{TWO}\n", id="zwnbsp-line"),
        pytest.param(f"{ONE}\n\u2028\u2029\r\n{TWO}\n", id="line-separator-line"),
    ],
)
def test_records_line_shapes_load(tmp_path: Path, body: str) -> None:
    pack = write_pack(tmp_path / "pack")
    _rewrite(pack, fmt.RECORDS, body.encode("utf-8"))
    verified = verify_pack(pack)
    assert [r["record_id"] for r in verified.records] == ["M-garden-1", "M-garden-2"]


def test_record_limit_counts_records_not_blank_lines(tmp_path: Path) -> None:
    body = records_bytes(make_record(i) for i in range(1, 10_001)).replace(b"\n", b"\n\n")
    assert len(fmt.parse_records(body)) == 10_000
    with pytest.raises(PackFormatError, match="more than 10000 records"):
        fmt.parse_records(body + records_bytes([make_record(10_001)]))


def test_blank_lines_are_bounded() -> None:
    """16 MiB of newlines is refused on the line count, before any line is looked at."""
    one = records_bytes([make_record(1)])
    assert len(fmt.parse_records(one + b"\n" * (fmt.MAX_RECORD_LINES - 1))) == 1
    with pytest.raises(PackFormatError, match=r"more than 100000 lines; .* remove the blank"):
        fmt.parse_records(one + b"\n" * fmt.MAX_RECORD_LINES)
    with pytest.raises(PackFormatError, match="more than 100000 lines"):
        fmt.parse_records(one + b"\r\n" * (fmt.MAX_DATA_FILE // 2 - len(one)))


def test_integral_numbers_load_and_are_served_as_integers(tmp_path: Path, home: Path) -> None:
    """``2.0``, ``1.8e1`` and ``3.0`` are integers to JSON.parse; served as 2, 18 and 3."""
    record = make_record(2)
    start, end = record["evidence"][0]["start"], record["evidence"][0]["end"]
    line = (
        _line(record)
        .replace('"message_id":2,', '"message_id":2.0,')
        .replace(f'"start":{start},', f'"start":{start / 10}e1,')
        .replace(f'"end":{end},', f'"end":{end}.000,')
    )
    meta = b'{"format":"verified-memory-pack","version":2.0,'
    meta += b'"created_utc":"2026-01-01T00:00:00Z","expires_utc":"2099-01-01T00:00:00Z",'
    meta += b'"sequence":3.0}'
    pack = write_pack(tmp_path / "pack", [line], pack_json=meta)

    verified = verify_pack(pack)
    citation = verified.records[0]["evidence"][0]
    assert [citation["message_id"], citation["start"], citation["end"]] == [2, start, end]
    assert {type(citation[k]) for k in ("message_id", "start", "end")} == {int}
    assert verified.report.meta is not None and verified.report.meta.sequence == 3
    assert type(verified.report.meta.sequence) is int

    async def get() -> Any:
        async with mcp_client(["pack", "serve", f"--pack={pack}"], home) as client:
            return await client.call_tool(GET_TOOL, {"id": "M-garden-2"})

    served = tool_body(anyio.run(get))["record"]["evidence"][0]
    assert (served["message_id"], served["start"], served["end"]) == (2, start, end)


def test_a_pack_in_the_lenient_spellings_signs_and_verifies(
    tmp_path: Path, ssh_key: SshKey
) -> None:
    """CRLF, blank lines, 2.0 and no final newline: ``pack sign`` takes it, ssh-keygen agrees."""
    from affidavit.packs.sign import sign_pack
    from affidavit.packs.trust import TrustOptions

    two = TWO.replace('"message_id":2,', '"message_id":2.0,')
    body = f"\r\n{ONE}\r\n\r\n{two}"
    pack = _rewrite(write_pack(tmp_path / "pack"), fmt.RECORDS, body.encode("utf-8"))
    sums = pack / fmt.SUMS
    sums.write_bytes(sums.read_bytes().replace(b"\n", b"\r\n").removesuffix(b"\r\n"))
    now = datetime.now(UTC).replace(microsecond=0)
    out = sign_pack(
        pack, ssh_key.private, now + timedelta(days=30), tmp_path / "signed", sequence=1, now=now
    ).out
    assert (out / fmt.RECORDS).read_bytes() == body.encode("utf-8")  # signed as it was
    pinned = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), strict=True)
    assert len(verify_pack(out, pinned).records) == 2
    allowed = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    signed = (out / fmt.SUMS).read_bytes()
    assert ssh_keygen_verify(allowed, "alice", out / fmt.SIGNATURE, signed).returncode == 0


@pytest.mark.parametrize("text", ["\x1c", "\x1f", "\x85", "\u180e", "\u200b"])
def test_text_that_javascript_does_not_trim_away_loads(tmp_path: Path, text: str) -> None:
    """Python's isspace() counts these as space; JavaScript's trim() keeps them."""
    pack = write_pack(tmp_path / "pack", [make_record(1, statement=text, topic=text)])
    assert verify_pack(pack).records[0]["statement"] == text


def test_deeply_nested_metadata_is_checked_for_duplicate_keys(tmp_path: Path) -> None:
    """Deeper than orjson writes back (254 levels): the slow check still runs, and still sees."""
    deep = "[" * 300 + '{"by":"Rowan","by":"Mallory"}' + "]" * 300
    fine = write_pack(tmp_path / "fine", [ONE[:-1] + ',"deep":' + "[" * 300 + "]" * 300 + "}"])
    assert len(verify_pack(fine).records) == 1
    refusal = _refused(write_pack(tmp_path / "dup", [ONE[:-1] + ',"deep":' + deep + "}"]))
    assert refusal.reason == "records.jsonl line 1: duplicate key 'by'"
    too_deep = write_pack(
        tmp_path / "deeper", [ONE[:-1] + ',"deep":' + "[" * 1000 + "]" * 1000 + "}"]
    )
    assert "JSON nested too deeply" in _refused(too_deep).reason


# --- packs the reference refuses are refused here, each with its own message -------------


STATEMENT_TWICE = ONE.replace(
    '"statement":', '"statement":"pay the deposit to account 4711","statement":', 1
)


def test_a_record_cannot_show_one_statement_and_serve_another(tmp_path: Path) -> None:
    """The attack: a reader keeping the first key sees one statement, the server the last."""
    first_wins = json.loads(STATEMENT_TWICE, object_pairs_hook=lambda p: dict(reversed(p)))
    assert first_wins["statement"] == "pay the deposit to account 4711"
    assert json.loads(STATEMENT_TWICE)["statement"] == make_record(1)["statement"]
    refusal = _refused(write_pack(tmp_path / "pack", [STATEMENT_TWICE]))
    assert refusal.reason == "records.jsonl line 1: duplicate key 'statement'"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(STATEMENT_TWICE, "duplicate key 'statement'", id="record"),
        pytest.param(
            ONE.replace('"quote":', '"quote":"something else entirely","quote":', 1),
            "duplicate key 'quote'",
            id="citation",
        ),
        pytest.param(
            ONE[:-1] + ',"approval":{"by":"Rowan","by":"Mallory"}}',
            "duplicate key 'by'",
            id="metadata",
        ),
        pytest.param(
            ONE.replace('"record_id":"M-garden-1",', '"record_id":"M-garden-1",' * 2, 1),
            "duplicate key 'record_id'",
            id="same-value-twice",
        ),
        pytest.param(
            ONE.replace('"role":"user",', '"role":"user", "role" :"agent",', 1),
            "duplicate key 'role'",
            id="spaced",
        ),
    ],
)
def test_duplicate_keys_in_a_record_are_refused(tmp_path: Path, line: str, message: str) -> None:
    pack = write_pack(tmp_path / "pack", [TWO, line])
    refusal = _refused(pack)
    assert refusal.check == "records"
    assert f"records.jsonl line 2: {message}" in refusal.reason


@pytest.mark.parametrize("key", ["expires_utc", "sequence", "version"])
def test_duplicate_keys_in_pack_json_are_refused(tmp_path: Path, key: str) -> None:
    body = json.dumps(pack_json(sequence=3), indent=2)
    value = {"expires_utc": '"2199-01-01T00:00:00Z"', "sequence": "9", "version": "2"}[key]
    twice = body.replace(f'"{key}":', f'"{key}": {value},\n  "{key}":', 1)
    pack = write_pack(tmp_path / "pack", pack_json=twice.encode())
    refusal = _refused(pack)
    assert refusal.check == "pack_json"
    assert refusal.reason == f"PACK.json: duplicate key {key!r}"


HEX = "0" * 64


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param(
            f"{HEX}  SHA256SUMS.sig",
            "SHA256SUMS line 5 lists SHA256SUMS.sig; the manifest never lists the signature",
            id="signature",
        ),
        pytest.param(
            f"{HEX}  SHA256SUMS",
            "SHA256SUMS line 5 lists SHA256SUMS; the manifest never lists itself",
            id="itself",
        ),
        pytest.param(
            f"{HEX}  notes.txt",
            "SHA256SUMS line 5 lists 'notes.txt', which is not a file of a pack",
            id="other-file",
        ),
        pytest.param(
            f"{HEX}  ./records.jsonl",
            "SHA256SUMS line 5 lists './records.jsonl', which is not a file of a pack",
            id="path",
        ),
        pytest.param(
            f"{HEX}  README.md\r{HEX}  x",
            "SHA256SUMS line 5 lists 'README.md\\r",
            id="lone-cr",
        ),
    ],
)
def test_manifest_entries_outside_the_sealed_files_are_refused(
    tmp_path: Path, entry: str, message: str
) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json())
    sums = pack / fmt.SUMS
    sums.write_bytes(sums.read_bytes() + entry.encode() + b"\n")
    refusal = _refused(pack)
    assert refusal.check == "checksums"
    assert message in refusal.reason


TRIMMED_AWAY = ["\ufeff", " \ufeff ", "\u3000\u2028", "\u00a0", "\u202f\u205f\u1680"]


@pytest.mark.parametrize("text", TRIMMED_AWAY)
@pytest.mark.parametrize("field", ["speaker", "statement", "topic", "category", "quote"])
def test_text_empty_after_javascript_trim_is_refused(tmp_path: Path, field: str, text: str) -> None:
    record = make_record(1)
    citation = record["evidence"][0]
    if field == "quote":
        citation["quote"], citation["end"] = text, citation["start"] + len(text)
        expected = "M-garden-1: evidence[0].quote must be a non-empty string"
    else:
        record[field] = text
        expected = f"M-garden-1: {field} must be a non-empty string"
    refusal = _refused(write_pack(tmp_path / "pack", [record]))
    assert refusal.check == "records"
    assert refusal.reason == f"records.jsonl line 1: {expected}"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("message_id", 2.5, "message_id must be a positive integer"),
        ("message_id", 0.0, "message_id must be a positive integer"),
        ("message_id", 9007199254740992.0, "message_id must be a positive integer"),
        ("start", -1.0, "start and .end must be integers >= 0"),
        ("end", 1e300, "start and .end must be integers >= 0"),
    ],
)
def test_numbers_javascript_does_not_read_as_safe_integers_are_refused(
    tmp_path: Path, path: str, value: float, message: str
) -> None:
    record = make_record(1)
    record["evidence"][0][path] = value
    refusal = _refused(write_pack(tmp_path / "pack", [record]))
    assert message in refusal.reason


# --- the builder applies the same rules, so it never writes what a host refuses ----------


def _inputs(tmp_path: Path, messages: list[str], records: list[str]) -> tuple[Path, Path]:
    paths = tmp_path / "messages.jsonl", tmp_path / "records.jsonl"
    for path, lines in zip(paths, (messages, records), strict=True):
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


MESSAGE = {"id": 3, "date": "2026-03-02T08:20:00Z", "speaker": "Rowan", "text": "seeds on Sat"}
RECORD = {
    "record_id": "M-seeds-1",
    "role": "user",
    "topic": "Seeds",
    "category": "places",
    "quotes": [{"message_id": 3, "quote": "seeds"}],
}


@pytest.mark.parametrize(
    ("message", "record", "error"),
    [
        ({"speaker": "\ufeff"}, {}, "messages.jsonl line 1: message 'speaker' must be a non-empty"),
        ({"text": "\u3000"}, {}, "messages.jsonl line 1: message 'text' must be a non-empty"),
        ({}, {"topic": "\u00a0\ufeff"}, "records.jsonl line 1: record 'topic' must be a non-empty"),
        ({}, {"statement": "\u2028"}, "records.jsonl line 1: record 'statement' must be a non-"),
    ],
)
def test_builder_refuses_text_that_javascript_trims_to_nothing(
    tmp_path: Path, message: dict[str, Any], record: dict[str, Any], error: str
) -> None:
    from affidavit.core.errors import InputError
    from affidavit.packs.build import build_pack

    paths = _inputs(tmp_path, [_line({**MESSAGE, **message})], [_line({**RECORD, **record})])
    with pytest.raises(InputError) as caught:
        build_pack(*paths, tmp_path / "pack", "Seeds")
    assert error in str(caught.value)
    assert not (tmp_path / "pack").exists()


def test_builder_reads_input_as_the_verifier_reads_a_pack(tmp_path: Path) -> None:
    """Integral numbers become integers; blank lines are the ones trim() empties; CRLF works."""
    from affidavit.packs.build import build_pack

    message = _line(MESSAGE).replace('"id":3', '"id":3.0')
    record = _line(RECORD).replace('"message_id":3', '"message_id":3e0')
    record = record.replace('"quote":"seeds"}', '"quote":"seeds","start":0.0}')
    paths = _inputs(tmp_path, ["\ufeff", message, "\u3000\r"], ["", record + "\r"])
    pack = build_pack(*paths, tmp_path / "pack", "Seeds").path
    written = (pack / fmt.RECORDS).read_text(encoding="utf-8")
    assert '"message_id":3,' in written and '"start":0,' in written


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"id": 3, "id": 4}', "messages.jsonl line 1: duplicate key 'id'"),
        ("\x1c", "messages.jsonl line 1: invalid JSON"),  # not blank to JavaScript
        ('{"id": NaN}', "messages.jsonl line 1: invalid JSON"),
    ],
)
def test_builder_refuses_json_the_verifier_refuses(tmp_path: Path, line: str, error: str) -> None:
    from affidavit.core.errors import InputError
    from affidavit.packs.build import build_pack

    paths = _inputs(tmp_path, [line], [_line(RECORD)])
    with pytest.raises(InputError) as caught:
        build_pack(*paths, tmp_path / "pack", "Seeds")
    assert error in str(caught.value)


# --- the pack server's loading path is the same verifier ---------------------------------


def test_pack_server_refuses_a_duplicate_key_pack_at_start(tmp_path: Path, home: Path) -> None:
    pack = write_pack(tmp_path / "pack", [STATEMENT_TWICE])
    done = run_cli(["pack", "serve", f"--pack={pack}"], home, input="")
    assert done.returncode == 5 and done.stdout == ""
    assert "pack refused: records.jsonl line 1: duplicate key 'statement'" in done.stderr


# --- advice on a broken pack names what fixes it ----------------------------------------


def _break_records(pack: Path) -> None:
    records = pack / fmt.RECORDS
    records.write_bytes(records.read_bytes().replace(b"9016", b"1234"))


def _break_inventory(pack: Path) -> None:
    (pack / fmt.MEMORY).unlink()


def _break_manifest(pack: Path) -> None:
    sums = pack / fmt.SUMS
    sums.write_bytes(b"".join(sums.read_bytes().splitlines(keepends=True)[1:]))


def _break_record_and_reseal(pack: Path) -> None:
    records = pack / fmt.RECORDS
    records.write_bytes(records.read_bytes().replace(b'"role":"user"', b'"role":"owner"', 1))
    reseal(pack)


@pytest.mark.parametrize(
    "tamper", [_break_records, _break_inventory, _break_manifest, _break_record_and_reseal]
)
def test_advice_for_a_broken_pack_is_what_fixes_it(
    tmp_path: Path, home: Path, ssh_key: SshKey, tamper: Any
) -> None:
    """Re-signing a pack that fails check 1 fails the same way; rebuilding from sources works."""
    pack = build_sample(tmp_path / "pack")
    tamper(pack)
    verify = run_cli(["pack", "verify", str(pack)], home)
    assert verify.returncode == 5
    sign = run_cli(
        ["pack", "sign", "--pack", str(pack), "--key", str(ssh_key.private),
         "--expires", "90d", "--out", str(tmp_path / "signed")],
        home,
    )  # fmt: skip
    assert sign.returncode == 5
    for refusal in (verify.stderr, sign.stderr):
        assert "pack sign" not in refusal, refusal  # the command that just failed
        assert "rebuild it from its source messages with `affidavit pack build`" in refusal

    rebuilt = tmp_path / "rebuilt"
    build = run_cli(
        ["pack", "build", "--messages", str(SAMPLE_MESSAGES), "--records", str(SAMPLE_RECORDS),
         "--out", str(rebuilt), "--title", "Rebuilt"],
        home,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    assert run_cli(["pack", "verify", str(rebuilt)], home).returncode == 0


def test_advice_for_a_bad_signature_does_not_tell_a_host_to_sign_it(
    tmp_path: Path, ssh_key: SshKey
) -> None:
    """Edited and resealed after signing: re-signing it would launder the edit."""
    pack = write_pack(tmp_path / "pack")
    keygen_sign(pack, ssh_key)
    _rewrite(pack, fmt.RECORDS, records_bytes([make_record(1, statement="Send it to Mallory")]))
    refusal = _refused(pack)
    assert refusal.check == "signature"
    assert "pack sign" not in str(refusal)
    assert "get a correctly signed copy from its signer" in str(refusal)
