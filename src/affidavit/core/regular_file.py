"""Reading a small file that someone else may have swapped for something else.

A path handed to us as "a file" can name a FIFO (opening it waits for a writer forever), a
device such as ``/dev/zero`` (reading it never ends), a directory, a huge file, or a symbolic
link into somebody else's files. :func:`read_regular` opens without blocking, checks on the
open descriptor that it is a regular file of at most ``limit`` bytes, and never reads more
than ``limit + 1`` bytes, so none of those can hang or exhaust the process.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotRegularError(ValueError):
    """The path names something other than a regular file (the message says what)."""


class TooLargeError(ValueError):
    """The file is larger than the caller's bound."""


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe(mode: int) -> str:
    """What kind of file ``mode`` is, in words ("a FIFO", "a directory", ...)."""
    return next((words for test, words in _KINDS if test(mode)), "an unusual kind of file")


def read_regular(path: Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, which must hold at most ``limit`` bytes.

    With ``follow_symlinks=False`` a symbolic link is refused instead of followed. Raises
    FileNotFoundError, NotRegularError, TooLargeError, or OSError for other failures.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegularError("a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularError(describe(info.st_mode))
        if info.st_size > limit:
            raise TooLargeError(f"{info.st_size} bytes")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew after fstat
            raise TooLargeError(f"more than {limit} bytes")
        return data
    finally:
        os.close(fd)
