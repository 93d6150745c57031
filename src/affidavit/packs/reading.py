"""Check 1 of verification: read a pack's files safely and check checksums and records.

Each file is opened once, relative to a descriptor of the pack directory, with ``O_NOFOLLOW``
(no symlinks) and ``O_NONBLOCK`` (a FIFO cannot stall us), and checked to be a regular file of
bounded size. The bytes hashed are the bytes parsed, and the snapshot is taken from ``fstat``
of those same descriptors, so nothing can change between verifying and snapshotting unnoticed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.packs import format as fmt
from affidavit.packs.errors import (
    Check,
    PackFormatError,
    PackRefused,
)
from affidavit.packs.snapshot import PackSnapshot, StatKey, stat_key

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LIMITS = {fmt.SUMS: fmt.MAX_MANIFEST, fmt.SIGNATURE: fmt.MAX_SIGNATURE}
# Signing cannot repair a pack that fails check 1 (signing reads the pack through check 1 too).
_REBUILD = (
    "rebuild it from its source messages with `affidavit pack build`, "
    "or get an intact copy from whoever made it"
)


@dataclass(frozen=True)
class PackContents:
    """Everything check 1 established: the bytes read, the parsed records and the snapshot."""

    path: Path
    files: dict[str, bytes]
    digests: dict[str, str]
    records: tuple[dict[str, Any], ...]
    meta: fmt.PackMeta | None
    snapshot: PackSnapshot

    @property
    def manifest_sha256(self) -> str:
        """SHA-256 of the SHA256SUMS bytes: one value that pins the whole pack."""
        return hashlib.sha256(self.files[fmt.SUMS]).hexdigest()


def _refuse(message: str, hint: str | None = None) -> PackRefused:
    return PackRefused(Check.FILES, message, hint)


def _open_root(root: Path) -> tuple[int, os.stat_result]:
    if not root.is_absolute():
        raise _refuse(
            f"pack path {root} is relative", "give the pack directory as an absolute path"
        )
    try:
        before = os.lstat(root)
    except FileNotFoundError:
        raise _refuse(f"pack directory {root} does not exist") from None
    except OSError as exc:
        raise _refuse(f"cannot open pack directory {root}: {exc.strerror}") from exc
    if stat.S_ISLNK(before.st_mode):
        raise _refuse(
            f"pack directory {root} is a symlink", "point at the real directory, not a link"
        )
    if not stat.S_ISDIR(before.st_mode):
        raise _refuse(f"pack path {root} is not a directory")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise _refuse(f"cannot open pack directory {root}: {exc.strerror}") from exc
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise _refuse(f"pack directory {root} was replaced while it was being opened")
    return fd, opened


def _check_inventory(names: list[str]) -> None:
    if len(names) > len(fmt.ALLOWED_FILES):
        raise _refuse(
            f"pack directory has {len(names)} entries; a pack holds at most "
            f"{len(fmt.ALLOWED_FILES)} files",
            "a pack is exactly records.jsonl, MEMORY.md, README.md, SHA256SUMS "
            "and optionally PACK.json and SHA256SUMS.sig",
        )
    for name in sorted(names):
        if name not in fmt.ALLOWED_FILES:
            kind = "hidden entry" if name.startswith(".") else "unexpected entry"
            raise _refuse(
                f"pack directory holds a {kind} {name[:80]!r}",
                "a pack holds only records.jsonl, MEMORY.md, README.md, SHA256SUMS, "
                "PACK.json and SHA256SUMS.sig",
            )
    for name in fmt.REQUIRED_FILES:
        if name not in names:
            raise _refuse(f"pack is missing {name}", _REBUILD)


def _read_file(dir_fd: int, name: str) -> tuple[bytes, StatKey]:
    limit = _LIMITS.get(name, fmt.MAX_DATA_FILE)
    try:
        entry = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        raise _refuse(f"cannot read {name}: {exc.strerror}") from exc
    if stat.S_ISLNK(entry.st_mode):
        raise _refuse(f"{name} is a symlink", "a pack holds regular files only")
    if not stat.S_ISREG(entry.st_mode):
        raise _refuse(f"{name} is not a regular file", "a pack holds regular files only")
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _refuse(f"cannot open {name}: {exc.strerror}") from exc
    try:
        opened = os.fstat(fd)
        same_file = (opened.st_dev, opened.st_ino) == (entry.st_dev, entry.st_ino)
        if not stat.S_ISREG(opened.st_mode) or not same_file:
            raise _refuse(f"{name} was replaced while the pack was being verified")
        if opened.st_size > limit:
            raise _refuse(f"{name} is {opened.st_size} bytes; the limit is {limit}")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, limit + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if len(data) != opened.st_size or stat_key(os.fstat(fd)) != stat_key(opened):
            raise _refuse(f"{name} changed while the pack was being verified")
    finally:
        os.close(fd)
    return data, stat_key(opened)


def _read_files(root: Path) -> tuple[dict[str, bytes], PackSnapshot]:
    dir_fd, opened = _open_root(root)
    try:
        try:
            names = os.listdir(dir_fd)  # noqa: PTH208 - by descriptor, no path race
        except OSError as exc:
            raise _refuse(f"cannot list pack directory {root}: {exc.strerror}") from exc
        _check_inventory(names)
        files: dict[str, bytes] = {}
        keys: dict[str, StatKey] = {}
        for name in sorted(names):
            files[name], keys[name] = _read_file(dir_fd, name)
        if stat_key(os.fstat(dir_fd)) != stat_key(opened):
            raise _refuse("pack directory changed while it was being verified")
    finally:
        os.close(dir_fd)
    return files, PackSnapshot(root, stat_key(opened), keys)


def _check_checksums(files: dict[str, bytes]) -> dict[str, str]:
    try:
        manifest = fmt.parse_manifest(files[fmt.SUMS])
    except PackFormatError as exc:
        raise PackRefused(Check.CHECKSUMS, exc.message, _REBUILD) from exc
    sealed = fmt.SEALED_FILES.intersection(files)
    unlisted = sorted(sealed - set(manifest))
    if unlisted:
        raise PackRefused(Check.CHECKSUMS, f"{fmt.SUMS} does not list {unlisted[0]}", _REBUILD)
    absent = sorted(set(manifest) - sealed)
    if absent:
        raise PackRefused(
            Check.CHECKSUMS, f"{fmt.SUMS} lists {absent[0]}, which is not in the pack", _REBUILD
        )
    digests = {}
    for name in sorted(manifest):
        digest = hashlib.sha256(files[name]).hexdigest()
        if digest != manifest[name]:
            raise PackRefused(
                Check.CHECKSUMS,
                f"{name} does not match its {fmt.SUMS} checksum (the file was changed)",
                _REBUILD,
            )
        digests[name] = digest
    return digests


def read_pack(pack_dir: Path) -> PackContents:
    """Check 1: inventory, regular files, limits, checksums, UTF-8, records and PACK.json."""
    root = Path(pack_dir)
    files, snapshot = _read_files(root)
    digests = _check_checksums(files)
    for name in (fmt.MEMORY, fmt.README):
        try:
            files[name].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PackRefused(
                Check.RECORDS, f"{name} is not valid UTF-8 (byte {exc.start})", _REBUILD
            ) from exc
    try:
        records = fmt.parse_records(files[fmt.RECORDS])
    except PackFormatError as exc:
        raise PackRefused(Check.RECORDS, exc.message, _REBUILD) from exc
    meta = None
    if fmt.PACK_JSON in files:
        try:
            meta = fmt.parse_pack_json(files[fmt.PACK_JSON])
        except PackFormatError as exc:
            raise PackRefused(Check.PACK_JSON, exc.message, _REBUILD) from exc
    return PackContents(root, files, digests, records, meta, snapshot)
