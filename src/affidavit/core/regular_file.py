"""Reading a file that someone else may have swapped for something else (the keyfile rule).

A path handed to us as "a file" can name a FIFO (opening it waits for a writer forever), a
device such as ``/dev/zero`` (reading it never ends), a directory, a huge file, or a symbolic
link into somebody else's files. :func:`open_regular` opens without blocking and checks on the
open descriptor that it is a regular file of at most ``limit`` bytes; :func:`read_regular`
never reads more than ``limit + 1`` bytes, so none of those can hang or exhaust the process.

Every path a user names (a keyfile, an export, notes, a transcript) is read through here;
:func:`read_named` and :func:`open_named` word the refusal as the one error the user sees.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from affidavit.core.errors import InputError, NotFoundError

MIB = 1024 * 1024
USER_FILE_LIMIT = 256 * MIB
"""The largest file a user may name for reading (an export, notes, a plaintext vault export):
big enough for years of chat history, small enough that reading it cannot exhaust memory."""


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


def size_words(size: int) -> str:
    """A byte count as people read it in an error ("300 MiB", "12 bytes")."""
    return f"{size // MIB} MiB" if size >= MIB else f"{size} bytes"


@contextlib.contextmanager
def open_regular(
    path: Path, limit: int | None, *, follow_symlinks: bool = True
) -> Iterator[BinaryIO]:
    """The regular file at ``path`` opened for reading, checked on its descriptor: at most
    ``limit`` bytes now (a reader must still bound what it reads: a file can grow). ``None``:
    any size, for a reader that reads a bounded piece of a long file at a time.

    The open never blocks (a FIFO with no writer opens at once, and is then refused). With
    ``follow_symlinks=False`` a symbolic link is refused instead of followed. Raises
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
        if limit is not None and info.st_size > limit:
            raise TooLargeError(size_words(info.st_size))
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_bounded(handle: BinaryIO, limit: int) -> bytes:
    """Everything left in ``handle``, or TooLargeError past ``limit`` bytes (reads at most
    ``limit + 1``)."""
    data = handle.read(limit + 1)
    if len(data) > limit:  # it grew after the size was checked
        raise TooLargeError(f"more than {size_words(limit)}")
    return data


def read_regular(path: Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, which must hold at most ``limit`` bytes
    (see :func:`open_regular` for what is refused and raised)."""
    with open_regular(path, limit, follow_symlinks=follow_symlinks) as handle:
        return read_bounded(handle, limit)


@contextlib.contextmanager
def open_named(
    path: Path, limit: int | None = USER_FILE_LIMIT, *, what: str = "a file"
) -> Iterator[BinaryIO]:
    """:func:`open_regular` for a path the user named: every refusal is one clear error
    (NotFoundError when nothing is there, else InputError saying what is there instead)."""
    try:
        with open_regular(path, limit) as handle:
            yield handle
    except FileNotFoundError:
        raise NotFoundError(f"{path} does not exist", "check the path") from None
    except NotRegularError as exc:
        raise InputError(f"{path} is {exc}, not a regular file", f"name {what}") from None
    except TooLargeError as exc:
        most = f"; affidavit reads at most {size_words(limit)}" if limit is not None else ""
        raise InputError(
            f"{path} is too large ({exc}){most}",
            "split it into smaller files",
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", "check its permissions") from None


def read_named(path: Path, limit: int = USER_FILE_LIMIT, *, what: str = "a file") -> bytes:
    """The bytes of a file the user named, or one clear error (see :func:`open_named`)."""
    with open_named(path, limit, what=what) as handle:
        return read_bounded(handle, limit)
