"""What the proxy does around the calls it acts on.

``tools/call``: pins -> policy (allow / deny / ask the human) -> verified replay -> the
verifier's pre-call snapshot -> forward the original bytes -> verify the reply -> a
contradicted claim is rewritten into ``isError: true`` with the evidence; ``--receipts`` adds
the receipt to the result. Every call gets a hash-chained audit entry and a receipt line on
stderr, also when it is cut short (the host or the backend went away, the reply was refused).
``resources/read`` goes through the same policy and snapshot/verify path (a denied or
contradicted read becomes a JSON-RPC error) and serves ``affidavit://audit`` itself;
``initialize`` / ``server/discover`` teach the proxy who the host and backend are;
``tools/list`` feeds the pins and the output schemas (a tool that declares one has every
result checked against it, before and beside its domain verifier). A reply the proxy did not
change is forwarded byte for byte. Lines the relay refused (a repeated key, a reply for no
request) are audited too.

A call with nothing to judge (no verifier for it, no receipt to add, its pin holds, the policy
allows it outright) is decided by :meth:`ProxyInterceptor.quick` in the relay's host thread
and carried by the reader threads alone: it goes out and its reply comes back as on a wire,
and its audit entry is written after the reply is on its way (ADR 0084).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from affidavit.core import jsonrpc
from affidavit.core.canonical import sha256_hex
from affidavit.core.clock import utc_iso
from affidavit.core.jsonrpc import Peek
from affidavit.proxy.approval import (
    StatelessApprovals,
    elicitation_params,
    judge,
    without_answer,
)
from affidavit.proxy.audit import (
    AUDIT_RESOURCE_URI,
    AuditEntry,
    AuditLog,
    AuditWriter,
    redact,
    redacted_arguments,
    scrub,
)
from affidavit.proxy.changes import verified_change
from affidavit.proxy.options import ProxyOptions
from affidavit.proxy.pinning import PinStore
from affidavit.proxy.policy import ALLOW, APPROVE, DENY, Decision
from affidavit.proxy.receipts import (
    RECEIPT_META,
    REPLAYED_META,
    contradicted_result,
    receipt_line,
    tool_error,
    unchecked,
    with_receipt,
)
from affidavit.proxy.relay import BackendGone, HostRequest, Quick, Relay, log
from affidavit.proxy.replay import ReplayCache, Verified, call_key
from affidavit.proxy.roots import Roots
from affidavit.proxy.verification import VerifierRunner
from affidavit.proxy.verifiers.base import (
    CallContext,
    Receipt,
    Verdict,
    Verifier,
)
from affidavit.proxy.verifiers.locate import backend_repo, filesystem_dirs, resource_path
from affidavit.proxy.verifiers.schema import OutputSchemas, SchemaChecked

SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
CLIENT_CAPS_META = "io.modelcontextprotocol/clientCapabilities"
_RAW_ARGUMENTS = "\0arguments"
_RECEIPT = "\0receipt"  # turned into the receipt's redacted fields by the audit thread
_NO_VERIFIER: Any = object()  # the receipt of a call no verifier judged, made by that thread
_NO_VERIFIER_WHY = "no verifier for this tool"
ROOTS_TIMEOUT = 10.0
_NO_POLICY = Decision(ALLOW, -1, "no policy")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


@dataclass(frozen=True)
class Gate:
    """What a policy decision records into and how a denial is answered (a tool error for a
    call, a JSON-RPC error for a read)."""

    entry: dict[str, Any]
    timings: dict[str, float]
    started: float
    refuse: Callable[[str], None]


def _cut_short(exc: BaseException, forwarded: bool) -> str:
    """The audit outcome of a call that ended without the usual answer."""
    if isinstance(exc, asyncio.CancelledError):
        return "abandoned" if forwarded else "cancelled"
    if isinstance(exc, BackendGone):
        return "backend-gone"
    if isinstance(exc, jsonrpc.AmbiguousMessage):
        return "refused-reply"
    return "internal-error"


def _result_of(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(result, whole message)`` of a reply line; ``result`` is ``None`` for errors.

    Raises :class:`~affidavit.core.jsonrpc.AmbiguousMessage` for a reply that repeats a key."""
    message = jsonrpc.parse(line)
    if not isinstance(message, dict):
        return None, {}
    result = message.get("result")
    return (result if isinstance(result, dict) else None), message


class ProxyInterceptor:
    """The acting half of one proxy session."""

    def __init__(self, relay: Relay, options: ProxyOptions) -> None:
        self.relay = relay
        self.options = options
        self.roots = Roots(configured=options.roots)
        self.audit = AuditLog(options.audit_log, session=secrets.token_hex(8))
        self.cache = ReplayCache()
        self.approvals = StatelessApprovals()
        self.pins = (
            PinStore(options.pins_path, relay.backend.identity) if options.pin_tools else None
        )
        self._listed: set[str] = set()
        self.schemas = OutputSchemas()
        self.host_caps: dict[str, Any] = {}
        self.backend_name = ""
        self._roots_task: asyncio.Task[None] | None = None
        self.runner = VerifierRunner(options.verifiers, options.verify_timeout)
        self._backend_command = tuple(getattr(relay.backend, "argv", ()))
        self._backend_dirs = self._started_in()
        self._audit_writer = AuditWriter(
            self.audit,
            self._complete,
            self._audit_failed,
            self._written if options.remember is not None else None,
        )
        methods = {
            "initialize",
            "server/discover",
            "tools/call",
            "resources/read",
            "resources/list",
            "resources/templates/list",
            "tools/list",
        }
        self.methods = frozenset(methods)

    # ------------------------------------------------------------ plumbing

    def _record(self, body: Mapping[str, Any]) -> None:
        """Record an audit entry (any thread, in order): stamped now, completed (redaction,
        receipt fields) and written by the audit thread, off the path of any reply."""
        self._audit_writer.put((time.time(), body))

    def _complete(self, item: tuple[float, Mapping[str, Any]]) -> AuditEntry:
        """An entry as it is kept and written (the audit thread)."""
        stamp, body = item
        body = dict(body)
        if _RAW_ARGUMENTS in body:
            body["arguments"], body["arguments_sha256"] = redacted_arguments(
                body.pop(_RAW_ARGUMENTS)
            )
        ts = utc_iso(datetime.fromtimestamp(stamp, UTC))
        if _RECEIPT in body:
            receipt = body.pop(_RECEIPT)
            if receipt is _NO_VERIFIER:  # what _receipt_fields makes of it, without rescanning
                body.update(_no_verifier_fields(body["tool"], ts))  # the proxy's own words
            else:
                body.update(self._receipt_fields(receipt))
        return self.audit.remember({"ts": ts, **body})

    def _written(self, item: tuple[float, Mapping[str, Any]], entry: Any, link: str) -> None:
        """An entry is on disk (the audit thread): hand a verified change on to --remember."""
        remember = self.options.remember
        change = verified_change(item[1].get(_RECEIPT), entry, str(self.audit.path), link)
        if remember is not None and change is not None:
            remember(change)

    @staticmethod
    def _audit_failed(exc: Exception) -> None:
        log(f"could not write the audit log ({exc})")

    def _context(self, method: str, name: str, arguments: Mapping[str, Any]) -> CallContext:
        return CallContext(
            method=method,
            name=name,
            arguments=arguments,
            backend=self.backend_name,
            backend_command=self._backend_command,
            roots=self.roots.all,
            settings=self.options.settings,
        )

    def _started_in(self) -> tuple[Path, ...]:
        """Where the backend takes relative paths from: the repository or directories it was
        started on and, for a subprocess, the working directory it inherited from us."""
        ctx = self._context("", "", {})
        dirs = [p for p in (backend_repo(ctx),) if p is not None] + filesystem_dirs(ctx)
        if ctx.backend_command:
            with contextlib.suppress(OSError):
                dirs.append(Path.cwd())
        return tuple(dirs)

    async def _await_roots(self) -> None:
        task = self._roots_task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=ROOTS_TIMEOUT)

    def _host_can(self, capability: str, params: Mapping[str, Any]) -> bool:
        meta = params.get("_meta")
        if isinstance(meta, Mapping) and isinstance(meta.get(CLIENT_CAPS_META), Mapping):
            return False  # a stateless (2026-07-28) request: the proxy cannot ask mid-call
        return isinstance(self.host_caps.get(capability), Mapping)

    # ------------------------------------------------------------ dispatch

    def quick(self, request: HostRequest) -> Quick | None:
        """The call as one the relay's threads can carry alone, or ``None`` for the full way
        (:meth:`handle`). Called in the host's reader thread, so it decides from what is known
        now: a ``tools/call`` that no verifier judges, with no receipt to add, whose tool pin
        holds, that the policy allows outright, while no roots answer is awaited (roots change
        what a verifier or a rule sees). Anything else takes the full way."""
        started = time.perf_counter()
        if request.method != "tools/call" or self.options.receipts:
            return None
        params = request.params
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return None
        if self.pins is not None and (name not in self._listed or name in self.pins.refused):
            return None
        roots = self._roots_task
        if roots is not None and not roots.done():
            return None
        if self._verifier(self._context("tools/call", name, arguments)) is not None:
            return None
        timings: dict[str, float] = {}
        decision = self._policy(name, arguments, timings)
        if decision.action != ALLOW:
            return None
        entry = self._call_entry(name, arguments)
        entry["policy"] = {**decision.as_dict(), "allowed": True}
        return _Forwarded(self, entry, timings, started, request.id)

    async def handle(self, request: HostRequest) -> None:
        """Act on one host request; always answers it (or it was cancelled by the host)."""
        method = request.method
        if method == "tools/call":
            await self._tools_call(request)
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
        if asks and isinstance(self.host_caps.get("roots"), Mapping):
            self._roots_task = self.relay.spawn(self._refresh_roots())

    def on_backend_request(self, peek: Peek, line: bytes) -> bytes | None:
        """Answer a backend request here, or return ``None`` to pass it to the host."""
        limit = self.options.sampling_limit
        sampling = peek.method == "sampling/createMessage"
        if sampling and limit is not None and not limit.allow():
            self._record({"kind": "sampling", "policy": {"action": DENY, "limit": limit.limit}})
            log(f"refused a sampling request: over the limit of {limit.describe()}")
            return jsonrpc.error_response(
                peek.id,
                jsonrpc.INVALID_REQUEST,
                f"affidavit proxy: sampling refused, the policy allows {limit.describe()}",
            )
        if (
            peek.method == "roots/list"
            and self.roots.configured
            and not isinstance(self.host_caps.get("roots"), Mapping)
        ):
            roots = [{"uri": p.as_uri(), "name": p.name} for p in self.roots.configured]
            return jsonrpc.result_response(peek.id, {"roots": roots})
        return None

    def on_refused(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None:
        """Audit a line the relay refused (its content is kept only as a digest)."""
        self._record(
            {
                "kind": "refused",
                "from": side,
                "reason": reason,
                "id": ids[0] if len(ids) == 1 else list(ids),
                "line_sha256": sha256_hex(line),
            }
        )

    async def close(self) -> None:
        """Finish audit writes; leave stuck verifier threads behind rather than hang."""
        await asyncio.to_thread(self._audit_writer.close)
        self.runner.close()
        if self.options.telemetry is not None:
            self.options.telemetry.shutdown()

    # ------------------------------------------------------------ handshake

    async def _refresh_roots(self) -> None:
        try:
            result = await self.relay.ask("host", "roots/list", None, ROOTS_TIMEOUT)
        except Exception as exc:
            log(f"the host did not list its roots ({type(exc).__name__}); keeping --root")
            return
        self.roots.update_from_host(result)

    async def _handshake(self, request: HostRequest) -> None:
        params = request.params
        if request.method == "initialize" and isinstance(params.get("capabilities"), dict):
            self.host_caps = params["capabilities"]
        line = await request.forward()
        result, message = _result_of(line)
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
            self.backend_name = info["name"]
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
        result, message = _result_of(line)
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
        _, message = _result_of(line)
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == jsonrpc.METHOD_NOT_FOUND:
            request.answer({"resourceTemplates": []})
        else:
            request.reply(line)

    async def _resources_read(self, request: HostRequest) -> None:
        uri = request.params.get("uri")
        if uri == AUDIT_RESOURCE_URI:
            await asyncio.to_thread(self._audit_writer.flush)  # every entry recorded so far
            text = json.dumps(self.audit.session_entries(), ensure_ascii=False, indent=1)
            contents = [{"uri": AUDIT_RESOURCE_URI, "mimeType": "application/json", "text": text}]
            request.answer({"contents": contents})
            return
        if not isinstance(uri, str):
            request.reply(await request.forward())
            return
        started = time.perf_counter()
        entry: dict[str, Any] = {
            "kind": "read",
            "method": "resources/read",
            "uri": redact(uri),
            "backend": self.backend_name,
        }
        await self._audited(request, entry, started, self._read(request, uri, entry, started))

    async def _read(
        self, request: HostRequest, uri: str, entry: dict[str, Any], started: float
    ) -> None:
        timings: dict[str, float] = {}

        def refuse(text: str) -> None:
            request.reply(
                jsonrpc.error_response(request.id, jsonrpc.POLICY_DENIED, text).rstrip(b"\n")
            )

        if not await self._read_allowed(request, uri, Gate(entry, timings, started, refuse)):
            return
        await self._await_roots()
        ctx = self._context("resources/read", uri, {})
        verifier = self.runner.select(ctx)
        ok, before = await self.runner.snapshot(verifier, ctx) if verifier else (False, None)
        line = await request.forward()
        result, _ = _result_of(line)
        if result is None:
            request.reply(line)
            self._close(entry, "error", timings_ms={**timings, "total": _ms(started)})
            return
        if verifier is None or not ok:
            receipt = unchecked(
                verifier.name if verifier else "none", uri, "no verifier checked it"
            )
        else:
            receipt = await self.runner.verify(verifier, ctx, before, result)
        self._log_receipt(receipt)
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
        self._close(
            entry,
            "result",
            receipt=receipt,
            timings_ms={**timings, "total": _ms(started)},
        )

    async def _read_allowed(self, request: HostRequest, uri: str, gate: Gate) -> bool:
        """Policy on a read: decided like a call to the tool ``resources/read`` with the
        arguments ``uri`` and, for a file resource, ``path``; a denial is a JSON-RPC error."""
        if self.options.policy is None:
            return True
        arguments = {"uri": uri}
        path = resource_path(uri)
        if path is not None:
            arguments["path"] = path
        what = f"reading {gate.entry['uri']}"
        return await self._gate(request, "resources/read", arguments, what, gate)

    async def _gate(
        self, request: HostRequest, name: str, arguments: Mapping[str, Any], what: str, gate: Gate
    ) -> bool:
        """Whether the policy lets a request go ahead. If not, it has been answered (a denial
        through ``gate.refuse(text)``, an approval question by :meth:`_approve`) and recorded."""
        entry = gate.entry
        decision, allowed, why = await self._decide(request, name, arguments, gate.timings)
        entry["policy"] = {**decision.as_dict(), "allowed": allowed, "reason": why}
        if allowed is None:  # answered with input_required: the host asks, then retries
            self._close(entry, "approval-asked")
        elif not allowed:
            text = f"affidavit proxy: policy denied {what}: {why}"
            gate.refuse(text)
            log(text)
            self._close(entry, "denied", timings_ms={**gate.timings, "total": _ms(gate.started)})
        return allowed is True

    # ------------------------------------------------------------ tools

    async def _tools_list(self, request: HostRequest) -> None:
        line = await request.forward()
        result, message = _result_of(line)
        tools = result.get("tools") if result is not None else None
        if not isinstance(tools, list):
            request.reply(line)
            return
        self.schemas.learn(tools)
        if self.pins is None:
            request.reply(line)
            return
        await self._check_pins(tools)
        kept = [
            t for t in tools if not (isinstance(t, dict) and t.get("name") in self.pins.refused)
        ]
        if len(kept) == len(tools):
            request.reply(line)
            return
        assert result is not None
        result["tools"] = kept
        request.reply(jsonrpc.encode(message).rstrip(b"\n"))

    async def _check_pins(self, tools: list[Any]) -> None:
        assert self.pins is not None
        definitions = [t for t in tools if isinstance(t, dict)]
        changes = await asyncio.wait_for(asyncio.to_thread(self.pins.check, definitions), 30.0)
        self._listed.update(str(t.get("name")) for t in definitions)
        for change in changes:
            log(
                f"tool {change.tool!r} changed its definition since it was pinned; it is refused "
                "until you run `affidavit proxy trust-tools`"
            )
            self._record(
                {
                    "kind": "pin-changed",
                    "tool": change.tool,
                    "pinned": change.pinned,
                    "seen": change.seen,
                }
            )

    async def _pins_refuse(self, request: HostRequest, name: str) -> bool:
        """Whether the pins refuse ``name`` (listing the backend's tools if not seen yet)."""
        if self.pins is None:
            return False
        if name not in self._listed:
            tools: list[Any] = []
            params: dict[str, Any] = {}
            if "_meta" in request.params:
                params["_meta"] = request.params["_meta"]
            try:
                while True:
                    page = await self.relay.ask("backend", "tools/list", params or None, 30.0)
                    tools.extend(page.get("tools") or [])
                    cursor = page.get("nextCursor")
                    if not isinstance(cursor, str) or not cursor:
                        break
                    params["cursor"] = cursor
            except Exception as exc:
                log(f"could not list the backend's tools to check pins ({type(exc).__name__})")
                return True
            self.schemas.learn(tools)
            await self._check_pins(tools)
        return name in self.pins.refused

    async def _approve(
        self, request: HostRequest, name: str, arguments: Mapping[str, Any], reason: str
    ) -> tuple[bool | None, str]:
        """``(True|False, why)``, or ``(None, why)`` when the host was asked to retry."""
        params = elicitation_params(name, self.backend_name, arguments, reason)
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
        elif self._host_can("elicitation", request.params):
            try:
                answer = await self.relay.ask(
                    "host", "elicitation/create", params, self.options.approval_timeout
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

    async def _tools_call(self, request: HostRequest) -> None:
        started = time.perf_counter()
        params = request.params
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            request.reply(await request.forward())  # malformed: the backend says why
            return
        entry = self._call_entry(name, arguments)
        await self._audited(request, entry, started, self._call(request, entry, started))

    def _call_entry(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The audit entry of a call, to be completed by its steps."""
        return {
            "kind": "call",
            "method": "tools/call",
            "tool": name,
            "backend": self.backend_name,
            _RAW_ARGUMENTS: arguments,  # redacted by _record, after the reply is on its way
        }

    async def _audited(
        self, request: HostRequest, entry: dict[str, Any], started: float, steps: Awaitable[None]
    ) -> None:
        """Run a call's ``steps``; if they end without recording ``entry`` (the host or the
        backend went away, the reply was refused, a bug), record it anyway, then go on."""
        try:
            await steps
        except BaseException as exc:
            if "outcome" not in entry:
                self._close(
                    entry,
                    _cut_short(exc, request.forwarded),
                    forwarded=request.forwarded,
                    timings_ms={"total": _ms(started)},
                )
            raise

    def _close(self, entry: dict[str, Any], outcome: str, **fields: Any) -> None:
        """Record a call's (or read's) one audit entry, with how it ended; a ``receipt`` field
        is recorded as its (redacted) verdict, verifier, claim and evidence."""
        entry["outcome"] = outcome
        if "receipt" in fields:
            fields[_RECEIPT] = fields.pop("receipt")
        self._record({**entry, **fields})

    async def _call(self, request: HostRequest, entry: dict[str, Any], started: float) -> None:
        """The steps of one call (the tool and arguments are the ones in ``entry``)."""
        name, arguments = entry["tool"], entry[_RAW_ARGUMENTS]
        timings: dict[str, float] = {}
        if await self._pins_refuse(request, name):
            text = (
                f"affidavit proxy: refused `{name}`: its definition changed since it was pinned "
                "(or could not be checked); review it and run `affidavit proxy trust-tools`"
            )
            request.answer(tool_error(text))
            entry["policy"] = {"action": "refused", "allowed": False, "reason": "tool pin changed"}
            self._close(entry, "refused")
            return
        gate = Gate(entry, timings, started, lambda text: request.answer(tool_error(text)))
        if not await self._gate(request, name, arguments, f"this call to `{name}`", gate):
            return
        params = request.params
        await self._await_roots()
        ctx = self._context("tools/call", name, arguments)
        verifier = self._verifier(ctx)
        replayable = (
            self.options.idempotent_replay
            and verifier is not None
            and getattr(verifier, "replayable", True)
            and "requestState" not in params
            and "inputResponses" not in params
        )
        if not replayable:
            await self._run_call(request, ctx, verifier, entry, timings, started, None)
            return
        key = call_key(name, arguments)
        async with self.cache.exclusive(key):
            cached = self.cache.verified(key)
            if cached is not None:
                if await self.runner.still_holds(cached):
                    self._answer_from_cache(request, cached, entry, started)
                    return
                self.cache.forget(key)
            await self._run_call(request, ctx, verifier, entry, timings, started, key)

    def _verifier(self, ctx: CallContext) -> Verifier | None:
        """What judges a call: the first verifier that applies, with the output-schema check
        in front when the tool declared a schema (only then: others pay one dict lookup)."""
        verifier = self.runner.select(ctx)
        schema = self.schemas.get(ctx.name)
        return verifier if schema is None else SchemaChecked(schema, verifier)

    async def _decide(
        self,
        request: HostRequest,
        name: str,
        arguments: Mapping[str, Any],
        timings: dict[str, float],
    ) -> tuple[Decision, bool | None, str]:
        """The policy's decision, whether the call may go ahead, and why."""
        decision = self._policy(name, arguments, timings)
        if decision.action == APPROVE:
            t0 = time.perf_counter()
            approved, why = await self._approve(request, name, arguments, decision.reason)
            timings["approval"] = _ms(t0)
            return decision, approved, why
        if decision.action == DENY:
            which = f"rule {decision.rule + 1}" if decision.rule >= 0 else "the default"
            return decision, False, decision.reason or f"{which} of the policy denies it"
        return decision, True, decision.reason

    def _policy(
        self, name: str, arguments: Mapping[str, Any], timings: dict[str, float]
    ) -> Decision:
        """What the policy says about a call (allow, with no policy at all)."""
        policy = self.options.policy
        if policy is None:
            return _NO_POLICY
        t0 = time.perf_counter()
        bases = tuple(dict.fromkeys((*self.roots.all, *self._backend_dirs)))
        decision = policy.decide(name, arguments, bases)
        timings["policy"] = _ms(t0)
        return decision

    def _answer_from_cache(
        self, request: HostRequest, cached: Verified, entry: dict[str, Any], started: float
    ) -> None:
        result = dict(cached.result)
        if self.options.receipts:
            result = with_receipt(result, cached.receipt)
        meta = dict(result.get("_meta") or {})
        meta[REPLAYED_META] = True
        result["_meta"] = meta
        request.answer(result)
        log(f"answered a retry of `{entry['tool']}` from its verified result (state still holds)")
        self._close(
            entry,
            "replayed",
            receipt=cached.receipt,
            timings_ms={"total": _ms(started)},
        )

    async def _run_call(
        self,
        request: HostRequest,
        ctx: CallContext,
        verifier: Verifier | None,
        entry: dict[str, Any],
        timings: dict[str, float],
        started: float,
        replay_key: str | None,
    ) -> None:
        snapshot_ok, before = False, None
        if verifier is not None:
            t0 = time.perf_counter()
            snapshot_ok, before = await self.runner.snapshot(verifier, ctx)
            timings["snapshot"] = _ms(t0)
        t0 = time.perf_counter()
        line = await request.forward()
        timings["backend"] = _ms(t0)
        result, _ = (
            _result_of(line) if (verifier is not None or self.options.receipts) else (None, {})
        )
        if result is None and verifier is None and not self.options.receipts:
            request.reply(line)  # nothing to judge: the original bytes, at once
            receipt = _NO_VERIFIER
            self._finish(entry, receipt, timings, started, "forwarded", request.id)
            return
        if result is None:
            request.reply(line)
            self._finish(entry, None, timings, started, "error", request.id)
            return
        receipt = await self._judge(verifier, snapshot_ok, ctx, before, result, timings)
        self._log_receipt(receipt)
        if replay_key is not None and verifier is not None:
            self.cache.store(replay_key, Verified(result, receipt, verifier, ctx))
        if receipt.verdict is Verdict.CONTRADICTED:
            rewritten = contradicted_result(result, receipt)
            request.answer(rewritten)
        elif self.options.receipts:
            updated = with_receipt(result, receipt)
            request.answer(updated)
        else:
            request.reply(line)
        self._finish(entry, receipt, timings, started, "result", request.id)

    async def _judge(
        self,
        verifier: Verifier | None,
        snapshot_ok: bool,
        ctx: CallContext,
        before: Any,
        result: Mapping[str, Any],
        timings: dict[str, float],
    ) -> Receipt:
        if verifier is None:
            return unchecked("none", ctx.name, _NO_VERIFIER_WHY)
        if not snapshot_ok:
            return unchecked(verifier.name, ctx.name, "the pre-call snapshot failed")
        # an isError reply is judged too: it claims nothing, but the verifier closes its books
        if result.get("resultType") == "input_required":
            return unchecked(verifier.name, ctx.name, "the tool asked for more input")
        t0 = time.perf_counter()
        receipt = await self.runner.verify(verifier, ctx, before, result)
        timings["verify"] = _ms(t0)
        return receipt

    def _receipt_fields(self, receipt: Receipt | None) -> dict[str, Any]:
        if receipt is None:
            return {"verdict": None}
        return {
            "verdict": receipt.verdict.value,
            "verifier": receipt.verifier,
            "claim": redact(receipt.claim),
            "evidence": redact([e.as_dict() for e in receipt.evidence]),
        }

    def _log_receipt(self, receipt: Receipt) -> None:
        if receipt.verifier != "none":
            log(scrub(receipt_line(receipt)))

    def _finish(
        self,
        entry: dict[str, Any],
        receipt: Receipt | None,
        timings: dict[str, float],
        started: float,
        outcome: str,
        request_id: Any,
    ) -> None:
        """Record a call that got its reply (``receipt`` may be ``_NO_VERIFIER``)."""
        total = _ms(started)
        self._close(entry, outcome, receipt=receipt, timings_ms={**timings, "total": total})
        telemetry = self.options.telemetry
        if telemetry is not None:
            verdict = "error" if receipt is None else Verdict.UNCHECKED.value
            if isinstance(receipt, Receipt):
                verdict = receipt.verdict.value
            telemetry.record_call(
                entry["tool"], str(request_id), total / 1000, verdict, outcome == "error"
            )


def _no_verifier_fields(tool: str, when: str) -> dict[str, Any]:
    """The audit fields of ``unchecked("none", tool, _NO_VERIFIER_WHY)`` observed at ``when``:
    only the tool name comes from outside, so only it is redacted."""
    evidence = {"observed": _NO_VERIFIER_WHY, "where": "affidavit proxy", "when": when}
    return {
        "verdict": Verdict.UNCHECKED.value,
        "verifier": "none",
        "claim": redact(tool),
        "evidence": [{**evidence, "details": {}}],
    }


class _Forwarded:
    """A call the relay's threads carry alone (:meth:`ProxyInterceptor.quick`): when it ends,
    its audit entry is completed exactly as the full way would have completed it."""

    def __init__(
        self,
        proxy: ProxyInterceptor,
        entry: dict[str, Any],
        timings: dict[str, float],
        started: float,
        request_id: Any,
    ) -> None:
        self.proxy = proxy
        self.entry = entry
        self.timings = timings
        self.started = started
        self.request_id = request_id
        self.sent = time.perf_counter()

    def answered(self, line: bytes) -> None:
        self.timings["backend"] = _ms(self.sent)
        self.proxy._finish(
            self.entry, _NO_VERIFIER, self.timings, self.started, "forwarded", self.request_id
        )

    def cut_short(self, exc: BaseException, forwarded: bool) -> None:
        self.proxy._close(
            self.entry,
            _cut_short(exc, forwarded),
            forwarded=forwarded,
            timings_ms={"total": _ms(self.started)},
        )
