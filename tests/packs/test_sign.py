"""``affidavit pack sign``: real ssh-keygen, strict self-check, nothing written on failure."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import load_ssh_private_key

from affidavit.core.errors import UsageError
from affidavit.crypto import sshsig
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackRefused
from affidavit.packs.sign import parse_expires
from affidavit.packs.trust import TrustOptions
from affidavit.packs.verify import verify_pack
from tests.packs.conftest import (
    NAMESPACE,
    SshKey,
    make_key,
    pack_json,
    ssh_keygen_verify,
    write_pack,
)
from tests.support import PYTHON, cli_env, run_cli


def sign_args(pack: Path, key: Path, out: Path, *extra: str) -> list[str]:
    return ["pack", "sign", "--pack", str(pack), "--key", str(key), "--out", str(out), *extra]


def nothing_written(out: Path) -> bool:
    """Neither the output nor a hidden staging sibling of it exists."""
    if out.exists():
        return False
    return not out.parent.exists() or not list(out.parent.glob(f".{out.name}.*"))


def test_sign_then_verify_strict_pinned(home: Path, tmp_path: Path, ssh_key: SshKey) -> None:
    pack = write_pack(tmp_path / "pack")
    out = tmp_path / "signed"
    done = run_cli(
        sign_args(pack, ssh_key.private, out, "--expires", "90d", "--sequence", "3"), home
    )
    assert done.returncode == 0, done.stderr
    assert f"signer fingerprint: {ssh_key.fingerprint}" in done.stdout
    assert f"pin it on hosts:    --trusted-fingerprint {ssh_key.fingerprint}" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(fmt.ALLOWED_FILES)
    assert not list(tmp_path.glob(".signed.*"))  # no staging directory left behind
    body = json.loads((out / fmt.PACK_JSON).read_text())
    assert list(body) == ["format", "version", "created_utc", "expires_utc", "sequence"]
    created = fmt.parse_utc(body["created_utc"])
    assert fmt.parse_utc(body["expires_utc"]) - created == timedelta(days=90)
    assert abs(datetime.now(UTC) - created) < timedelta(minutes=5)
    for name in (fmt.RECORDS, fmt.MEMORY, fmt.README):
        assert (out / name).read_bytes() == (pack / name).read_bytes()
    trust = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), strict=True, min_sequence=3)
    verification = verify_pack(out, trust).verification()
    assert verification["freshness"]["authenticated"] is True
    assert verification["freshness"]["sequence"] == 3
    # The printed trusted-keys line works for ssh-keygen itself.
    line = done.stdout.split("trusted keys line:  ", 1)[1].strip()
    allowed = tmp_path / "allowed"
    allowed.write_text(line + "\n")
    principal = line.split()[0]
    check = ssh_keygen_verify(
        allowed, principal, out / fmt.SIGNATURE, (out / fmt.SUMS).read_bytes()
    )
    assert check.returncode == 0, check.stderr


def test_re_signing_replaces_dates_sequence_and_signature(
    home: Path, tmp_path: Path, ssh_key: SshKey, keygen
) -> None:
    first = tmp_path / "first"
    run_cli(
        sign_args(
            write_pack(tmp_path / "pack"),
            ssh_key.private,
            first,
            "--expires",
            "10d",
            "--sequence",
            "1",
        ),
        home,
    ).check_returncode()
    successor = keygen("successor")
    second = tmp_path / "second"
    done = run_cli(
        sign_args(
            first, successor.private, second, "--expires", "2027-06-01T00:00:00Z", "--sequence", "2"
        ),
        home,
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads((second / fmt.PACK_JSON).read_text())
    assert (meta["expires_utc"], meta["sequence"]) == ("2027-06-01T00:00:00Z", 2)
    assert verify_pack(
        second, TrustOptions(trusted_fingerprints=(successor.fingerprint,), strict=True)
    )
    with pytest.raises(PackRefused, match="not a pinned signer"):
        verify_pack(second, TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,)))


def test_public_key_with_agent_style_dot_pub_argument_is_accepted(ssh_key: SshKey) -> None:
    from affidavit.packs.sign import public_key_path

    assert public_key_path(ssh_key.public) == ssh_key.public
    assert public_key_path(ssh_key.private) == ssh_key.public


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90d", NOW + timedelta(days=90)),
        ("1825d", NOW + timedelta(days=1825)),
        ("2w", NOW + timedelta(days=14)),  # the vault's duration grammar, word for word
        ("1y", NOW.replace(year=NOW.year + 1)),
        ("2027-01-31T00:00:00Z", datetime(2027, 1, 31, tzinfo=UTC)),
    ],
)
def test_expires_accepts(text: str, expected: datetime) -> None:
    assert parse_expires(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0d", "is not in the future"),
        ("1826d", "more than 1825 days away"),
        ("2020-01-01T00:00:00Z", "is not in the future"),
        ("2040-01-01T00:00:00Z", "more than 1825 days away"),
        ("90", "neither a duration"),
        ("90days", "neither a duration"),
        ("2027-02-30T00:00:00Z", "neither a duration"),
    ],
)
def test_expires_refuses(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_expires(text, NOW)


def test_existing_out_is_never_overwritten(home: Path, tmp_path: Path, ssh_key: SshKey) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep").write_text("mine")
    done = run_cli(
        sign_args(write_pack(tmp_path / "pack"), ssh_key.private, out, "--expires", "9d"), home
    )
    assert done.returncode == 4
    assert "already exists" in done.stderr
    assert [p.name for p in out.iterdir()] == ["keep"]


def test_failures_write_nothing(
    home: Path, tmp_path: Path, ssh_key: SshKey, ecdsa_key: SshKey
) -> None:
    pack = write_pack(tmp_path / "pack")
    broken = write_pack(tmp_path / "broken")
    (broken / fmt.MEMORY).write_text("edited\n")
    no_pub = tmp_path / "nopub"
    no_pub.write_text("not a key")
    cases = [
        (
            sign_args(pack, ecdsa_key.private, tmp_path / "o1", "--expires", "9d"),
            2,
            "ecdsa-sha2-nistp256 key; packs accept only Ed25519 signers",
        ),
        (
            sign_args(broken, ssh_key.private, tmp_path / "o2", "--expires", "9d"),
            5,
            "MEMORY.md does not match its SHA256SUMS checksum",
        ),
        (
            sign_args(pack, no_pub, tmp_path / "o3", "--expires", "9d"),
            3,
            "nopub.pub does not exist",
        ),
        (
            sign_args(pack, ssh_key.private, tmp_path / "no" / "o4", "--expires", "9d"),
            3,
            "does not exist",
        ),
        (
            sign_args(pack, ssh_key.private, pack / "o6", "--expires", "9d"),
            2,
            "--out is inside the pack",
        ),
        (
            sign_args(pack, ssh_key.private, tmp_path / "o5", "--expires", "9999d"),
            2,
            "more than 1825 days",
        ),
    ]
    for args, code, message in cases:
        done = run_cli(args, home)
        assert done.returncode == code, (args, done.stderr)
        assert message in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
        assert nothing_written(Path(args[args.index("--out") + 1]))


def test_passphrase_key_through_ssh_keygen(home: Path, tmp_path: Path) -> None:
    key = tmp_path / "keys" / "protected"
    key.parent.mkdir()
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "correct horse", "-C", "pp", "-f", str(key)],
        check=True,
    )
    pack = write_pack(tmp_path / "pack")

    def sign(out: Path, passphrase: str) -> subprocess.CompletedProcess[str]:
        # A new session has no controlling terminal, so ssh-keygen reads the passphrase from stdin.
        return subprocess.run(
            [PYTHON, "-m", "affidavit", *sign_args(pack, key, out, "--expires", "9d")],
            input=passphrase + "\n",
            env=cli_env(home),
            capture_output=True,
            text=True,
            start_new_session=True,
            timeout=120,
            check=False,
        )

    wrong = sign(tmp_path / "wrong", "battery staple")
    assert wrong.returncode == 8
    assert "ssh-keygen -Y sign failed: " in wrong.stderr and "passphrase" in wrong.stderr
    assert "battery staple" not in wrong.stderr + wrong.stdout
    assert nothing_written(tmp_path / "wrong")
    right = sign(tmp_path / "right", "correct horse")
    assert right.returncode == 0, right.stderr
    assert "correct horse" not in right.stderr + right.stdout
    assert verify_pack(tmp_path / "right").report.signature.status == "untrusted"


def test_python_signer_packs_verify(tmp_path: Path) -> None:
    key = make_key(tmp_path / "keys", "py")
    pack = write_pack(tmp_path / "pack", pack_json=pack_json(sequence=1))
    private = load_ssh_private_key(key.private.read_bytes(), None)
    (pack / fmt.SIGNATURE).write_text(
        sshsig.sign((pack / fmt.SUMS).read_bytes(), private, NAMESPACE)
    )
    trust = TrustOptions(trusted_fingerprints=(key.fingerprint,), strict=True, min_sequence=1)
    assert verify_pack(pack, trust).report.signature.pinned is True


def test_signing_through_ssh_agent_without_the_private_key_file(
    home: Path, tmp_path: Path, ssh_key: SshKey
) -> None:
    socket_path = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(socket_path)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if socket_path.exists():
                break
            time.sleep(0.05)  # ssh-agent creates its socket right after it starts
        env = {"SSH_AUTH_SOCK": str(socket_path)}
        subprocess.run(
            ["ssh-add", "-q", str(ssh_key.private)], env=env, check=True, capture_output=True
        )
        public_only = tmp_path / "public-only"
        public_only.mkdir()
        pub = public_only / ssh_key.public.name
        pub.write_bytes(ssh_key.public.read_bytes())
        out = tmp_path / "agent-signed"
        done = run_cli(
            sign_args(write_pack(tmp_path / "pack"), pub, out, "--expires", "30d"), home, env=env
        )
        assert done.returncode == 0, done.stderr
        trust = TrustOptions(trusted_fingerprints=(ssh_key.fingerprint,), strict=True)
        assert verify_pack(out, trust).report.signature.pinned
    finally:
        agent.terminate()
        agent.wait(timeout=30)


def test_sign_json_reads_the_vault_duration_grammar_and_names_the_fingerprint(
    home: Path, tmp_path: Path, ssh_key: SshKey
) -> None:
    out = tmp_path / "signed"
    done = run_cli(
        sign_args(write_pack(tmp_path / "pack"), ssh_key.private, out, "--expires", "2w", "--json"),
        home,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["path"] == str(out) and report["sequence"] is None
    assert report["fingerprint"] == ssh_key.fingerprint
    assert report["pin"] == f"--trusted-fingerprint {ssh_key.fingerprint}"
    span = fmt.parse_utc(report["expires"]) - fmt.parse_utc(report["created"])
    assert span == timedelta(weeks=2)  # 2w, as `store --expires 2w` reads it
    assert json.loads((out / fmt.PACK_JSON).read_text())["expires_utc"] == report["expires"]


def test_a_missing_pack_or_key_is_not_found_and_names_the_flag(
    home: Path, tmp_path: Path, ssh_key: SshKey
) -> None:
    pack = write_pack(tmp_path / "pack")
    for args, flag, path in (
        (sign_args(tmp_path / "nope", ssh_key.private, tmp_path / "o"), "--pack", "nope"),
        (sign_args(pack, tmp_path / "nokey", tmp_path / "o"), "--key", "nokey"),
    ):
        done = run_cli([*args, "--expires", "9d"], home)
        assert done.returncode == 3, done.stderr
        assert f"{flag} {tmp_path / path} does not exist" in done.stderr
        assert done.stderr.count("affidavit: error:") == 1 and done.stderr.count("\n") == 1
