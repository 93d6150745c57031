"""The sealed snapshot of an unlocked vault's RAM view: what lets a new process skip the full
decrypt (ADR 0210, docs/FORMAT.md "Snapshot").

Why: unlocking decrypts every row (two XChaCha20-Poly1305 opens and a JSON parse each,
~175 ms of CPU at 10,000 records, ~2 s at 100,000) and recall then rebuilds its index, at
every start of every process, although the log rarely changed since the last one. A snapshot
keeps that view as one file, ``snapshot.sealed`` beside the vault (in a team vault's local
directory, on each client): the live and internal records, the ids forgotten or shredded,
the log position it reflects (sequence number, audit entries and head, row count) and
sections the layers above add (recall's keyword index). Opening it is one read, a few large
AEAD opens and one JSON parse; the vault then reads the log's tail after that position like
any refresh, checked against the audit entries written since.

What keeps it honest:

- It is sealed under a random *snapshot key* that lives in the log itself, as an internal
  record (:data:`KEY_KIND`). Shredding any record overwrites that key with a new one in the
  same transaction (the old row is erased like the shredded record's), so every snapshot
  written before, on any client, stops decrypting: a snapshot never outlives
  the crypto-shredding guarantee (docs/SECURITY.md).
- The header is bound to the vault id, each section to the snapshot's random id, its place
  and its name: sections of two snapshots cannot be mixed, a truncated file does not open.
- It is a cache, never the truth: a snapshot that does not open (tampered, torn, another
  vault's, its key replaced), that is ahead of the log, or whose position is not on the log's
  own audit chain is ignored, and the vault decrypts the log as before. So is one whose
  view, brought up to date by the tail, differs from a single row in the store (an older
  copy of a row put back below the snapshot's position): what a full load checks against
  the audit log is checked against the view, which the audit log checked when it was made.
  A view the audit log refused is never saved.

Nothing here is plaintext on disk: sections are sealed in RAM and only ciphertext is written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import struct
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from affidavit.core.errors import IntegrityError
from affidavit.crypto import aead

FILE_NAME = "snapshot.sealed"
#: The internal record holding the snapshot key (sealed like every record, shredded with any).
KEY_KIND = "_snapshot"
KEY_NAME = "key"
MAGIC = b"AFDVSNP1"
#: A snapshot larger than this is not read (a 100,000-memory vault's is ~120 MB).
MAX_BYTES = 4 << 30
_LEN = struct.Struct(">Q")
_AD = b"affidavit-snapshot-v1|"


@dataclass(frozen=True)
class Position:
    """Where in the log a snapshot was taken (what the anchor said then)."""

    seq: int
    audit_n: int
    audit_head: str
    rows: int


@dataclass(frozen=True)
class Opened:
    """A snapshot that opened: its position and its named sections (plaintext, RAM only)."""

    position: Position
    sections: dict[str, bytes]


def path_in(directory: Path) -> Path:
    """Where the snapshot of the vault in ``directory`` lives."""
    return Path(directory) / FILE_NAME


def seal(
    key: bytes, vault_id: bytes, position: Position, sections: Mapping[str, bytes]
) -> list[bytes]:
    """The snapshot file's bytes, as chunks to write one after the other."""
    ident = secrets.token_hex(16)
    names = list(sections)
    head = orjson.dumps(
        {
            "id": ident,
            "seq": position.seq,
            "audit_n": position.audit_n,
            "audit_head": position.audit_head,
            "rows": position.rows,
            "sections": names,
        }
    )
    sealed_head = aead.seal(key, head, _AD + vault_id)
    chunks = [MAGIC, _LEN.pack(len(sealed_head)), sealed_head]
    for place, name in enumerate(names):
        body = aead.seal(key, sections[name], _section_ad(vault_id, ident, place, name))
        chunks += [_LEN.pack(len(body)), body]
    return chunks


def open_sealed(key: bytes, vault_id: bytes, data: bytes) -> Opened:
    """Open a snapshot file's bytes; IntegrityError when anything in it does not hold."""
    view = memoryview(data)
    if bytes(view[: len(MAGIC)]) != MAGIC:
        raise IntegrityError("the vault's snapshot is not one this release reads")
    at = len(MAGIC)
    blob, at = _chunk(view, at)
    head = orjson.loads(aead.unseal(key, blob, _AD + vault_id, what="the vault's snapshot"))
    try:
        position = Position(
            int(head["seq"]), int(head["audit_n"]), str(head["audit_head"]), int(head["rows"])
        )
        ident, names = str(head["id"]), [str(name) for name in head["sections"]]
    except (KeyError, TypeError, ValueError):
        raise IntegrityError("the vault's snapshot header is unreadable") from None
    sections: dict[str, bytes] = {}
    for place, name in enumerate(names):
        blob, at = _chunk(view, at)
        ad = _section_ad(vault_id, ident, place, name)
        sections[name] = aead.unseal(key, blob, ad, what="a section of the vault's snapshot")
    if at != len(view):
        raise IntegrityError("the vault's snapshot has bytes after its last section")
    return Opened(position, sections)


def read(directory: Path) -> bytes | None:
    """The snapshot file's bytes, or None when there is none (or no regular file of a sane
    size: a snapshot is only ever a cache)."""
    path = path_in(directory)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not _regular(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return handle.read()


def write(directory: Path, chunks: list[bytes]) -> None:
    """Replace the snapshot atomically (0600): a crash leaves the old file or the new one.

    Not fsynced: a snapshot lost or torn by a power cut fails to open and is ignored, and a
    vault that opens without one is only slower.
    """
    path = path_in(directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{FILE_NAME}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
        raise


def discard(directory: Path) -> None:
    """Remove the snapshot file (after a shred: its key is gone, its bytes are noise)."""
    with contextlib.suppress(OSError):
        path_in(directory).unlink()


def _chunk(view: memoryview, at: int) -> tuple[bytes, int]:
    if at + _LEN.size > len(view):
        raise IntegrityError("the vault's snapshot is truncated")
    (size,) = _LEN.unpack_from(view, at)
    at += _LEN.size
    if at + size > len(view):
        raise IntegrityError("the vault's snapshot is truncated")
    return bytes(view[at : at + size]), at + size


def _section_ad(vault_id: bytes, ident: str, place: int, name: str) -> bytes:
    return _AD + vault_id + f"|{ident}|{place}|{name}".encode()


def _regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)
