"""Which calls on the same repository or file overlapped in time.

The relay forwards calls concurrently. Two commits in flight on one repository each see the
other's work after the reply (HEAD moved twice, the second commit's parent is the first), so a
check that is exact for one call would contradict both honest calls. A verifier therefore
marks each call's window, from its snapshot to its verdict, per key (a repository, a file);
a call whose window overlapped another's on the same key cannot tell its own effect from the
other's, and a mismatch it finds becomes ``unchecked`` instead of ``contradicted``.

Windows left open (the relay never asked for a verdict: a backend crash, a timeout) expire
after :data:`WINDOW_TTL_S`, so they degrade nothing for long.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable
from dataclasses import replace

from affidavit.proxy.verifiers.base import Evidence, Receipt, Verdict

WINDOW_TTL_S = 300.0


class Overlaps:
    """Open windows per key; thread-safe (verifiers run in worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._open: dict[int, tuple[frozenset[str], float]] = {}
        self._overlapped: set[int] = set()

    def begin(self, keys: Iterable[str]) -> int:
        """Open a window on ``keys``; returns its token."""
        wanted = frozenset(keys)
        now = time.monotonic()
        with self._lock:
            for token, (_, started) in list(self._open.items()):
                if now - started > WINDOW_TTL_S:
                    del self._open[token]
                    self._overlapped.discard(token)
            token = next(self._ids)
            for other, (other_keys, _) in self._open.items():
                if other_keys & wanted:
                    self._overlapped.update((other, token))
            self._open[token] = (wanted, now)
            return token

    def end(self, token: int) -> bool:
        """Close a window; True when another window on a shared key overlapped it."""
        with self._lock:
            self._open.pop(token, None)
            overlapped = token in self._overlapped
            self._overlapped.discard(token)
            return overlapped


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
