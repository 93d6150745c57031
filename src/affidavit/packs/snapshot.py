"""Stop on change: remember the identity of the files that were verified, compare cheaply.

A serving process verified certain bytes; if anything in the pack folder changes afterwards
(an edit, a touch, an added or removed file, the folder swapped), the verified snapshot no
longer describes the disk and serving must stop. The comparison uses metadata only (names,
size, mtime, ctime, device, inode, type), never re-reads, so it can run on every call.
``ctime`` cannot be set back by an ordinary user, so restoring an mtime does not hide an edit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

StatKey = tuple[int, int, int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    """The parts of a stat result that change when a file is edited, touched or replaced."""
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)


class PackSnapshot:
    """The metadata of a pack directory as it was when its bytes were verified."""

    __slots__ = ("_entries", "_names", "_root", "_root_key")

    def __init__(self, root: Path, root_key: StatKey, files: Mapping[str, StatKey]) -> None:
        """``root_key`` and ``files`` come from ``fstat`` of the descriptors actually read."""
        self._root = os.fspath(root)
        self._root_key = root_key
        self._names = sorted(files)
        # Plain strings and os.* calls: this runs on every tool call and must stay far below 0.2 ms.
        self._entries = tuple(
            (os.path.join(self._root, name), key)  # noqa: PTH118
            for name, key in sorted(files.items())
        )

    @property
    def root(self) -> Path:
        """The pack directory this snapshot describes."""
        return Path(self._root)

    def unchanged(self) -> bool:
        """Whether the folder still holds exactly the verified files, untouched."""
        try:
            if stat_key(os.lstat(self._root)) != self._root_key:
                return False
            if sorted(os.listdir(self._root)) != self._names:  # noqa: PTH208
                return False
            for path, key in self._entries:
                if stat_key(os.lstat(path)) != key:
                    return False
        except OSError:
            return False
        return True
