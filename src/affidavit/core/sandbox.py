"""A one-way, in-process sandbox: once armed, this process may read but not change anything.

A read-only server (the pack server) arms it after start-up, when everything it needs is
loaded and stdio is connected. From then on a Python audit hook refuses file writes and
metadata changes, new processes and any socket use. Audit hooks cannot be removed, so the
sandbox lasts until the process exits; that is the point. It guards against our own bugs and
against libraries doing something unexpected, not against native code that bypasses Python
(ctypes, C extensions calling libc directly); those need an OS sandbox.

The refusal is a :class:`SandboxViolation`, which is both a ``PolicyError`` (one clear line
for users) and a ``PermissionError``, so code that already copes with an unwritable disk (the
import system skipping a ``.pyc`` write, for example) degrades instead of crashing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from affidavit.core.errors import PolicyError

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_WRITE_MODE_CHARS = frozenset("wax+")

# Audit events that change the filesystem whatever their arguments.
_FILESYSTEM_EVENTS = frozenset(
    {
        "os.chflags",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.lchflags",
        "os.lchmod",
        "os.lchown",
        "os.mkdir",
        "os.mkfifo",
        "os.mknod",
        "os.remove",
        "os.removexattr",
        "os.rename",
        "os.rmdir",
        "os.setxattr",
        "os.symlink",
        "os.truncate",
        "os.unlink",
        "os.utime",
        "shutil.chown",
        "shutil.copyfile",
        "shutil.copymode",
        "shutil.copystat",
        "shutil.copytree",
        "shutil.make_archive",
        "shutil.move",
        "shutil.rmtree",
        "shutil.unpack_archive",
    }
)

# Audit events that start another program.
_PROCESS_EVENTS = frozenset(
    {
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "os.system",
        "pty.spawn",
        "subprocess.Popen",
    }
)

_armed_reason: str | None = None
_hook_installed = False
_accepting = False


class SandboxViolation(PolicyError, PermissionError):
    """An armed sandbox refused an operation."""


def _opens_for_writing(args: tuple[Any, ...]) -> bool:
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and _WRITE_MODE_CHARS.intersection(mode):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _refusal(event: str, args: tuple[Any, ...]) -> str | None:
    """What an armed sandbox says about ``event``, or None when it is allowed."""
    if event == "open":
        return "open a file for writing" if _opens_for_writing(args) else None
    if event in _FILESYSTEM_EVENTS:
        return f"change the filesystem ({event})"
    if event in _PROCESS_EVENTS:
        return f"start a process ({event})"
    if event == "socket.__new__" and _accepting:
        return None  # the socket object of an accepted connection; bind and connect stay refused
    if event.startswith("socket."):
        return f"use a socket ({event})"
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _armed_reason is None:
        return
    refused = _refusal(event, args)
    if refused is not None:
        raise SandboxViolation(
            f"sandbox: refused to {refused}; this process is read-only ({_armed_reason})",
            "restart it if it needs to write",
        )


def arm(reason: str, *, accept_connections: bool = False) -> None:
    """Refuse writes, processes and sockets in this process from now on; cannot be undone.

    ``reason`` names who armed it (for example ``"pack server"``) and appears in every
    refusal, so a user seeing one knows which read-only mode they hit. ``accept_connections``
    lets a server that bound its listening socket before arming accept clients on it: Python
    makes a socket object for each accepted connection (``socket.__new__``); binding,
    connecting, name lookups and sending to an address stay refused.
    """
    global _armed_reason, _hook_installed, _accepting
    if not _hook_installed:
        sys.addaudithook(_hook)
        _hook_installed = True
    _armed_reason = reason
    _accepting = _accepting or accept_connections


def is_armed() -> bool:
    """True once :func:`arm` has run in this process."""
    return _armed_reason is not None
