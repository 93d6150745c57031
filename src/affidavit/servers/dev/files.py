"""``write_file`` / ``read_file``: whole-file reads and atomic writes inside the repository."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import Any

from affidavit.core.atomic import write_atomic
from affidavit.core.errors import InputError, NotFoundError
from affidavit.servers.dev import confine

MAX_FILE_BYTES = 8 * 1024 * 1024


def write_file(root: Path, path: str, content: str) -> dict[str, Any]:
    """Replace (or create) ``path`` with ``content`` as UTF-8, atomically.

    Missing parent directories are created; they are inside the repository because the
    nearest existing ancestor was resolved by :func:`confine.repo_path`. An existing file
    keeps its permission bits.
    """
    if not isinstance(content, str):
        raise InputError("content must be a string")
    target = confine.repo_path(root, path)
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            "content is not valid Unicode (it has a lone surrogate)", "send real text"
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"content is larger than {MAX_FILE_BYTES} bytes", "write it in parts")
    if target.is_dir():
        raise InputError(f"{path!r} is a directory", "name a file")
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data, mode=mode)
    except OSError as exc:  # a parent is a file, the disk is full, permission denied
        raise InputError(
            f"cannot write {path!r}: {exc.strerror or exc}", "check the path and the disk"
        ) from None
    return {
        "path": confine.relative(root, target),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def read_bytes(root: Path, path: str) -> tuple[str, bytes]:
    """The repository-relative name and bytes of an existing regular file."""
    target = confine.repo_path(root, path)
    if not target.exists():
        raise NotFoundError(f"no file {path!r} in the repository")
    if not target.is_file():
        raise InputError(f"{path!r} is not a regular file", "name a file")
    size = target.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path!r} is larger than {MAX_FILE_BYTES} bytes", "read it another way")
    try:
        return confine.relative(root, target), target.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path!r}: {exc.strerror or exc}") from None


def read_file(root: Path, path: str) -> tuple[str, dict[str, Any]]:
    """The text of ``path`` and its identity; binary files are refused with their size."""
    rel, data = read_bytes(root, path)
    info = {"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    try:
        return data.decode("utf-8"), info
    except UnicodeDecodeError:
        raise InputError(
            f"{rel!r} is binary ({len(data)} bytes), not UTF-8 text",
            f"read it as the resource repo://file/{rel} to get base64",
        ) from None
