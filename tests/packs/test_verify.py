"""Verification in process: check 1 (files, checksums, records), trust states, freshness."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from affidavit.core.errors import AuthError, UsageError
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackRefused, PackTrustRefused
from affidavit.packs.trust import TrustOptions
from affidavit.packs.verify import DEFAULT_TRUST, verify_pack
from tests.packs.conftest import (
    SshKey,
    keygen_sign,
    make_record,
    pack_json,
    reseal,
    trusted_keys_file,
    write_pack,
)


def refused(pack: Path, trust: TrustOptions = DEFAULT_TRUST, **kw) -> PackRefused:
    with pytest.raises(PackRefused) as caught:
        verify_pack(pack, trust, **kw)
    return caught.value


def test_valid_unsigned_pack(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    verified = verify_pack(pack)
    assert [r["record_id"] for r in verified.records] == ["M-garden-1", "M-garden-2"]
    report = verified.report.as_dict()
    assert report["records"] == 2
    assert report["signature"]["status"] == "unsigned"
    assert report["freshness"]["status"] == "unknown"
    assert report["freshness"]["authenticated"] is False
    sums = (pack / fmt.SUMS).read_bytes()
    import hashlib

    assert report["manifest_sha256"] == hashlib.sha256(sums).hexdigest()
    assert set(report["files"]) == {"MEMORY.md", "README.md", "records.jsonl"}
    assert verified.warnings == ()
    assert verified.verification() == {
        "signature": {"status": "unsigned", "signer": None, "fingerprint": None, "pinned": False},
        "freshness": {
            "status": "unknown",
            "created_utc": None,
            "expires_utc": None,
            "sequence": None,
            "authenticated": False,
        },
    }


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("records.jsonl", "missing records.jsonl"),
        ("MEMORY.md", "missing MEMORY.md"),
        ("README.md", "missing README.md"),
        ("SHA256SUMS", "missing SHA256SUMS"),
    ],
)
def test_missing_required_file(tmp_path: Path, name: str, message: str) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / name).unlink()
    error = refused(pack)
    assert message in str(error) and error.check == "files"


@pytest.mark.parametrize(
    ("name", "message"),
    [("notes.txt", "unexpected entry 'notes.txt'"), (".DS_Store", "hidden entry '.DS_Store'")],
)
def test_extra_entries_are_refused(tmp_path: Path, name: str, message: str) -> None:
    pack = write_pack(tmp_path / "pack", extra_files={name: "x"})
    assert message in str(refused(pack))


def test_subdirectory_is_refused(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / "nested").mkdir()
    assert "unexpected entry 'nested'" in str(refused(pack))


def test_directory_named_like_a_pack_file_is_refused(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / fmt.PACK_JSON).mkdir()
    assert "PACK.json is not a regular file" in str(refused(pack))


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    os.mkfifo(pack / fmt.PACK_JSON)
    assert "PACK.json is not a regular file" in str(refused(pack))


def test_missing_relative_and_file_paths(tmp_path: Path) -> None:
    assert "does not exist" in str(refused(tmp_path / "nope"))
    assert "is relative" in str(refused(Path("pack")))
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in str(refused(tmp_path / "file"))


def test_data_file_size_limit(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", memory=b"x" * (fmt.MAX_DATA_FILE + 1))
    assert f"MEMORY.md is {fmt.MAX_DATA_FILE + 1} bytes; the limit is {fmt.MAX_DATA_FILE}" in str(
        refused(pack)
    )


def test_manifest_and_signature_size_limits(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    with (pack / fmt.SUMS).open("ab") as handle:
        handle.write(b"#" * fmt.MAX_MANIFEST)
    assert "SHA256SUMS is" in str(refused(pack))
    other = write_pack(
        tmp_path / "other", extra_files={fmt.SIGNATURE: "A" * (fmt.MAX_SIGNATURE + 1)}
    )
    assert "SHA256SUMS.sig is" in str(refused(other))


def test_checksum_mismatch(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / fmt.README).write_text("changed\n")
    error = refused(pack)
    assert "README.md does not match its SHA256SUMS checksum" in str(error)
    assert error.check == "checksums"


def test_manifest_must_list_pack_json_and_only_present_files(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / fmt.PACK_JSON).write_text(json.dumps(pack_json()))
    assert "SHA256SUMS does not list PACK.json" in str(refused(pack))
    reseal(pack)
    (pack / fmt.PACK_JSON).unlink()
    assert "SHA256SUMS lists PACK.json, which is not in the pack" in str(refused(pack))


def test_manifest_syntax_is_a_checksum_refusal(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    sums = (pack / fmt.SUMS).read_text()
    (pack / fmt.SUMS).write_text(sums.replace("  ", " *", 1))
    error = refused(pack)
    assert error.check == "checksums" and "line 1 is not" in str(error)


def test_markdown_must_be_utf8(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", memory=b"# Title \xff\n")
    assert "MEMORY.md is not valid UTF-8" in str(refused(pack))


def test_record_refusal_names_file_and_line(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", [make_record(1), make_record(2, role="robot")])
    error = refused(pack)
    assert error.check == "records"
    assert str(error).startswith("pack refused: records.jsonl line 2: M-garden-2: role must be")


def test_empty_pack_is_refused(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", [])
    assert "has no records" in str(refused(pack))


def test_bad_pack_json(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json={**pack_json(), "version": 3})
    error = refused(pack)
    assert error.check == "pack_json" and "version must be 2" in str(error)


def test_pack_json_reported_when_present(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=7))
    fresh = verify_pack(pack).verification()["freshness"]
    assert fresh == {
        "status": "fresh",
        "created_utc": "2026-01-01T00:00:00Z",
        "expires_utc": "2099-01-01T00:00:00Z",
        "sequence": 7,
        "authenticated": False,
    }


def test_signed_untrusted_then_trusted(tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json())
    keygen_sign(pack, ssh_key)
    untrusted = verify_pack(pack).verification()
    assert untrusted["signature"] == {
        "status": "untrusted",
        "signer": None,
        "fingerprint": ssh_key.fingerprint,
        "pinned": False,
    }
    assert untrusted["freshness"]["authenticated"] is False
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    trusted = verify_pack(pack, TrustOptions(trusted_keys=keys)).verification()
    assert trusted["signature"] == {
        "status": "verified",
        "signer": "alice",
        "fingerprint": ssh_key.fingerprint,
        "pinned": False,
    }
    assert trusted["freshness"]["authenticated"] is True


def test_pinned_signer_named_from_trusted_keys_or_pinned(tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack")
    keygen_sign(pack, ssh_key)
    pin = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,))
    assert verify_pack(pack, pin).verification()["signature"]["signer"] == "pinned"
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    named = verify_pack(
        pack, TrustOptions(trusted_keys=keys, trusted_fingerprints=(ssh_key.fingerprint,))
    )
    assert named.verification()["signature"] == {
        "status": "verified",
        "signer": "alice",
        "fingerprint": ssh_key.fingerprint,
        "pinned": True,
    }
    # authenticated needs dates: no PACK.json here.
    assert named.verification()["freshness"]["authenticated"] is False


def test_signer_name_never_comes_from_the_pack(tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack", readme="signed by: trusted-admin\n")
    keygen_sign(pack, ssh_key)
    keys = trusted_keys_file(tmp_path / "trusted", ("host-name-for-key", ssh_key))
    signature = verify_pack(pack, TrustOptions(trusted_keys=keys)).verification()["signature"]
    assert signature["signer"] == "host-name-for-key"


def test_require_signature(tmp_path: Path, ssh_key: SshKey, keygen) -> None:
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    required = TrustOptions(trusted_keys=keys, require_signature=True)
    unsigned = write_pack(tmp_path / "unsigned")
    error = refused(unsigned, required)
    assert isinstance(error, PackTrustRefused) and isinstance(error, AuthError)
    assert error.exit_code == 6 and error.check == "trust"
    assert "pack is unsigned, but a trusted signature is required" in str(error)
    stranger = keygen("stranger")
    other = write_pack(tmp_path / "other")
    keygen_sign(other, stranger)
    assert f"pack is signed by {stranger.fingerprint}, which is not a trusted key" in str(
        refused(other, required)
    )
    mine = write_pack(tmp_path / "mine")
    keygen_sign(mine, ssh_key)
    assert verify_pack(mine, required).verification()["signature"]["status"] == "verified"


def test_revoked_does_not_by_itself_require_a_signature(tmp_path: Path, ssh_key: SshKey) -> None:
    revoked = tmp_path / "revoked"
    revoked.write_text(f"{ssh_key.fingerprint}\n")
    pack = write_pack(tmp_path / "pack")
    assert (
        verify_pack(pack, TrustOptions(revoked_keys=revoked)).report.signature.status == "unsigned"
    )


def test_configuration_errors_come_before_the_pack(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    with pytest.raises(UsageError, match="no --trusted-keys or --trusted-fingerprint is set"):
        verify_pack(pack, TrustOptions(strict=True))
    empty = tmp_path / "empty"
    empty.write_text("# nobody yet\n")
    with pytest.raises(UsageError, match="lists no keys"):
        verify_pack(pack, TrustOptions(trusted_keys=empty, min_sequence=1))


def test_unsigned_sequence_is_reported_not_enforced(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=2))
    assert verify_pack(pack).verification()["freshness"]["sequence"] == 2


def test_min_sequence(tmp_path: Path, ssh_key: SshKey) -> None:
    pin = (ssh_key.fingerprint,)
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=5))
    keygen_sign(pack, ssh_key)
    assert verify_pack(pack, TrustOptions(trusted_fingerprints=pin, min_sequence=5))
    error = refused(pack, TrustOptions(trusted_fingerprints=pin, min_sequence=6))
    assert error.check == "sequence"
    assert "pack sequence 5 is lower than the minimum 6; refusing a possible rollback" in str(error)
    no_sequence = write_pack(tmp_path / "noseq", pack_json=pack_json())
    keygen_sign(no_sequence, ssh_key)
    assert "pack has no signed sequence, but --min-sequence 1 is set" in str(
        refused(no_sequence, TrustOptions(trusted_fingerprints=pin, min_sequence=1))
    )


def test_min_sequence_implies_a_signature(tmp_path: Path, ssh_key: SshKey) -> None:
    keys = trusted_keys_file(tmp_path / "trusted", ("alice", ssh_key))
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=9))
    assert "pack is unsigned, but a trusted signature is required" in str(
        refused(pack, TrustOptions(trusted_keys=keys, min_sequence=1))
    )


AT_2030 = datetime(2030, 1, 1, tzinfo=UTC)


def test_freshness_outside_strict(tmp_path: Path) -> None:
    stale = write_pack(tmp_path / "stale", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    verified = verify_pack(stale, at=AT_2030)
    assert verified.verification(AT_2030)["freshness"]["status"] == "stale"
    assert verified.warnings == ("pack expired at 2027-01-01T00:00:00Z; serving it as stale",)
    future = write_pack(tmp_path / "future", pack_json=pack_json(created="2031-01-01T00:00:00Z"))
    early = verify_pack(future, at=AT_2030)
    assert early.report.as_dict()["freshness"]["status"] == "not_yet_valid"
    assert "more than 5 minutes in the future" in early.warnings[0]


def test_future_skew_of_five_minutes_is_tolerated(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(created="2030-01-01T00:05:00Z"))
    verified = verify_pack(pack, at=AT_2030)
    assert verified.verification(AT_2030)["freshness"]["status"] == "fresh"
    pushed = write_pack(tmp_path / "pushed", pack_json=pack_json(created="2030-01-01T00:05:01Z"))
    assert (
        verify_pack(pushed, at=AT_2030).verification(AT_2030)["freshness"]["status"]
        == "not_yet_valid"
    )


def test_strict(tmp_path: Path, ssh_key: SshKey) -> None:
    strict = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), strict=True)
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    keygen_sign(pack, ssh_key)
    verified = verify_pack(pack, strict, at=datetime(2026, 6, 1, tzinfo=UTC))
    assert verified.verification(datetime(2026, 6, 1, tzinfo=UTC))["freshness"]["authenticated"]
    error = refused(pack, strict, at=AT_2030)
    assert error.check == "expiry"
    assert "pack expired at 2027-01-01T00:00:00Z (judged at 2030-01-01T00:00:00Z)" in str(error)
    verified.recheck_expiry(datetime(2026, 12, 31, tzinfo=UTC))
    with pytest.raises(PackRefused, match="pack expired at"):
        verified.recheck_expiry(AT_2030)
    undated = write_pack(tmp_path / "undated")
    keygen_sign(undated, ssh_key)
    assert "pack has no PACK.json, so no expiry date, and --strict requires one" in str(
        refused(undated, strict)
    )


def test_recheck_expiry_is_a_no_op_outside_strict(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    verify_pack(pack, at=datetime(2026, 6, 1, tzinfo=UTC)).recheck_expiry(AT_2030)


def test_naive_at_is_taken_as_utc(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    verified = verify_pack(pack, at=datetime(2030, 1, 1))
    assert verified.report.as_dict()["judged_at"] == "2030-01-01T00:00:00Z"


def test_escaped_surrogate_pair_counts_as_one_code_point(tmp_path: Path) -> None:
    record = make_record(1)
    record["evidence"][0].update(quote="🌱 seedlings", start=0, end=11)
    line = json.dumps(record, ensure_ascii=True)
    assert "\\ud83c\\udf31" in line
    pack = write_pack(tmp_path / "pack", [line])
    assert verify_pack(pack).records[0]["evidence"][0]["quote"] == "🌱 seedlings"
