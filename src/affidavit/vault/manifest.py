"""Signed vault manifests: ``affidavit lock --sign`` and ``affidavit verify MANIFEST``.

A manifest states what a locked vault is: its id, audit head and length, last sequence
number, record counts per namespace, the time, and the SHA-256 of the vault file after the
write-ahead log was folded in. It is signed with an Ed25519 key whose seed is stored sealed
inside the vault (created on first use), so only someone who can unlock the vault can sign,
while anyone can check the manifest, and a copied vault file against it, with no passphrase.
Pin the signer with ``--key`` (its fingerprint), or the check proves integrity, not origin.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from pathlib import Path
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from affidavit.core.atomic import write_atomic
from affidavit.core.canonical import canonical_json
from affidavit.core.errors import (
    AuthError,
    InputError,
    IntegrityError,
    NotFoundError,
    UnsupportedError,
)
from affidavit.vault import store
from affidavit.vault.header import DB_NAME
from affidavit.vault.vault import Vault, now_iso

FORMAT = "affidavit-vault-manifest-v1"
SIGNING_KIND = "_signing_key"
MANIFEST_NAME = "manifest.json"


def fingerprint(public_key: bytes) -> str:
    """``SHA256:<base64>`` of the raw Ed25519 public key, as shown to users for pinning."""
    digest = hashlib.sha256(public_key).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def _signing_key(v: Vault) -> SigningKey:
    record = v.named_record(SIGNING_KIND, "manifest")
    if record is None:
        seed = secrets.token_bytes(32)
        record = v.put_named(
            SIGNING_KIND, "manifest", {"seed": base64.b64encode(seed).decode("ascii")}
        )
    return SigningKey(base64.b64decode(record.data["seed"]))


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sign(v: Vault, out: Path | None = None) -> Path:
    """Write a signed manifest of ``v`` (default: ``manifest.json`` in the vault directory)."""
    if store.pointer(v.path) is not None:
        raise UnsupportedError(
            "a signed manifest vouches for a file vault's vault.db; a team vault has none",
            "lock without --sign (the database server keeps the team vault's rows)",
        )
    v.refresh()
    key = _signing_key(v)
    v.checkpoint()
    status = v.status()
    body: dict[str, Any] = {
        "format": FORMAT,
        "vault_id": status["vault_id"],
        "vault_format": status["format"],
        "created_at": now_iso(),
        "seq": status["seq"],
        "audit_head": status["audit"]["head"],
        "audit_entries": status["audit"]["entries"],
        "records": status["records"],
        "namespaces": status["namespaces"],
        "vault_file_sha256": _file_sha256(v.path / DB_NAME),
        "public_key": base64.b64encode(bytes(key.verify_key)).decode("ascii"),
    }
    signature = key.sign(canonical_json(body)).signature
    document = {"manifest": body, "signature": base64.b64encode(signature).decode("ascii")}
    target = Path(out) if out is not None else v.path / MANIFEST_NAME
    write_atomic(target, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode(), 0o600)
    return target


def verify(
    path: Path, *, vault_dir: Path | None = None, pinned: str | None = None
) -> dict[str, Any]:
    """Check a manifest's signature (and pin, and a vault file); return its facts.

    Raises InputError (not a manifest), AuthError (bad signature or other signer),
    IntegrityError (the vault file differs from the signed one).
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        body = document["manifest"]
        signature = base64.b64decode(document["signature"], validate=True)
        public_key = base64.b64decode(body["public_key"], validate=True)
        if body["format"] != FORMAT:
            raise ValueError("format")
    except FileNotFoundError:
        raise NotFoundError(f"no manifest at {path}") from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise InputError(
            f"{path} is not an affidavit vault manifest", "pass the file `lock --sign` wrote"
        ) from None
    try:
        VerifyKey(public_key).verify(canonical_json(body), signature)
    except (BadSignatureError, ValueError):
        raise AuthError(
            f"the signature of {path} does not match its content (edited or damaged)",
            "ask the sender for a fresh manifest",
        ) from None
    signer = fingerprint(public_key)
    if pinned is not None and pinned.strip() not in (signer, signer.removeprefix("SHA256:")):
        raise AuthError(
            f"{path} was signed by {signer}, not by the pinned key {pinned}",
            "check you have the right manifest or the right fingerprint",
        )
    report = {
        "ok": True,
        "signer": signer,
        "pinned": pinned is not None,
        **{
            k: body[k]
            for k in (
                "vault_id",
                "created_at",
                "seq",
                "audit_head",
                "audit_entries",
                "records",
                "namespaces",
            )
        },
        "vault_file": None,
    }
    if vault_dir is not None:
        db = Path(vault_dir) / DB_NAME
        if not db.is_file():
            raise NotFoundError(f"no vault at {vault_dir}")
        if _file_sha256(db) != body["vault_file_sha256"]:
            raise IntegrityError(
                f"the vault file {db} differs from the one the manifest signed",
                "it was changed after `lock --sign`, or it is another vault",
            )
        report["vault_file"] = str(db)
    return report
