"""Git's own files read without starting git: loose objects and the index's tree.

A ``git`` start costs ~3.5 ms here (10 ms under load), and the commit check used to need two
of them (ADR 0082). Both things it needs right after a commit sit in plain files: the new commit
is a loose object (every writer creates loose objects; only ``gc``/``repack`` packs them), and
"nothing is staged" is "the tree the index would write equals HEAD's tree".

Nothing here is trusted more than git would be: a loose object is used only if the SHA-1 of
its inflated bytes is its name, and the index only if its trailing checksum holds. Each reader
answers only the case it fully understands and returns None otherwise (packed or missing
objects, tags, re-encoded messages, replace refs and grafts, split or sparse indexes, conflicts,
intent-to-add entries), so the caller asks git exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

MAX_LOOSE_BYTES = 8 * 1024 * 1024
MAX_INDEX_ENTRIES = 20_000  # above this, hashing trees in Python costs more than a git start
_EXTENDED = 0x4000
_INTENT_TO_ADD = 0x2000
_TREE_MODE = 0o040000


@dataclass(frozen=True)
class LooseObject:
    """One verified loose object: its type (``commit``, ``tree``, ``blob``, ``tag``) and body."""

    kind: str
    body: bytes


def plain_history(common_dir: Path) -> bool:
    """Whether git would show objects exactly as stored (no grafts, shallow or replace refs).

    ``git log`` rewrites parents through ``info/grafts`` and ``shallow`` and swaps objects named
    under ``refs/replace/``; where any of them exists only git can say what it would show.
    Checked from the files themselves (a few ``stat`` calls, no ref walk).
    """
    if os.environ.get("GIT_OBJECT_DIRECTORY") or os.environ.get("GIT_REPLACE_REF_BASE"):
        return False
    if (common_dir / "shallow").exists() or (common_dir / "info" / "grafts").exists():
        return False
    try:
        if any(os.scandir(common_dir / "refs" / "replace")):
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        packed = (common_dir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return b" refs/replace/" not in packed


def read_loose(objects_dir: Path, sha: str) -> LooseObject | None:
    """The loose object ``sha`` (40 hex digits), or None if it is not a sound loose object."""
    if len(sha) != 40:
        return None
    path = objects_dir / sha[:2] / sha[2:]
    try:
        with path.open("rb") as handle:
            inflater = zlib.decompressobj()
            raw = inflater.decompress(handle.read(MAX_LOOSE_BYTES + 1), MAX_LOOSE_BYTES + 64)
    except (OSError, zlib.error):
        return None
    if not inflater.eof:
        return None  # larger than we read, or truncated
    header, sep, body = raw.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not sep or not size.isdigit() or int(size) != len(body):
        return None
    if hashlib.sha1(raw, usedforsecurity=False).hexdigest() != sha:
        return None
    return LooseObject(kind=kind.decode("ascii", "replace"), body=body)


@dataclass(frozen=True)
class CommitFields:
    """What a commit's raw body says: tree, parents and message (as ``git log %B`` prints)."""

    tree: str
    parents: tuple[str, ...]
    message: str


def parse_commit(body: bytes) -> CommitFields | None:
    """The header fields and message of a commit body; None where git would re-encode it."""
    head, _, message = body.partition(b"\n\n")
    tree: str | None = None
    parents: list[str] = []
    for line in head.split(b"\n"):
        if line.startswith(b" "):
            continue  # continuation of a multi-line header (gpgsig, mergetag)
        key, _, value = line.partition(b" ")
        if key == b"tree" and tree is None:
            tree = value.decode("ascii", "replace")
        elif key == b"parent":
            parents.append(value.decode("ascii", "replace"))
        elif key == b"encoding" and value.strip().lower() not in (b"utf-8", b"utf8"):
            return None
    if tree is None:
        return None
    return CommitFields(
        tree=tree, parents=tuple(parents), message=message.decode("utf-8", "replace")
    )


def _entries(data: bytes) -> list[tuple[bytes, int, bytes]] | None:
    """Index entries as (path, mode, binary oid), or None for any index git alone should read."""
    if len(data) < 32 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4) or count > MAX_INDEX_ENTRIES:
        return None
    if data[-20:] == b"\0" * 20:  # index.skipHash: nothing vouches for the bytes
        return None
    if hashlib.sha1(data[:-20], usedforsecurity=False).digest() != data[-20:]:
        return None
    entries: list[tuple[bytes, int, bytes]] = []
    pos, previous = 12, b""
    end = len(data) - 20
    for _ in range(count):
        if pos + 62 > end:
            return None
        mode = struct.unpack_from(">I", data, pos + 24)[0]
        oid = data[pos + 40 : pos + 60]
        flags = struct.unpack_from(">H", data, pos + 60)[0]
        name_at = pos + 62
        if flags & _EXTENDED:
            if version < 3 or struct.unpack_from(">H", data, name_at)[0] & _INTENT_TO_ADD:
                return None
            name_at += 2
        if flags & 0x3000 or mode == _TREE_MODE:
            return None  # a conflict stage or a sparse-index directory
        if version == 4:
            strip, name_at = _varint(data, name_at)
            nul = data.find(b"\0", name_at, end)
            if nul < 0 or strip > len(previous):
                return None
            path = previous[: len(previous) - strip] + data[name_at:nul]
            pos = nul + 1
        else:
            nul = data.find(b"\0", name_at, end)
            if nul < 0:
                return None
            path = data[name_at:nul]
            pos += (name_at - pos + len(path) + 8) & ~7
        entries.append((path, mode, oid))
        previous = path
    if _has_extension(data, pos, end, b"link"):
        return None  # split index: the entries live partly in another file
    return entries


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """Git's offset varint (index v4 path prefix lengths) at ``pos``; (value, next position)."""
    byte = data[pos]
    value = byte & 0x7F
    pos += 1
    while byte & 0x80:
        byte = data[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
        pos += 1
    return value, pos


def _has_extension(data: bytes, pos: int, end: int, signature: bytes) -> bool:
    while pos + 8 <= end:
        size = struct.unpack_from(">I", data, pos + 4)[0]
        if data[pos : pos + 4] == signature:
            return True
        pos += 8 + size
    return False


def _tree_id(entries: list[tuple[bytes, int, bytes]], lo: int, hi: int, prefix: bytes) -> bytes:
    """The binary id of the tree ``git write-tree`` would write for entries[lo:hi] under prefix.

    Index order (bytewise by full path) is tree order (directories compare as ``name/``), and
    a directory's entries are contiguous, so one pass per level suffices.
    """
    body = bytearray()
    skip = len(prefix)
    i = lo
    while i < hi:
        path, mode, oid = entries[i]
        slash = path.find(b"/", skip)
        if slash < 0:
            body += b"%o %s\0" % (mode, path[skip:]) + oid
            i += 1
            continue
        sub = path[: slash + 1]
        j = i + 1
        while j < hi and entries[j][0].startswith(sub):
            j += 1
        body += b"40000 " + path[skip:slash] + b"\0" + _tree_id(entries, i, j, sub)
        i = j
    return hashlib.sha1(b"tree %d\0" % len(body) + bytes(body), usedforsecurity=False).digest()


def index_tree(index_file: Path) -> str | None:
    """Hex id of the tree the index at ``index_file`` would write; None if it cannot be read."""
    try:
        data = index_file.read_bytes()
    except OSError:
        return None
    entries = _entries(data)
    if entries is None:
        return None
    return _tree_id(entries, 0, len(entries), b"").hex()
