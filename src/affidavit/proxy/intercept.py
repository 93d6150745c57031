"""What the proxy does around the requests it acts on.

``tools/call`` goes through :class:`~affidavit.proxy.call_pipeline.ToolCallPipeline` (pins,
policy, replay, snapshot, forward, verify, audit: one numbered method each). ``resources/read``
goes through the same policy and snapshot/verify steps (a denied or contradicted read becomes a
JSON-RPC error) and serves ``affidavit://audit`` itself; ``initialize`` / ``server/discover``
teach the proxy who the host and backend are; ``tools/list`` feeds the pins and the output
schemas (a tool that declares one has every result checked against it, before and beside its
domain verifier). A reply the proxy did not change is forwarded byte for byte. Lines the relay
refused (a repeated key, a reply for no request) and sampling requests over the limit are
audited too. What the request paths share (the audit log, roots, verifiers, pins) is the
:class:`~affidavit.proxy.session.ProxySession`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from affidavit.core import jsonrpc
from affidavit.core.canonical import sha256_hex
from affidavit.core.jsonrpc import Peek
from affidavit.proxy.audit import AUDIT_RESOURCE_URI
from affidavit.proxy.audit_entries import ReadSubject, Redacted, RefusedLine, SamplingRefused
from affidavit.proxy.call_pipeline import ToolCallPipeline
from affidavit.proxy.gate import PolicyGate
from affidavit.proxy.options import ProxyOptions
from affidavit.proxy.receipts import RECEIPT_META, log_receipt, unchecked
from affidavit.proxy.relay import HostRequest, Quick, Relay
from affidavit.proxy.session import ROOTS_TIMEOUT, InFlight, ProxySession, result_of
from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.locate import resource_path

logger = logging.getLogger(__name__)

SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


class ProxyInterceptor:
    """The acting half of one proxy session."""

    def __init__(self, relay: Relay, options: ProxyOptions) -> None:
        self.relay = relay
        self.options = options
        self.session = ProxySession(relay, options)
        self.gate = PolicyGate(self.session)
        self.calls = ToolCallPipeline(self.session, self.gate)
        self.methods = frozenset(
            {
                "initialize",
                "server/discover",
                "tools/call",
                "resources/read",
                "resources/list",
                "resources/templates/list",
                "tools/list",
            }
        )

    # ------------------------------------------------------------ dispatch

    def quick(self, request: HostRequest) -> Quick | None:
        """A call the relay's threads may carry alone (:meth:`ToolCallPipeline.quick`)."""
        return self.calls.quick(request)

    async def handle(self, request: HostRequest) -> None:
        """Act on one host request; always answers it (or it was cancelled by the host)."""
        method = request.method
        if method == "tools/call":
            await self.calls.handle(request)
        elif method == "resources/read":
            await self._resources_read(request)
        elif method == "resources/list":
            await self._resources_list(request)
        elif method == "tools/list":
            await self._tools_list(request)
        elif method == "resources/templates/list":
            await self._templates_list(request)
        else:
            await self._handshake(request)

    def on_host_notification(self, peek: Peek, line: bytes) -> None:
        """Ask a roots-capable host for its roots once it is ready, and when they change."""
        asks = peek.method in ("notifications/initialized", "notifications/roots/list_changed")
        if asks and isinstance(self.session.host_caps.get("roots"), Mapping):
            self.session.roots_task = self.relay.spawn(self._refresh_roots())

    def on_backend_request(self, peek: Peek, line: bytes) -> bytes | None:
        """Answer a backend request here, or return ``None`` to pass it to the host."""
        limit = self.options.sampling_limit
        sampling = peek.method == "sampling/createMessage"
        if sampling and limit is not None and not limit.allow():
            self.session.record(SamplingRefused(limit.limit))
            logger.warning("refused a sampling request: over the limit of %s", limit.describe())
            return jsonrpc.error_response(
                peek.id,
                jsonrpc.INVALID_REQUEST,
                f"affidavit proxy: sampling refused, the policy allows {limit.describe()}",
            )
        roots = self.session.roots
        if (
            peek.method == "roots/list"
            and roots.configured
            and not isinstance(self.session.host_caps.get("roots"), Mapping)
        ):
            listed = [{"uri": p.as_uri(), "name": p.name} for p in roots.configured]
            return jsonrpc.result_response(peek.id, {"roots": listed})
        return None

    def on_refused(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None:
        """Audit a line the relay refused (its content is kept only as a digest)."""
        self.session.record(RefusedLine(side, reason, ids, sha256_hex(line)))

    async def close(self) -> None:
        """Finish audit writes; leave stuck verifier threads behind rather than hang."""
        await self.session.close()

    # ------------------------------------------------------------ handshake

    async def _refresh_roots(self) -> None:
        try:
            result = await self.relay.ask("host", "roots/list", None, ROOTS_TIMEOUT)
        except Exception as exc:
            logger.warning(
                "the host did not list its roots (%s); keeping --root", type(exc).__name__
            )
            return
        self.session.roots.update_from_host(result)

    async def _handshake(self, request: HostRequest) -> None:
        params = request.params
        if request.method == "initialize" and isinstance(params.get("capabilities"), dict):
            self.session.host_caps = params["capabilities"]
        line = await request.forward()
        result, message = result_of(line)
        if result is None:
            request.reply(line)
            return
        if request.method == "initialize":
            info = result.get("serverInfo")
            version = result.get("protocolVersion")
            if isinstance(version, str) and hasattr(self.relay.backend, "note_protocol_version"):
                self.relay.backend.note_protocol_version(version)
        else:
            meta = result.get("_meta")
            info = meta.get(SERVER_INFO_META) if isinstance(meta, dict) else None
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.session.backend_name = info["name"]
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict) and "resources" not in capabilities:
            capabilities["resources"] = {}  # the proxy serves affidavit://audit itself
            request.reply(jsonrpc.encode(message).rstrip(b"\n"))
        else:
            request.reply(line)

    # ------------------------------------------------------------ resources

    def _audit_resource(self) -> dict[str, Any]:
        return {
            "uri": AUDIT_RESOURCE_URI,
            "name": "affidavit-audit",
            "title": "affidavit proxy audit (this session)",
            "description": "Receipts and policy decisions for this session's calls.",
            "mimeType": "application/json",
        }

    async def _resources_list(self, request: HostRequest) -> None:
        line = await request.forward()
        if request.params.get("cursor") is not None:
            request.reply(line)
            return
        result, message = result_of(line)
        if result is not None and isinstance(result.get("resources"), list):
            result["resources"].append(self._audit_resource())
            request.reply(jsonrpc.encode(message).rstrip(b"\n"))
            return
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == jsonrpc.METHOD_NOT_FOUND:
            listing = {"resources": [self._audit_resource()]}
            request.answer(listing)
            return
        request.reply(line)

    async def _templates_list(self, request: HostRequest) -> None:
        """A backend without resources (the proxy added the capability) lists no templates."""
        line = await request.forward()
        _, message = result_of(line)
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == jsonrpc.METHOD_NOT_FOUND:
            request.answer({"resourceTemplates": []})
        else:
            request.reply(line)

    async def _resources_read(self, request: HostRequest) -> None:
        uri = request.params.get("uri")
        if uri == AUDIT_RESOURCE_URI:
            await asyncio.to_thread(self.session.writer.flush)  # every entry recorded so far
            text = json.dumps(self.session.log.session_entries(), ensure_ascii=False, indent=1)
            contents = [{"uri": AUDIT_RESOURCE_URI, "mimeType": "application/json", "text": text}]
            request.answer({"contents": contents})
            return
        if not isinstance(uri, str):
            request.reply(await request.forward())
            return
        flight = InFlight(ReadSubject(Redacted(uri)), self.session.backend_name)
        await self.session.audited(request, flight, self._read(request, uri, flight))

    async def _read(self, request: HostRequest, uri: str, flight: InFlight) -> None:
        """A read's steps: policy, snapshot, forward, verify, audit (as for a call)."""
        session = self.session
        if not await self._read_allowed(request, uri, flight):
            return
        await session.await_roots()
        ctx = session.context("resources/read", uri, {})
        verifier = session.runner.select(ctx)
        ok, before = await session.runner.snapshot(verifier, ctx) if verifier else (False, None)
        line = await request.forward()
        result, _ = result_of(line)
        if result is None:
            request.reply(line)
            session.audit(flight, "error", timings_ms=flight.timings_ms())
            return
        if verifier is None or not ok:
            receipt = unchecked(
                verifier.name if verifier else "none", uri, "no verifier checked it"
            )
        else:
            receipt = await session.runner.verify(verifier, ctx, before, result)
        log_receipt(receipt)
        if receipt.verdict is Verdict.CONTRADICTED:
            request.reply(
                jsonrpc.error_response(
                    request.id,
                    jsonrpc.CONTRADICTED,
                    f"affidavit: the contents of {uri} were contradicted by verification: "
                    + "; ".join(e.observed for e in receipt.evidence),
                    {RECEIPT_META: receipt.as_dict()},
                ).rstrip(b"\n")
            )
        elif self.options.receipts:
            updated = dict(result)
            updated["_meta"] = {**dict(updated.get("_meta") or {}), RECEIPT_META: receipt.as_dict()}
            request.answer(updated)
        else:
            request.reply(line)
        session.audit(flight, "result", receipt=receipt, timings_ms=flight.timings_ms())

    async def _read_allowed(self, request: HostRequest, uri: str, flight: InFlight) -> bool:
        """Policy on a read: decided like a call to the tool ``resources/read`` with the
        arguments ``uri`` and, for a file resource, ``path``; a denial is a JSON-RPC error."""
        if self.options.policy is None:
            return True
        arguments = {"uri": uri}
        path = resource_path(uri)
        if path is not None:
            arguments["path"] = path

        def refuse(text: str) -> None:
            request.reply(
                jsonrpc.error_response(request.id, jsonrpc.POLICY_DENIED, text).rstrip(b"\n")
            )

        assert isinstance(flight.subject, ReadSubject)
        what = f"reading {flight.subject.uri.value}"
        return await self.gate.admit(request, flight, ("resources/read", arguments), what, refuse)

    # ------------------------------------------------------------ tools

    async def _tools_list(self, request: HostRequest) -> None:
        line = await request.forward()
        result, message = result_of(line)
        tools = result.get("tools") if result is not None else None
        if not isinstance(tools, list):
            request.reply(line)
            return
        session = self.session
        session.schemas.learn(tools)
        if session.pins is None:
            request.reply(line)
            return
        await session.check_pins(tools)
        refused = session.pins.refused
        kept = [t for t in tools if not (isinstance(t, dict) and t.get("name") in refused)]
        if len(kept) == len(tools):
            request.reply(line)
            return
        assert result is not None
        result["tools"] = kept
        request.reply(jsonrpc.encode(message).rstrip(b"\n"))
