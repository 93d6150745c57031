"""Which calls on the same repository or file overlapped in time.

The relay forwards calls concurrently. Two commits in flight on one repository each see the
other's work after the reply (HEAD moved twice, the second commit's parent is the first), so a
check that is exact for one call would contradict both honest calls. A verifier therefore
marks each call's window, from its snapshot to its verdict, on what the call touches; a call
whose window overlapped another's on something both touch cannot tell its own effect from the
other's, and a mismatch it finds becomes ``unchecked`` instead of ``contradicted``.

Keys are resolved absolute paths, and a key covers everything below it: a file call keys on
its file (and a move's destination), a repository-wide call (a commit, a status read) on the
repository. So two writes to different files never excuse each other, while a commit and a
write inside its repository do. Keying file calls on the whole root would let two concurrent
lies about two files pass as "overlapping".

The relay does not ask for a verdict when the backend answers with an error, so some windows
are never closed. Such a window must not excuse later lies: a backend could fail one call on
purpose and then lie freely. So an open window that started *before* this call counts only if
it started at most :data:`OPEN_WINDOW_GRACE_S` earlier (concurrent calls are sent together; an
agent takes longer than that between an error and its next call). Windows that started
*during* this call, or that closed after it began, always count: a backend cannot make the
host start a call.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from affidavit.proxy.verifiers.base import Evidence, Receipt, Verdict

OPEN_WINDOW_GRACE_S = 2.0
FORGET_AFTER_S = 300.0


@dataclass
class _Window:
    keys: frozenset[str]
    start: float
    end: float | None = None


class Overlaps:
    """Windows per key, open and recently closed; thread-safe (verifiers run in threads)."""

    def __init__(self, grace_s: float = OPEN_WINDOW_GRACE_S) -> None:
        self.grace_s = grace_s
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._windows: dict[int, _Window] = {}

    def begin(self, keys: Iterable[str]) -> int:
        """Open a window on ``keys``; returns its token."""
        now = time.monotonic()
        with self._lock:
            for token, window in list(self._windows.items()):
                if now - (window.end or window.start) > FORGET_AFTER_S:
                    del self._windows[token]
            token = next(self._ids)
            self._windows[token] = _Window(frozenset(keys), now)
            return token

    def end(self, token: int) -> bool:
        """Close a window; True when another call on a shared key overlapped it."""
        now = time.monotonic()
        with self._lock:
            mine = self._windows.get(token)
            if mine is None:
                return False
            mine.end = now
            return any(
                other is not mine and _touch(mine.keys, other.keys) and self._overlap(mine, other)
                for other in self._windows.values()
            )

    def _overlap(self, mine: _Window, other: _Window) -> bool:
        assert mine.end is not None
        if mine.start <= other.start <= mine.end:
            return True  # the host started it while this call was in flight
        if other.start > mine.start:
            return False
        if other.end is not None:
            return other.end >= mine.start  # it finished after this call began
        return mine.start - other.start <= self.grace_s  # still open: only if recent


def _covers(outer: str, inner: str) -> bool:
    """Whether the path key ``outer`` is ``inner`` or a directory holding it."""
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def _touch(mine: frozenset[str], other: frozenset[str]) -> bool:
    """Whether two calls' keys share a path (one equal to or holding the other)."""
    return any(_covers(a, b) or _covers(b, a) for a in mine for b in other)


# One registry for every built-in verifier, so a file write and a status read on the same
# repository see each other: keys are resolved paths (files, or repositories).
WINDOWS = Overlaps()


def excuse_overlap(receipt: Receipt, overlapped: bool) -> Receipt:
    """A contradiction found while another call on the same key was in flight: unchecked."""
    if not overlapped or receipt.verdict is not Verdict.CONTRADICTED:
        return receipt
    note = Evidence(
        "another call on the same repository or file was in flight at the same time, so its "
        "effects cannot be told apart from this call's; the mismatch is not held against it",
        "proxy",
    )
    return replace(receipt, verdict=Verdict.UNCHECKED, evidence=(*receipt.evidence, note))
