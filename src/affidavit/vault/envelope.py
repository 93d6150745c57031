"""The sealed record envelope: how one record's content becomes two opaque blobs in a row.

``blob`` is the payload sealed under the record's own random key, bound to the vault id and
record id. ``wkey`` is that record key sealed under the vault's wrap key, bound to every
other column of the row (id, seq, state) and to ``blob``'s authentication tag. So flipping
any byte of a row, moving a blob to another row, or editing a plaintext column makes the
row fail to open. Destroying ``wkey`` and ``blob`` (shred) leaves nothing that decrypts.

Payload plaintext: ``0x01 || u32 json_length || json || vector bytes``. The JSON holds
``kind``, ``namespace``, ``saved_at`` and ``data``; the embedding rides in the same seal.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import orjson

from affidavit.core.canonical import canonical_json
from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.crypto import aead
from affidavit.vault.rows import SHREDDED, Row

PAYLOAD_VERSION = 1
_LEN = struct.Struct(">I")


@dataclass(frozen=True)
class Payload:
    """The plaintext of one record version."""

    kind: str
    namespace: str
    saved_at: str
    data: dict[str, Any]
    vector: bytes | None


def encode_payload(p: Payload) -> bytes:
    """Serialize a payload (canonical JSON, so equal payloads give equal bytes)."""
    meta = canonical_json(
        {"kind": p.kind, "namespace": p.namespace, "saved_at": p.saved_at, "data": p.data}
    )
    return bytes([PAYLOAD_VERSION]) + _LEN.pack(len(meta)) + meta + (p.vector or b"")


def decode_payload(raw: bytes, rid: str) -> Payload:
    """Parse a payload that already passed authentication."""
    if not raw or raw[0] != PAYLOAD_VERSION:
        raise UnsupportedError(
            f"record {rid} was written by a newer affidavit", "upgrade affidavit"
        )
    try:
        (size,) = _LEN.unpack_from(raw, 1)
        meta = orjson.loads(raw[5 : 5 + size])
        vector = raw[5 + size :] or None
        return Payload(meta["kind"], meta["namespace"], meta["saved_at"], meta["data"], vector)
    except (struct.error, orjson.JSONDecodeError, KeyError, TypeError):
        raise IntegrityError(f"record {rid} is unreadable", "restore a backup") from None


def _row_ad(vault_id: bytes, rid: str, seq: int, state: int, tag: bytes) -> bytes:
    # concatenation, not bytes %-formatting: this runs twice per record at every unlock
    return b"affidavit-row-v1|" + vault_id + f"|{rid}|{seq}|{state}|".encode() + tag


def _blob_ad(vault_id: bytes, rid: str) -> bytes:
    return b"affidavit-record-v1|" + vault_id + b"|" + rid.encode()


def _tag(blob: bytes | None) -> bytes:
    return blob[-aead.TAG_BYTES :] if blob else b""


def seal_payload(vault_id: bytes, rid: str, payload: bytes) -> tuple[bytes, bytes]:
    """Seal a payload under a fresh record key: ``(record key, blob)``.

    Done outside the write transaction (the blob does not depend on seq), so the expensive
    part of a store never holds the cross-process write lock.
    """
    record_key = aead.random_key()
    return record_key, aead.seal(record_key, payload, _blob_ad(vault_id, rid))


def bind_row(
    wrap_key: bytes,
    vault_id: bytes,
    rid: str,
    seq: int,
    state: int,
    record_key: bytes,
    blob: bytes | None,
) -> Row:
    """The stored row: the record key wrapped and bound to id, seq, state and blob.

    A shredded row passes an empty key and no blob: its ``wkey`` then only authenticates
    the tombstone, and nothing in the row decrypts to content.
    """
    wkey = aead.seal(wrap_key, record_key, _row_ad(vault_id, rid, seq, state, _tag(blob)))
    return Row(rid, seq, state, wkey, blob)


def unwrap_key(wrap_key: bytes, vault_id: bytes, row: Row) -> bytes:
    """Authenticate a row and return its record key (empty for a tombstone)."""
    if (row.state == SHREDDED) != (row.blob is None):
        raise IntegrityError(f"record {row.rid} is damaged", "restore a backup")
    key = aead.unseal(
        wrap_key,
        row.wkey,
        _row_ad(vault_id, row.rid, row.seq, row.state, _tag(row.blob)),
        what=f"record {row.rid}",
    )
    if len(key) != (0 if row.state == SHREDDED else aead.KEY_BYTES):
        raise IntegrityError(f"record {row.rid} is damaged", "restore a backup")
    return key


def open_row(wrap_key: bytes, vault_id: bytes, row: Row) -> Payload | None:
    """Authenticate and decrypt a row; None for a shredded one."""
    if row.blob is None:
        unwrap_key(wrap_key, vault_id, row)
        return None
    raw = aead.unseal_wrapped(
        wrap_key,
        row.wkey,
        _row_ad(vault_id, row.rid, row.seq, row.state, row.blob[-aead.TAG_BYTES :]),
        row.blob,
        _blob_ad(vault_id, row.rid),
        what=f"record {row.rid}",
    )
    return decode_payload(raw, row.rid)
