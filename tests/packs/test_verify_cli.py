"""``affidavit pack verify`` as a real process: exit codes, report, one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.packs import format as fmt
from tests.packs.conftest import SshKey, keygen_sign, pack_json, write_pack
from tests.support import run_cli


def test_verified_report_human_and_json(home: Path, tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=2))
    keygen_sign(pack, ssh_key)
    pin = f"--trusted-fingerprint={ssh_key.fingerprint}"
    human = run_cli(["pack", "verify", str(pack), pin, "--strict", "--min-sequence", "2"], home)
    assert human.returncode == 0, human.stderr
    assert human.stderr == ""
    assert f"pack verified: {pack}" in human.stdout
    assert f"verified (signer pinned, {ssh_key.fingerprint}, pinned)" in human.stdout
    assert "sequence 2, authenticated" in human.stdout
    machine = run_cli(["pack", "verify", str(pack), pin, "--json"], home)
    report = json.loads(machine.stdout)
    assert report["verified"] is True and report["records"] == 2
    assert report["signature"]["fingerprint"] == ssh_key.fingerprint
    assert report["signature"]["hash_algorithm"] == "sha512"
    assert report["freshness"]["status"] == "fresh"
    assert report["warnings"] == []


def test_refusal_is_one_line_with_exit_code(home: Path, tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / fmt.RECORDS).write_text((pack / fmt.RECORDS).read_text().replace("Rowan", "Eve"))
    done = run_cli(["pack", "verify", str(pack)], home)
    assert done.returncode == 5
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        "affidavit: error: pack refused: records.jsonl does not match its SHA256SUMS checksum"
    )
    assert "Traceback" not in done.stderr
    as_json = run_cli(["pack", "verify", str(pack), "--json"], home)
    assert json.loads(as_json.stdout)["check"] == "checksums"
    assert as_json.returncode == 5


def test_untrusted_refusal_exit_code(home: Path, tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack")
    done = run_cli(
        ["pack", "verify", str(pack), f"--trusted-fingerprint={ssh_key.fingerprint}"], home
    )
    assert done.returncode == 6
    assert "pack is unsigned, but a signer fingerprint is pinned" in done.stderr


def test_at_judges_freshness_then(home: Path, tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    then = run_cli(["pack", "verify", str(pack), "--at=2026-06-01T00:00:00Z", "--json"], home)
    assert json.loads(then.stdout)["freshness"]["status"] == "fresh"
    later = run_cli(["pack", "verify", str(pack), "--at", "2027-06-01T00:00:00Z"], home)
    assert later.returncode == 0
    assert "stale" in later.stdout
    assert "affidavit: warning: pack expired at 2027-01-01T00:00:00Z" in later.stderr


def test_usage_errors(home: Path, tmp_path: Path) -> None:
    pack = str(write_pack(tmp_path / "pack"))
    cases = [
        (["pack", "verify"], "no pack directory given"),
        (["pack", "verify", "relative/pack"], "pack directory relative/pack is a relative path"),
        (["pack", "verify", pack, "--bogus"], "unknown option --bogus"),
        (["pack", "verify", pack, pack], "unexpected argument"),
        (["pack", "verify", pack, "--at", "yesterday"], "--at 'yesterday' is not a UTC ISO 8601"),
        (["pack", "verify", pack, "--strict=maybe"], "--strict=maybe is not true or false"),
    ]
    for args, message in cases:
        done = run_cli(args, home)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert done.stderr.count("\n") == 1


def test_help_lists_the_trust_flags(home: Path) -> None:
    done = run_cli(["pack", "verify", "--help"], home)
    assert done.returncode == 0
    for flag in (
        "--trusted-keys",
        "--trusted-fingerprint",
        "--revoked-keys",
        "--min-sequence",
        "--require-signature",
        "--strict",
        "--at",
        "--json",
    ):
        assert flag in done.stdout


def test_typer_path_and_fast_path_agree(home: Path, tmp_path: Path) -> None:
    """``python -m affidavit`` takes the fast path; the typer app must behave the same."""
    import subprocess

    from tests.support import PYTHON, cli_env

    good = str(write_pack(tmp_path / "good"))
    bad = write_pack(tmp_path / "bad")
    (bad / fmt.MEMORY).write_text("edited\n")
    for args in (
        ["pack", "verify", good, "--json", "--at=2026-06-01T00:00:00Z"],
        ["pack", "verify", str(bad)],
        ["pack", "verify", good, "--strict"],
    ):
        fast = run_cli(args, home)
        full = subprocess.run(
            [PYTHON, "-c", "from affidavit.cli.main import main; main()", *args],
            env=cli_env(home),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            full.returncode,
            full.stdout,
            full.stderr,
        )
    offline = run_cli(["--assert-offline", "pack", "verify", good], home)
    assert offline.returncode == 0 and "pack verified" in offline.stdout
