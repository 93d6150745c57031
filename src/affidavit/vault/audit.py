"""The vault's audit chain: one sealed, hash-chained entry per mutation.

An entry's body names the operation, the record id, its new seq, the time and the SHA-256
of the record ciphertext it produced (never any plaintext). Entry ``n`` is stored as
``seal(audit_key, {"prev", "hash", "body"}, ad = vault id | n)``, so entries cannot be read,
edited, swapped or renumbered without detection, and the chain links themselves are hidden.
The head (last hash and entry count) lives in the sealed header anchor, which is how a
truncated tail is caught. :func:`verify` walks the chain and cross-checks every record row
against the last entry that wrote it. :func:`last_versions` is the part of that walk every
read of the log needs (the vault's open and its refresh): which sequence number each record's
row must carry, so an older copy of a row put back by whoever holds the tables is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from affidavit.core.canonical import canonical_json, sha256_hex
from affidavit.core.errors import AffidavitError, IntegrityError
from affidavit.core.hashchain import GENESIS, ChainBreak, first_break, link_hash
from affidavit.crypto import aead
from affidavit.vault.header import Anchor
from affidavit.vault.rows import SHREDDED, Row


@dataclass(frozen=True)
class Entry:
    """One decrypted audit entry."""

    n: int
    prev: str
    hash: str
    body: dict[str, Any]


@dataclass
class AuditReport:
    """The result of walking the chain: ``ok`` or the first problem found."""

    ok: bool
    entries: int
    head: str
    problem: str | None = None
    index: int | None = None
    ops: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON for ``--json``."""
        return {
            "ok": self.ok,
            "entries": self.entries,
            "head": self.head,
            "problem": self.problem,
            "index": self.index,
            "ops": self.ops,
        }


def payload_hash(blob: bytes | None) -> str | None:
    """What an entry records about the row it wrote: the ciphertext's SHA-256."""
    return None if blob is None else sha256_hex(blob)


def _ad(vault_id: bytes, n: int) -> bytes:
    return b"affidavit-audit-v1|%s|%d" % (vault_id, n)


def make_entry(
    key: bytes, vault_id: bytes, n: int, prev: str, body: dict[str, Any]
) -> tuple[str, bytes]:
    """Seal entry ``n`` after ``prev``; return its hash and stored blob."""
    digest = link_hash(prev, body)
    sealed = aead.seal(
        key, canonical_json({"prev": prev, "hash": digest, "body": body}), _ad(vault_id, n)
    )
    return digest, sealed


def open_entry(key: bytes, vault_id: bytes, n: int, blob: bytes) -> Entry:
    """Decrypt one stored entry (raises on tampering)."""
    raw = aead.unseal(key, blob, _ad(vault_id, n), what=f"audit entry {n}")
    value = json.loads(raw)
    return Entry(n, value["prev"], value["hash"], value["body"])


def last_versions(
    key: bytes,
    vault_id: bytes,
    stored: Iterable[tuple[int, bytes]],
    start: tuple[int, str],
    anchor: Anchor,
) -> dict[str, int]:
    """The sequence number of each record's last version, from the entries after ``start``.

    ``start`` is ``(entries already known, their head)``: ``(0, GENESIS)`` for the whole log.
    Each entry must open and link to the one before it, and the last must be the anchor's
    head, so entries cannot be dropped, reordered or taken from another history (a database
    restored from an older backup and written again). Link hashes are compared, not
    recomputed: a sealed entry was written by a key holder, who computed its hash; ``verify``
    recomputes them. A row's sequence number is unique to one write and bound into the row's
    authentication, so ``(id, seq)`` names exactly one genuine row: the one the log wrote.
    """
    expected, head = start
    versions: dict[str, int] = {}
    prefix = _ad(vault_id, 0)[:-1]  # every entry's associated data but its number (hot loop)
    for n, blob in stored:
        expected += 1
        if n != expected:
            raise _rolled_back(f"audit entry {expected} is missing")
        try:
            entry = orjson.loads(aead.unseal(key, blob, prefix + b"%d" % n))
        except IntegrityError:
            raise _rolled_back(f"audit entry {n} failed authentication (tampered)") from None
        if entry["prev"] != head:
            raise _rolled_back(f"audit entry {n} does not follow the one before it (two histories)")
        head = entry["hash"]
        body = entry["body"]
        rid = body.get("id")
        if isinstance(rid, str) and "seq" in body:
            versions[rid] = body["seq"]
    if expected != anchor.audit_n or head != anchor.audit_head:
        raise _rolled_back(
            f"the audit log has {expected} entries but the header anchors {anchor.audit_n} "
            "(truncated or rolled back)"
        )
    return versions


def _rolled_back(problem: str) -> IntegrityError:
    return IntegrityError(
        f"the vault's audit log does not hold: {problem}",
        "stop writing; restore the newest backup (`affidavit audit verify` shows the details)",
    )


def verify(
    key: bytes,
    vault_id: bytes,
    stored: Iterable[tuple[int, bytes]],
    anchor: Anchor,
    rows: Iterable[Row],
) -> AuditReport:
    """Walk the chain, compare its end with the anchor and every row with its last entry."""
    entries: list[Entry] = []
    ops: dict[str, int] = {}
    for expected_n, (n, blob) in enumerate(stored, start=1):
        if n != expected_n:
            return _broken(entries, f"entry {expected_n} is missing", expected_n)
        try:
            entry = open_entry(key, vault_id, n, blob)
        except (AffidavitError, ValueError, KeyError, TypeError):
            return _broken(entries, f"entry {n} is unreadable (tampered or corrupt)", n)
        entries.append(entry)
        op = str(entry.body.get("op"))
        ops[op] = ops.get(op, 0) + 1
    brk: ChainBreak | None = first_break((e.prev, e.hash, e.body) for e in entries)
    if brk is not None:
        return _broken(entries, f"entry {brk.index + 1} {brk.reason}", brk.index + 1)
    head = entries[-1].hash if entries else GENESIS
    if len(entries) != anchor.audit_n or head != anchor.audit_head:
        return _broken(
            entries,
            f"the log has {len(entries)} entries but the header anchors {anchor.audit_n} "
            "(truncated or rolled back)",
            min(len(entries), anchor.audit_n) + 1,
        )
    last: dict[str, dict[str, Any]] = {}
    for e in entries:
        rid = e.body.get("id")
        if isinstance(rid, str) and "seq" in e.body:
            last[rid] = e.body
    for row in rows:
        body = last.get(row.rid)
        if body is None or body.get("seq") != row.seq:
            return _broken(
                entries, f"record {row.rid} has no audit entry for its current version", None
            )
        want = None if row.state == SHREDDED else payload_hash(row.blob)
        if body.get("payload") != want:
            return _broken(
                entries, f"record {row.rid} differs from what the audit log recorded", None
            )
    return AuditReport(True, len(entries), head, ops=ops)


def _broken(entries: list[Entry], problem: str, index: int | None) -> AuditReport:
    head = entries[-1].hash if entries else GENESIS
    return AuditReport(False, len(entries), head, problem=problem, index=index)
