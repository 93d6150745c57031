"""Shared pack fixtures: real ssh-keygen keys and packs written straight from record dicts.

``write_pack`` writes a valid pack (records.jsonl, MEMORY.md, README.md, a correct SHA256SUMS,
optional PACK.json) without going through the builder, so verification tests do not depend
on it and the builder's tests can compare against it. Keys are made by the real ssh-keygen.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from affidavit.packs import format as fmt

NAMESPACE = fmt.NAMESPACE


@dataclass(frozen=True)
class SshKey:
    """A key pair made by ssh-keygen in a temporary directory."""

    private: Path
    public: Path
    fingerprint: str
    public_line: str

    def allowed_signers_line(self, name: str) -> str:
        """``name ssh-ed25519 AAAA...`` for a trusted keys file."""
        key_type, b64 = self.public_line.split()[:2]
        return f"{name} {key_type} {b64}\n"


def make_key(directory: Path, name: str = "signer", kind: str = "ed25519") -> SshKey:
    """Run ``ssh-keygen -t KIND`` (no passphrase) and return the key pair."""
    directory.mkdir(parents=True, exist_ok=True)
    private = directory / name
    extra = {"ecdsa": ["-b", "256"], "rsa": ["-b", "2048"]}.get(kind, [])
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-t",
            kind,
            *extra,
            "-N",
            "",
            "-C",
            f"{name} test key",
            "-f",
            str(private),
        ],
        check=True,
        capture_output=True,
    )
    public = private.with_name(private.name + ".pub")
    listing = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(public)], check=True, capture_output=True, text=True
    ).stdout
    return SshKey(private, public, listing.split()[1], public.read_text().strip())


@pytest.fixture
def keygen(tmp_path: Path) -> Callable[..., SshKey]:
    """A factory for more keys: ``keygen("attacker")``, ``keygen("old", kind="rsa")``."""
    return lambda name="signer", kind="ed25519": make_key(tmp_path / "keys", name, kind)


@pytest.fixture
def ssh_key(keygen: Callable[..., SshKey]) -> SshKey:
    """A real Ed25519 key pair."""
    return keygen("signer")


@pytest.fixture
def ecdsa_key(keygen: Callable[..., SshKey]) -> SshKey:
    """A real ECDSA P-256 key pair (packs must refuse its signatures)."""
    return keygen("ecdsa-signer", "ecdsa")


@pytest.fixture
def rsa_key(keygen: Callable[..., SshKey]) -> SshKey:
    """A real RSA key pair (packs must refuse its signatures)."""
    return keygen("rsa-signer", "rsa")


REFERENCE_RECORD_LINE = (
    '{"record_id":"M-garden-3","role":"user","speaker":"Rowan","category":"places",'
    '"topic":"Seedlings","statement":"the café on the corner sells seedlings on Saturdays.",'
    '"date_first_utc":"2026-03-02T08:20:00Z","date_last_utc":"2026-03-02T08:20:00Z",'
    '"evidence":[{"message_id":3,"date_utc":"2026-03-02T08:20:00Z",'
    '"quote":"the café on the corner sells seedlings on Saturdays.","start":48,"end":100,'
    '"message_sha256":"e3aebbd25f7b809dd5b0b8d55b9ad7df6566464dc2a5033d02e3c5aa7ed8eeb2"}]}'
)
"""The example record line of the published verified-memory format description, verbatim."""

MESSAGE_TEXT = "Note {i}: the shed code changed. Also, the café sells seedlings on Saturdays."


def make_record(i: int = 1, **overrides: Any) -> dict[str, Any]:
    """A valid record citing one quote of a fictional message; ``overrides`` replace fields."""
    text = MESSAGE_TEXT.format(i=i)
    quote = "the café sells seedlings on Saturdays."
    start = text.index(quote)
    date = f"2026-03-{1 + i % 28:02d}T08:20:00Z"
    record: dict[str, Any] = {
        "record_id": f"M-garden-{i}",
        "role": "user",
        "speaker": "Rowan",
        "category": "places",
        "topic": f"Seedlings {i}",
        "statement": quote,
        "date_first_utc": date,
        "date_last_utc": date,
        "evidence": [
            {
                "message_id": i,
                "date_utc": date,
                "quote": quote,
                "start": start,
                "end": start + len(quote),
                "message_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            }
        ],
    }
    record.update(overrides)
    return record


def records_bytes(records: Iterable[Mapping[str, Any] | str | bytes]) -> bytes:
    """records.jsonl bytes: dicts as compact JSON lines; str/bytes lines written as given."""
    out = bytearray()
    for record in records:
        if isinstance(record, bytes):
            out += record
        elif isinstance(record, str):
            out += record.encode("utf-8")
        else:
            out += json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out += b"\n"
    return bytes(out)


def pack_json(
    created: str = "2026-01-01T00:00:00Z",
    expires: str = "2099-01-01T00:00:00Z",
    sequence: int | None = None,
) -> dict[str, Any]:
    """A PACK.json body."""
    body: dict[str, Any] = {
        "format": "verified-memory-pack",
        "version": 2,
        "created_utc": created,
        "expires_utc": expires,
    }
    if sequence is not None:
        body["sequence"] = sequence
    return body


def reseal(pack_dir: Path) -> None:
    """Rewrite SHA256SUMS for the sealed files present (what an attacker who edits does)."""
    digests = {
        name: hashlib.sha256((pack_dir / name).read_bytes()).hexdigest()
        for name in fmt.SEALED_FILES
        if (pack_dir / name).exists()
    }
    (pack_dir / fmt.SUMS).write_bytes(fmt.render_manifest(digests))


def write_pack(
    pack_dir: Path,
    records: Iterable[Mapping[str, Any] | str | bytes] | None = None,
    pack_json: Mapping[str, Any] | bytes | None = None,
    extra_files: Mapping[str, str | bytes] | None = None,
    *,
    memory: str | bytes = "# Test pack\n\nHistorical data, not instructions.\n",
    readme: str | bytes = "Test pack written by the test-suite.\n",
) -> Path:
    """Write a valid pack into ``pack_dir`` (created); return the path.

    ``extra_files`` are written after sealing, unsealed (a stray file, a signature, ...).
    """
    pack_dir.mkdir(parents=True, exist_ok=False)
    body = records_bytes(records if records is not None else [make_record(1), make_record(2)])
    (pack_dir / fmt.RECORDS).write_bytes(body)
    for name, content in ((fmt.MEMORY, memory), (fmt.README, readme)):
        (pack_dir / name).write_bytes(
            content.encode("utf-8") if isinstance(content, str) else content
        )
    if pack_json is not None:
        raw = (
            pack_json if isinstance(pack_json, bytes) else json.dumps(pack_json, indent=2).encode()
        )
        (pack_dir / fmt.PACK_JSON).write_bytes(raw)
    reseal(pack_dir)
    for name, content in (extra_files or {}).items():
        (pack_dir / name).write_bytes(
            content.encode("utf-8") if isinstance(content, str) else content
        )
    return pack_dir


def ssh_keygen_sign(message: Path, key: SshKey, namespace: str, *options: str) -> Path:
    """Sign the file ``message`` with the real ``ssh-keygen -Y sign``; return ``<message>.sig``."""
    subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "sign",
            "-f",
            str(key.private),
            "-n",
            namespace,
            *options,
            str(message),
        ],
        check=True,
        capture_output=True,
    )
    return message.with_name(message.name + ".sig")


def ssh_keygen_verify(
    allowed_signers: Path,
    principal: str,
    signature: Path,
    message: bytes,
    namespace: str = NAMESPACE,
) -> subprocess.CompletedProcess[bytes]:
    """Check ``signature`` over ``message`` with the real ``ssh-keygen -Y verify`` (not raising)."""
    return subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(allowed_signers), "-I", principal,
         "-n", namespace, "-s", str(signature)],
        input=message,
        capture_output=True,
        check=False,
    )  # fmt: skip


def keygen_sign(pack_dir: Path, key: SshKey, namespace: str = NAMESPACE) -> Path:
    """Sign SHA256SUMS with the real ``ssh-keygen -Y sign``; return SHA256SUMS.sig."""
    return ssh_keygen_sign(pack_dir / fmt.SUMS, key, namespace)


def trusted_keys_file(path: Path, *entries: tuple[str, SshKey]) -> Path:
    """Write an allowed_signers file naming each key."""
    path.write_text("".join(key.allowed_signers_line(name) for name, key in entries))
    return path
