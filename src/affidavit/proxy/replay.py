"""Verified replay (``--idempotent-replay``): a retry never runs a side effect twice.

A ``tools/call`` is keyed by tool name plus canonical arguments. It is answered without the
backend only when an identical earlier call was VERIFIED and the verifier confirms, right now,
that the state it vouched for still holds (write x, write y, write x again: the third write
runs, because the file no longer holds x). Identical calls are serialised on a per-key lock,
so one that arrives while the first is still in flight waits for the first's verdict instead
of running alongside it. Everything else is a cache miss and is forwarded: the cache can only
ever answer less, never wrongly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from affidavit.core.canonical import digest_json
from affidavit.proxy.verifiers.base import CallContext, Receipt, Verdict, Verifier


def call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """The identity of a call for replay: tool name and canonical arguments."""
    return digest_json({"tool": tool, "arguments": dict(arguments)})


@dataclass(frozen=True)
class Verified:
    """A verified outcome that a retry may be answered from."""

    result: Mapping[str, Any]
    receipt: Receipt
    verifier: Verifier
    ctx: CallContext


class ReplayCache:
    """Verified results by call key, and one lock per key for calls in flight."""

    def __init__(self) -> None:
        self._verified: dict[str, Verified] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def exclusive(self, key: str) -> AsyncIterator[None]:
        """Hold ``key`` while a call runs; an identical call waits here for it."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def store(self, key: str, outcome: Verified) -> None:
        """Keep ``outcome`` if it is VERIFIED; anything else erases what was kept."""
        if outcome.receipt.verdict is Verdict.VERIFIED:
            self._verified[key] = outcome
        else:
            self._verified.pop(key, None)

    def verified(self, key: str) -> Verified | None:
        """The stored verified outcome for ``key``, if any (still to be re-checked)."""
        return self._verified.get(key)

    def forget(self, key: str) -> None:
        """Drop a stored outcome (its state no longer holds, or the call ran again)."""
        self._verified.pop(key, None)
