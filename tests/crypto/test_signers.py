"""Public keys, fingerprints and the trust files, checked against the real ssh-keygen."""

from __future__ import annotations

import pytest

from affidavit.crypto import signers
from tests.packs.conftest import SshKey


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa", "rsa"])
def test_fingerprint_matches_ssh_keygen(keygen, kind: str) -> None:
    key: SshKey = keygen(f"k-{kind}", kind)
    parsed = signers.read_public_key(key.public)
    assert parsed.fingerprint == key.fingerprint
    assert parsed.is_ed25519 is (kind == "ed25519")


def test_public_key_keeps_comment_and_openssh_form(ssh_key: SshKey) -> None:
    parsed = signers.read_public_key(ssh_key.public)
    assert parsed.comment == "signer test key"
    assert parsed.openssh() == " ".join(ssh_key.public_line.split()[:2])
    assert parsed.principal_name() == "signer-test-key"
    assert len(parsed.ed25519_bytes()) == 32


def test_is_fingerprint(ssh_key: SshKey) -> None:
    assert signers.is_fingerprint(ssh_key.fingerprint)
    assert not signers.is_fingerprint(ssh_key.fingerprint + "=")
    assert not signers.is_fingerprint(ssh_key.fingerprint[:-1])
    assert not signers.is_fingerprint("MD5:" + ssh_key.fingerprint[7:])
    assert not signers.is_fingerprint("sha256:" + ssh_key.fingerprint[7:])


def test_allowed_signers_with_comments_and_blanks(ssh_key: SshKey, keygen) -> None:
    other = keygen("bob")
    text = (
        "# my trusted pack signers\n\n"
        + ssh_key.allowed_signers_line("alice").rstrip("\n")
        + " alice's laptop\n   \n"
        + other.allowed_signers_line("bob")
    )
    parsed = signers.parse_allowed_signers(text, "trusted")
    assert [(s.name, s.key.fingerprint) for s in parsed] == [
        ("alice", ssh_key.fingerprint),
        ("bob", other.fingerprint),
    ]
    assert parsed[0].key.comment == "alice's laptop"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("alice", "expected 'name ssh-ed25519 AAAA"),
        ('alice namespaces="verified-memory-pack-v1" ssh-ed25519 {b64}', "found 'namespaces="),
        ("alice,bob ssh-ed25519 {b64}", "must be one name"),
        ("*@example.com ssh-ed25519 {b64}", "must be one name"),
        ("alice ssh-ed25519 not-base64!", "not valid base64"),
        ("alice ssh-ed25519 QUFBQQ==", "malformed public key blob"),
    ],
)
def test_allowed_signers_refusals(ssh_key: SshKey, line: str, message: str) -> None:
    b64 = ssh_key.public_line.split()[1]
    with pytest.raises(signers.KeyFormatError, match=message) as caught:
        signers.parse_allowed_signers("# ok\n" + line.format(b64=b64) + "\n", "trusted_keys")
    assert "trusted_keys line 2" in str(caught.value)


@pytest.mark.parametrize("kind", ["ecdsa", "rsa"])
def test_allowed_signers_refuses_other_key_types(keygen, kind: str) -> None:
    key = keygen(f"t-{kind}", kind)
    with pytest.raises(signers.KeyFormatError, match="only single-name ssh-ed25519"):
        signers.parse_allowed_signers(key.allowed_signers_line("carol"), "trusted")


def test_allowed_signers_refuses_type_that_does_not_match_blob(keygen) -> None:
    rsa = keygen("liar", "rsa")
    line = f"mallory ssh-ed25519 {rsa.public_line.split()[1]}\n"
    with pytest.raises(signers.KeyFormatError, match="says ssh-ed25519 but the key is ssh-rsa"):
        signers.parse_allowed_signers(line, "trusted")


def test_revoked_keys(ssh_key: SshKey) -> None:
    text = f"# laptop lost 2026-10-15\n\n{ssh_key.fingerprint} old laptop\n"
    assert signers.parse_revoked_keys(text, "revoked") == {ssh_key.fingerprint}


@pytest.mark.parametrize("line", ["ssh-ed25519 AAAA", "SHA256:short", "MD5:aa:bb"])
def test_revoked_keys_refuses_non_fingerprints(line: str) -> None:
    with pytest.raises(
        signers.KeyFormatError, match=r"revoked line 1: .* is not a SHA256 fingerprint"
    ):
        signers.parse_revoked_keys(line + "\n", "revoked")


def test_missing_and_binary_files(tmp_path) -> None:
    with pytest.raises(signers.KeyFormatError, match="does not exist"):
        signers.read_allowed_signers(tmp_path / "nope")
    binary = tmp_path / "bin"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(signers.KeyFormatError, match="not valid UTF-8"):
        signers.read_revoked_keys(binary)


def test_public_key_file_must_hold_one_key(ssh_key: SshKey, tmp_path) -> None:
    double = tmp_path / "two.pub"
    double.write_text(ssh_key.public_line + "\n" + ssh_key.public_line + "\n")
    with pytest.raises(signers.KeyFormatError, match="exactly one"):
        signers.read_public_key(double)
