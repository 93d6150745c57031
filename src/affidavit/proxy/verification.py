"""Running verifiers off the event loop, with a timeout, without ever failing a call.

The relay keeps reading both sides while a verifier hashes files or runs git: each step
(``snapshot``, ``verify``, ``still_holds``) runs in a small thread pool under
``--verify-timeout``. Whatever goes wrong inside a plugin (an exception, a hang, a wrong return
type) becomes an ``unchecked`` receipt or a "does not hold" answer; the original reply is never
held hostage. A timed-out thread is abandoned, not waited for, at shutdown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from affidavit.proxy.receipts import unchecked
from affidavit.proxy.replay import Verified
from affidavit.proxy.verifiers.base import CallContext, Receipt, Verifier

logger = logging.getLogger(__name__)
T = TypeVar("T")


class VerifierRunner:
    """The loaded verifiers and the threads they run in."""

    def __init__(self, verifiers: Sequence[Verifier], timeout: float, workers: int = 8) -> None:
        self.verifiers = tuple(verifiers)
        self.timeout = timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, "affidavit-verify")
        self._for_tool: dict[str, tuple[Verifier, ...]] = {}

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.run_in_executor(self._pool, fn, *args), self.timeout)

    def _candidates(self, ctx: CallContext) -> tuple[Verifier, ...]:
        """The verifiers that may judge this call, in order: for a ``tools/call``, those that
        name the tool in their optional ``tool_names`` or do not declare it (a verifier that
        declares it never judges another tool, so its ``applies`` need not run)."""
        if ctx.method != "tools/call":
            return self.verifiers
        found = self._for_tool.get(ctx.name)
        if found is None:
            found = tuple(
                v
                for v in self.verifiers
                if getattr(v, "tool_names", None) is None or ctx.name in v.tool_names  # type: ignore[attr-defined]
            )
            self._for_tool[ctx.name] = found
        return found

    def select(self, ctx: CallContext) -> Verifier | None:
        """The first verifier that judges this call (a crash in ``applies`` skips it)."""
        for verifier in self._candidates(ctx):
            try:
                if verifier.applies(ctx):
                    return verifier
            except Exception as exc:
                name = getattr(verifier, "name", verifier)
                logger.warning("verifier %r failed in applies(): %s", name, exc)
        return None

    async def snapshot(self, verifier: Verifier, ctx: CallContext) -> tuple[bool, Any]:
        """``(True, state)``, or ``(False, None)`` when the snapshot could not be taken."""
        try:
            return True, await self._in_thread(verifier.snapshot, ctx)
        except Exception as exc:
            logger.warning("verifier %r could not take its snapshot (%r)", verifier.name, exc)
            return False, None

    async def verify(
        self, verifier: Verifier, ctx: CallContext, before: Any, result: Mapping[str, Any]
    ) -> Receipt:
        """The verifier's receipt, or an ``unchecked`` one saying why there is none."""
        try:
            receipt = await self._in_thread(verifier.verify, ctx, before, result)
        except TimeoutError:
            return unchecked(verifier.name, ctx.name, "verification timed out")
        except Exception as exc:
            return unchecked(verifier.name, ctx.name, f"verifier failed ({type(exc).__name__})")
        if not isinstance(receipt, Receipt):
            return unchecked(verifier.name, ctx.name, "verifier returned no receipt")
        return receipt

    async def still_holds(self, outcome: Verified) -> bool:
        """Whether a stored verified outcome still holds; any doubt answers no."""
        try:
            held = await self._in_thread(outcome.verifier.still_holds, outcome.ctx, outcome.receipt)
        except Exception:
            return False
        return held is True

    def close(self) -> None:
        """Drop queued work; leave a stuck verifier thread behind rather than hang."""
        self._pool.shutdown(wait=False, cancel_futures=True)
