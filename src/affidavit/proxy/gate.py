"""The policy step: whether a call or read may go ahead (allow, deny, or ask the human).

A ``require-approval`` rule asks the host: through ``elicitation/create`` mid-call when the
host declared that capability, or, for a stateless (2026-07-28) request, by answering
``input_required`` and redeeming the answer when the host retries (:mod:`approval`). A host
that can do neither gets a denial that says how to allow the tool instead. Reads are judged
like a call to the tool ``resources/read``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from affidavit.core import jsonrpc
from affidavit.proxy.approval import StatelessApprovals, elicitation_params, judge, without_answer
from affidavit.proxy.audit_entries import PolicyRecord
from affidavit.proxy.policy import ALLOW, APPROVE, DENY, Decision
from affidavit.proxy.relay import HostRequest
from affidavit.proxy.replay import call_key
from affidavit.proxy.session import CLIENT_CAPS_META, InFlight, ProxySession, ms_since

logger = logging.getLogger(__name__)

NO_POLICY = Decision(ALLOW, -1, "no policy")


class PolicyGate:
    """Decides calls and reads by the policy file, asking the human when a rule says so."""

    def __init__(self, session: ProxySession) -> None:
        self.session = session
        self.approvals = StatelessApprovals()

    def decision(
        self, name: str, arguments: Mapping[str, Any], timings: dict[str, float]
    ) -> Decision:
        """What the policy says about a call (allow, with no policy at all)."""
        policy = self.session.options.policy
        if policy is None:
            return NO_POLICY
        t0 = time.perf_counter()
        bases = tuple(dict.fromkeys((*self.session.roots.all, *self.session.backend_dirs)))
        decision = policy.decide(name, arguments, bases)
        timings["policy"] = ms_since(t0)
        return decision

    async def admit(
        self,
        request: HostRequest,
        flight: InFlight,
        call: tuple[str, Mapping[str, Any]],
        what: str,
        refuse: Callable[[str], None],
    ) -> bool:
        """Whether the policy lets ``call`` (tool name, arguments) go ahead. If not, the host
        has been answered (a denial through ``refuse(text)``, an approval question) and the
        request audited; ``what`` names it in the denial ("this call to `x`")."""
        name, arguments = call
        decision, allowed, why = await self._decide(request, name, arguments, flight.timings)
        flight.policy = PolicyRecord.of(decision, allowed, why)
        if allowed is None:  # answered with input_required: the host asks, then retries
            self.session.audit(flight, "approval-asked")
        elif not allowed:
            denial = f"policy denied {what}: {why}"
            refuse(f"affidavit proxy: {denial}")
            logger.warning("%s", denial)
            self.session.audit(flight, "denied", timings_ms=flight.timings_ms())
        return allowed is True

    async def _decide(
        self,
        request: HostRequest,
        name: str,
        arguments: Mapping[str, Any],
        timings: dict[str, float],
    ) -> tuple[Decision, bool | None, str]:
        """The policy's decision, whether the call may go ahead, and why."""
        decision = self.decision(name, arguments, timings)
        if decision.action == APPROVE:
            t0 = time.perf_counter()
            approved, why = await self._approve(request, name, arguments, decision.reason)
            timings["approval"] = ms_since(t0)
            return decision, approved, why
        if decision.action == DENY:
            which = f"rule {decision.rule + 1}" if decision.rule >= 0 else "the default"
            return decision, False, decision.reason or f"{which} of the policy denies it"
        return decision, True, decision.reason

    async def _approve(
        self, request: HostRequest, name: str, arguments: Mapping[str, Any], reason: str
    ) -> tuple[bool | None, str]:
        """``(True|False, why)``, or ``(None, why)`` when the host was asked to retry."""
        session = self.session
        params = elicitation_params(name, session.backend_name, arguments, reason)
        if request.stateless:
            key = call_key(name, arguments)
            if self.approvals.is_answer(request.params):
                approved, why = self.approvals.redeem(key, request.params)
                if approved:  # the backend never sees the proxy's own question and answer
                    message = without_answer(request.message)
                    request.message = message
                    request.line = jsonrpc.encode(message).rstrip(b"\n")
                return approved, why
            caps = request.params.get("_meta", {}).get(CLIENT_CAPS_META)
            if isinstance(caps, Mapping) and isinstance(caps.get("elicitation"), Mapping):
                request.answer(self.approvals.ask(key, params))
                return None, "asked the user through input_required"
        elif session.host_can("elicitation", request.params):
            try:
                answer = await session.relay.ask(
                    "host", "elicitation/create", params, session.options.approval_timeout
                )
            except TimeoutError:
                return False, "nobody approved it in time"
            except Exception as exc:
                return False, f"the approval request failed ({exc})"
            return judge(answer)
        return False, (
            "it needs approval, but the host cannot ask (it did not declare the elicitation "
            "capability); allow the tool in the policy file or use a host that supports "
            "elicitation"
        )
