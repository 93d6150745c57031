"""The ``tools/call`` path: seven numbered steps, one method each, run in this order.

1. **pins**: a tool whose definition changed since it was pinned is refused.
2. **policy**: allow, deny, or ask the human (:mod:`affidavit.proxy.gate`).
3. **replay**: a retry of a call already VERIFIED is answered from that result while the
   verifier confirms its state still holds; an identical call waits for the first's verdict.
4. **snapshot**: the verifier records the pre-call state it will judge the reply against.
5. **forward**: the original bytes go to the backend (never re-serialised: a typed SDK
   round-trip drops unknown fields).
6. **verify**: the verifier re-derives the claim from reality; the host gets the reply as
   sent, ``isError: true`` with the evidence (contradicted), or the reply with its receipt
   (``--receipts``).
7. **audit**: one hash-chained entry per call.

:meth:`ToolCallPipeline.run` reads top to bottom in that order. A step that answers the call
itself (a pin refusal, a denial, an approval question, a replay) audits it and ends the run;
a call cut short (the host or the backend went away) is audited too
(:meth:`~affidavit.proxy.session.ProxySession.audited`).

A call with nothing to judge (no verifier for it, no receipt to add, its pin holds, the policy
allows it outright) is decided by :meth:`ToolCallPipeline.quick` in the relay's host thread
and carried by the reader threads alone: it goes out and its reply comes back as on a wire,
and its audit entry is written after the reply is on its way (ADR 0084).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from affidavit.proxy.audit_entries import NO_VERIFIER_WHY, CallSubject, PolicyRecord, Unjudged
from affidavit.proxy.gate import PolicyGate
from affidavit.proxy.policy import ALLOW
from affidavit.proxy.receipts import (
    REPLAYED_META,
    contradicted_result,
    log_receipt,
    tool_error,
    unchecked,
    with_receipt,
)
from affidavit.proxy.relay import HostRequest, Quick
from affidavit.proxy.replay import ReplayCache, Verified, call_key
from affidavit.proxy.session import InFlight, ProxySession, ms_since, result_of
from affidavit.proxy.verifiers.base import CallContext, Receipt, Verdict, Verifier

logger = logging.getLogger(__name__)

PIN_REFUSAL = (
    "affidavit proxy: refused `{}`: its definition changed since it was pinned (or could not "
    "be checked); review it and run `affidavit proxy trust-tools`"
)


@dataclass
class Call:
    """One ``tools/call`` going through the steps: the request, the tool and its arguments,
    its audit record, and what the steps settled (who judges it, its replay key)."""

    request: HostRequest
    name: str
    arguments: dict[str, Any]
    flight: InFlight
    ctx: CallContext | None = None
    verifier: Verifier | None = None
    replay_key: str | None = None

    @property
    def context(self) -> CallContext:
        assert self.ctx is not None, "the verifier is chosen after the policy step"
        return self.ctx


@dataclass(frozen=True)
class Reply:
    """The backend's reply line; ``result`` is parsed only when something will judge it
    (``judged``), and is ``None`` for an error reply."""

    line: bytes
    judged: bool
    result: dict[str, Any] | None = None


class ToolCallPipeline:
    """The steps of a ``tools/call`` (see the module docstring for their order and why)."""

    def __init__(self, session: ProxySession, gate: PolicyGate) -> None:
        self.session = session
        self.gate = gate
        self.options = session.options
        self.cache = ReplayCache()

    async def handle(self, request: HostRequest) -> None:
        """Run one call through the steps; a malformed one is the backend's to refuse."""
        started = time.perf_counter()
        name, arguments = request.params.get("name"), request.params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            request.reply(await request.forward())  # malformed: the backend says why
            return
        flight = InFlight(CallSubject(name, arguments), self.session.backend_name, started)
        call = Call(request, name, arguments, flight)
        await self.session.audited(request, flight, self.run(call))

    async def run(self, call: Call) -> None:
        """The steps, in order."""
        if not await self.pins(call):  # 1
            return
        if not await self.policy(call):  # 2
            return
        await self.choose_verifier(call)
        async with self.replay(call) as replayed:  # 3
            if replayed:
                return
            before = await self.snapshot(call)  # 4
            reply = await self.forward(call)  # 5
            receipt = await self.verify(call, before, reply)  # 6
            self.audit(call.flight, receipt, call.request.id)  # 7

    # ------------------------------------------------------------ 1. pins

    async def pins(self, call: Call) -> bool:
        """1. Whether the tool's pinned definition still holds; if not, the call is refused."""
        if not await self._pins_refuse(call.request, call.name):
            return True
        call.request.answer(tool_error(PIN_REFUSAL.format(call.name)))
        call.flight.policy = PolicyRecord("refused", False, "tool pin changed")
        self.session.audit(call.flight, "refused")
        return False

    async def _pins_refuse(self, request: HostRequest, name: str) -> bool:
        """Whether the pins refuse ``name`` (listing the backend's tools if not seen yet)."""
        pins = self.session.pins
        if pins is None:
            return False
        if name not in self.session.listed:
            tools: list[Any] = []
            params: dict[str, Any] = {}
            if "_meta" in request.params:
                params["_meta"] = request.params["_meta"]
            try:
                while True:
                    page = await self.session.relay.ask(
                        "backend", "tools/list", params or None, 30.0
                    )
                    tools.extend(page.get("tools") or [])
                    cursor = page.get("nextCursor")
                    if not isinstance(cursor, str) or not cursor:
                        break
                    params["cursor"] = cursor
            except Exception as exc:
                logger.warning(
                    "could not list the backend's tools to check pins (%s)", type(exc).__name__
                )
                return True
            self.session.schemas.learn(tools)
            await self.session.check_pins(tools)
        return name in pins.refused

    # ------------------------------------------------------------ 2. policy

    async def policy(self, call: Call) -> bool:
        """2. Whether the policy lets the call go ahead (a denial is a tool error)."""
        return await self.gate.admit(
            call.request,
            call.flight,
            (call.name, call.arguments),
            f"this call to `{call.name}`",
            lambda text: call.request.answer(tool_error(text)),
        )

    async def choose_verifier(self, call: Call) -> None:
        """Between 2 and 3: who judges the call, once the host's roots are known (they change
        what a verifier sees)."""
        await self.session.await_roots()
        call.ctx = self.session.context("tools/call", call.name, call.arguments)
        call.verifier = self.session.verifier(call.ctx)

    # ------------------------------------------------------------ 3. replay

    @contextlib.asynccontextmanager
    async def replay(self, call: Call) -> AsyncIterator[bool]:
        """3. Answer a retry from its verified result if its state still holds (yields
        ``True`` then). Otherwise the call runs while it holds its key, so an identical call
        waits for this one's verdict, which :meth:`verify` keeps for the next retry."""
        params = call.request.params
        replayable = (
            self.options.idempotent_replay
            and call.verifier is not None
            and getattr(call.verifier, "replayable", True)
            and "requestState" not in params
            and "inputResponses" not in params
        )
        if not replayable:
            yield False
            return
        key = call_key(call.name, call.arguments)
        async with self.cache.exclusive(key):
            cached = self.cache.verified(key)
            if cached is not None and await self.session.runner.still_holds(cached):
                self._answer_from_cache(call, cached)
                yield True
                return
            if cached is not None:
                self.cache.forget(key)
            call.replay_key = key
            yield False

    def _answer_from_cache(self, call: Call, cached: Verified) -> None:
        result = dict(cached.result)
        if self.options.receipts:
            result = with_receipt(result, cached.receipt)
        meta = dict(result.get("_meta") or {})
        meta[REPLAYED_META] = True
        result["_meta"] = meta
        call.request.answer(result)
        logger.info(
            "answered a retry of `%s` from its verified result (state still holds)", call.name
        )
        timings = call.flight.timings_ms(steps=False)
        self.session.audit(call.flight, "replayed", receipt=cached.receipt, timings_ms=timings)

    # ------------------------------------------------------------ 4. snapshot

    async def snapshot(self, call: Call) -> tuple[bool, Any]:
        """4. The pre-call state the verifier will judge against: ``(taken, state)``."""
        if call.verifier is None:
            return False, None
        t0 = time.perf_counter()
        taken = await self.session.runner.snapshot(call.verifier, call.context)
        call.flight.timings["snapshot"] = ms_since(t0)
        return taken

    # ------------------------------------------------------------ 5. forward

    async def forward(self, call: Call) -> Reply:
        """5. Send the original bytes; the reply, parsed only if something will judge it."""
        t0 = time.perf_counter()
        line = await call.request.forward()
        call.flight.timings["backend"] = ms_since(t0)
        if call.verifier is None and not self.options.receipts:
            return Reply(line, judged=False)
        result, _ = result_of(line)
        return Reply(line, judged=True, result=result)

    # ------------------------------------------------------------ 6. verify

    async def verify(
        self, call: Call, before: tuple[bool, Any], reply: Reply
    ) -> Receipt | Unjudged:
        """6. Judge the reply and answer the host: the original bytes at once when nothing
        judges it or it is an error; a contradicted claim as ``isError`` with the evidence;
        with ``--receipts``, the result with its receipt."""
        request = call.request
        if not reply.judged or reply.result is None:
            request.reply(reply.line)
            return Unjudged.NO_VERIFIER if not reply.judged else Unjudged.ERROR
        receipt = await self._receipt(call, before, reply.result)
        log_receipt(receipt)
        if call.replay_key is not None and call.verifier is not None:
            verified = Verified(reply.result, receipt, call.verifier, call.context)
            self.cache.store(call.replay_key, verified)
        if receipt.verdict is Verdict.CONTRADICTED:
            request.answer(contradicted_result(reply.result, receipt))
        elif self.options.receipts:
            request.answer(with_receipt(reply.result, receipt))
        else:
            request.reply(reply.line)
        return receipt

    async def _receipt(
        self, call: Call, before: tuple[bool, Any], result: dict[str, Any]
    ) -> Receipt:
        verifier, name = call.verifier, call.name
        if verifier is None:
            return unchecked("none", name, NO_VERIFIER_WHY)
        snapshot_ok, state = before
        if not snapshot_ok:
            return unchecked(verifier.name, name, "the pre-call snapshot failed")
        # an isError reply is judged too: it claims nothing, but the verifier closes its books
        if result.get("resultType") == "input_required":
            return unchecked(verifier.name, name, "the tool asked for more input")
        t0 = time.perf_counter()
        receipt = await self.session.runner.verify(verifier, call.context, state, result)
        call.flight.timings["verify"] = ms_since(t0)
        return receipt

    # ------------------------------------------------------------ 7. audit

    def audit(self, flight: InFlight, receipt: Receipt | Unjudged, request_id: Any) -> None:
        """7. Record the call that got its reply (and its span, with telemetry on)."""
        outcome = "result"
        if receipt is Unjudged.NO_VERIFIER:
            outcome = "forwarded"
        elif receipt is Unjudged.ERROR:
            outcome = "error"
        timings = flight.timings_ms()
        self.session.audit(flight, outcome, receipt=receipt, timings_ms=timings)
        telemetry = self.options.telemetry
        if telemetry is not None:
            verdict = "error" if receipt is Unjudged.ERROR else Verdict.UNCHECKED.value
            if isinstance(receipt, Receipt):
                verdict = receipt.verdict.value
            assert isinstance(flight.subject, CallSubject)
            tool, total_s = flight.subject.tool, timings["total"] / 1000
            telemetry.record_call(tool, str(request_id), total_s, verdict, outcome == "error")

    # ------------------------------------------------------------ the quick lane

    def quick(self, request: HostRequest) -> Quick | None:
        """The call as one the relay's threads can carry alone, or ``None`` for the full way
        (:meth:`handle`). Called in the host's reader thread, so it decides from what is known
        now: a ``tools/call`` that no verifier judges, with no receipt to add, whose tool pin
        holds, that the policy allows outright, while no roots answer is awaited (roots change
        what a verifier or a rule sees). Anything else takes the full way."""
        started = time.perf_counter()
        if request.method != "tools/call" or self.options.receipts:
            return None
        session = self.session
        name, arguments = request.params.get("name"), request.params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return None
        pins = session.pins
        if pins is not None and (name not in session.listed or name in pins.refused):
            return None
        if session.roots_pending():
            return None
        if session.verifier(session.context("tools/call", name, arguments)) is not None:
            return None
        flight = InFlight(CallSubject(name, arguments), session.backend_name, started)
        decision = self.gate.decision(name, arguments, flight.timings)
        if decision.action != ALLOW:
            return None
        flight.policy = PolicyRecord.of(decision, True, decision.reason)
        return _Forwarded(self, flight, request.id)


class _Forwarded:
    """A call the relay's threads carry alone (:meth:`ToolCallPipeline.quick`): when it ends,
    it is audited exactly as the full way would have audited it (step 7)."""

    def __init__(self, pipeline: ToolCallPipeline, flight: InFlight, request_id: Any) -> None:
        self.pipeline = pipeline
        self.flight = flight
        self.request_id = request_id
        self.sent = time.perf_counter()

    def answered(self, line: bytes) -> None:
        self.flight.timings["backend"] = ms_since(self.sent)
        self.pipeline.audit(self.flight, Unjudged.NO_VERIFIER, self.request_id)

    def cut_short(self, exc: BaseException, forwarded: bool) -> None:
        self.pipeline.session.audit_cut_short(self.flight, exc, forwarded)
