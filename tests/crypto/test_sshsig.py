"""SSHSIG against the real ssh-keygen, both directions, and every strict-parse refusal."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import load_ssh_private_key

from affidavit.crypto import sshsig
from affidavit.crypto.sshwire import WireReader, put_string
from tests.packs.conftest import NAMESPACE, SshKey, ssh_keygen_sign, ssh_keygen_verify

MESSAGE = b"3f0a...  records.jsonl\n"


def keygen_signature(
    key: SshKey, tmp_path: Path, *options: str, namespace: str = NAMESPACE
) -> bytes:
    message = tmp_path / "message"
    message.write_bytes(MESSAGE)
    return ssh_keygen_sign(message, key, namespace, *options).read_bytes()


def private_key(key: SshKey):
    return load_ssh_private_key(key.private.read_bytes(), None)


def test_verifies_ssh_keygen_signature_sha512(ssh_key: SshKey, tmp_path: Path) -> None:
    sig = sshsig.verify(keygen_signature(ssh_key, tmp_path), MESSAGE, NAMESPACE)
    assert sig.hash_algorithm == "sha512"
    assert sig.public_key.fingerprint == ssh_key.fingerprint


def test_verifies_ssh_keygen_signature_sha256(ssh_key: SshKey, tmp_path: Path) -> None:
    armored = keygen_signature(ssh_key, tmp_path, "-O", "hashalg=sha256")
    assert sshsig.verify(armored, MESSAGE, NAMESPACE).hash_algorithm == "sha256"


def test_our_signature_is_byte_identical_to_ssh_keygen(ssh_key: SshKey, tmp_path: Path) -> None:
    ours = sshsig.sign(MESSAGE, private_key(ssh_key), NAMESPACE)
    assert ours.encode() == keygen_signature(ssh_key, tmp_path)


@pytest.mark.parametrize("hash_algorithm", ["sha512", "sha256"])
def test_ssh_keygen_verifies_our_signature(
    ssh_key: SshKey, tmp_path: Path, hash_algorithm: str
) -> None:
    signature = tmp_path / "ours.sig"
    signature.write_text(
        sshsig.sign(MESSAGE, private_key(ssh_key), NAMESPACE, hash_algorithm=hash_algorithm)
    )
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(ssh_key.allowed_signers_line("alice"))
    accepted = ssh_keygen_verify(allowed, "alice", signature, MESSAGE)
    assert accepted.returncode == 0, accepted.stderr
    refused = ssh_keygen_verify(allowed, "alice", signature, MESSAGE + b"x")
    assert refused.returncode != 0


def test_tampered_message_is_refused(ssh_key: SshKey, tmp_path: Path) -> None:
    with pytest.raises(sshsig.SignatureError, match="does not match the signed data"):
        sshsig.verify(keygen_signature(ssh_key, tmp_path), MESSAGE + b" ", NAMESPACE)


def test_other_namespace_is_refused(ssh_key: SshKey, tmp_path: Path) -> None:
    armored = keygen_signature(ssh_key, tmp_path, namespace="git")
    with pytest.raises(sshsig.SignatureError, match="namespace is 'git'"):
        sshsig.verify(armored, MESSAGE, NAMESPACE)


@pytest.mark.parametrize("kind", ["ecdsa", "rsa"])
def test_non_ed25519_signers_are_refused_by_name(keygen, tmp_path: Path, kind: str) -> None:
    key = keygen(f"{kind}-key", kind)
    armored = keygen_signature(key, tmp_path)
    expected = "ecdsa-sha2-nistp256" if kind == "ecdsa" else "ssh-rsa"
    with pytest.raises(sshsig.SignatureError, match=f"{expected} key .*only Ed25519"):
        sshsig.verify(armored, MESSAGE, NAMESPACE)


def fields_of(armored: bytes) -> dict[str, bytes]:
    reader = WireReader(sshsig.dearmor(armored))
    return {
        "magic": reader.take(6),
        "version": reader.take(4),
        "key": reader.string(),
        "namespace": reader.string(),
        "reserved": reader.string(),
        "hash": reader.string(),
        "signature": reader.string(),
    }


def armor(fields: dict[str, bytes], trailing: bytes = b"") -> str:
    blob = (
        fields["magic"]
        + fields["version"]
        + b"".join(
            put_string(fields[name])
            for name in ("key", "namespace", "reserved", "hash", "signature")
        )
    )
    encoded = base64.b64encode(blob + trailing).decode()
    lines = [encoded[i : i + 70] for i in range(0, len(encoded), 70)]
    return "\n".join([sshsig.BEGIN, *lines, sshsig.END]) + "\n"


@pytest.fixture
def good(ssh_key: SshKey, tmp_path: Path) -> bytes:
    return keygen_signature(ssh_key, tmp_path)


def test_reencoding_unchanged_fields_still_verifies(good: bytes) -> None:
    assert sshsig.verify(armor(fields_of(good)), MESSAGE, NAMESPACE)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"magic": b"SSHSIH"}, "SSHSIG magic"),
        ({"version": b"\x00\x00\x00\x02"}, "version 2 is not supported"),
        ({"reserved": b"x"}, "non-empty reserved"),
        ({"hash": b"sha1"}, "hash 'sha1' is not sha512 or sha256"),
        ({"key": put_string("ssh-ed25519") + put_string(b"\x01" * 31)}, "malformed public key"),
    ],
)
def test_malformed_fields_are_refused(good: bytes, change: dict[str, bytes], message: str) -> None:
    fields = {**fields_of(good), **change}
    with pytest.raises(sshsig.SignatureError, match=message):
        sshsig.verify(armor(fields), MESSAGE, NAMESPACE)


def test_trailing_bytes_in_blob_are_refused(good: bytes) -> None:
    with pytest.raises(sshsig.SignatureError, match="trailing bytes"):
        sshsig.verify(armor(fields_of(good), trailing=b"\x00"), MESSAGE, NAMESPACE)


def test_trailing_bytes_in_signature_value_are_refused(good: bytes) -> None:
    fields = fields_of(good)
    fields["signature"] += b"\x00"
    with pytest.raises(sshsig.SignatureError, match="signature value has trailing bytes"):
        sshsig.verify(armor(fields), MESSAGE, NAMESPACE)


def test_short_signature_value_is_refused(good: bytes) -> None:
    fields = fields_of(good)
    fields["signature"] = put_string("ssh-ed25519") + put_string(b"\x00" * 63)
    with pytest.raises(sshsig.SignatureError, match="not an Ed25519 signature"):
        sshsig.verify(armor(fields), MESSAGE, NAMESPACE)


def test_truncated_blob_is_refused(good: bytes) -> None:
    blob = sshsig.dearmor(good)[:-10]
    text = "\n".join([sshsig.BEGIN, base64.b64encode(blob).decode(), sshsig.END])
    with pytest.raises(sshsig.SignatureError, match="malformed"):
        sshsig.verify(text, MESSAGE, NAMESPACE)


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda t: t.replace(sshsig.BEGIN, "-----BEGIN SSH SIG-----"), "does not start with"),
        (lambda t: t.replace(sshsig.END, ""), "does not end with"),
        (lambda t: t + "extra\n", "does not end with"),
        (lambda t: "\n" + t, "does not start with"),
        (lambda t: t.replace("\n", "\r\n"), "does not start with"),
        (lambda t: t.replace(sshsig.BEGIN + "\n", sshsig.BEGIN + "\n\n"), "not base64"),
        (lambda t: t.replace(sshsig.BEGIN + "\n", sshsig.BEGIN + "\n!!!!\n"), "not base64"),
        (lambda t: t.replace(sshsig.BEGIN + "\n", sshsig.BEGIN + "\nA\n"), "not valid base64"),
        (lambda t: t + "é", "not ASCII"),
    ],
)
def test_armor_is_parsed_strictly(good: bytes, mangle, message: str) -> None:
    text = mangle(good.decode())
    with pytest.raises(sshsig.SignatureError, match=message):
        sshsig.verify(text.encode("utf-8"), MESSAGE, NAMESPACE)


def test_armor_without_final_newline_is_accepted(good: bytes) -> None:
    assert sshsig.verify(good.rstrip(b"\n"), MESSAGE, NAMESPACE)
