"""The protocol's byte streams on private descriptors, for a server that speaks over stdio.

While serving, fd 0 reads ``/dev/null`` and fd 1 writes to stderr, so a child process or a
stray ``print`` can neither swallow nor corrupt protocol lines; :meth:`Wire.release` points
them back. Shared by the SDK transport (:mod:`.stdio`) and the memory server's fast path
(:mod:`.toolserver`), which hands the same :class:`Wire` to the SDK transport mid-session.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO


@dataclass(frozen=True)
class Wire:
    """The protocol's input and output, and how to give fd 0 and 1 back."""

    incoming: IO[bytes]
    outgoing: IO[bytes]
    release: Callable[[], None]
    _writing: threading.Lock = field(default_factory=threading.Lock, compare=False)

    def write_line(self, data: bytes) -> None:
        """Write one message and flush it (whole lines, whichever thread writes)."""
        with self._writing:
            self.outgoing.write(data + b"\n")
            self.outgoing.flush()


def claim() -> Wire:
    """The wire's input and output on private descriptors, fd 0 and 1 pointed elsewhere."""
    sys.stdout.flush()
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)

    def release() -> None:
        os.dup2(wire_in_fd, 0)
        os.dup2(wire_out_fd, 1)

    # closefd=False: a reader thread may still be blocked on the descriptor at exit, so it is
    # never closed (and never reused under that thread).
    incoming = os.fdopen(wire_in_fd, "rb", closefd=False)
    outgoing = os.fdopen(wire_out_fd, "wb", closefd=False)
    return Wire(incoming, outgoing, release)
