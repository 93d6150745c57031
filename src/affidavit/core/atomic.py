"""Files written whole or not at all.

Writes go to a temporary name in the same directory, are flushed and fsynced, then renamed
over the target, so a crash leaves either the old file or the new one, never half of each.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

SECRET_FILE_MODE = 0o600
SECRET_DIR_MODE = 0o700


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically, with permission bits ``mode``."""
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp_name).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename or create inside ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_private_dir(directory: Path) -> Path:
    """Create ``directory`` (and parents) if needed and make it 0700."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True, mode=SECRET_DIR_MODE)
    directory.chmod(SECRET_DIR_MODE)
    return directory
