"""What one proxy run knows and shares between the paths that act on requests.

The handshake teaches it who the host and backend are; ``tools/list`` feeds the pins and the
output schemas; the call pipeline and the read path take verifiers, roots and the audit log
from it. Each request being acted on is an :class:`InFlight`, and every one ends in exactly
one audit entry (:meth:`ProxySession.audit`), handed to the audit thread, which stamps and
redacts it off the path of any reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from affidavit.core import jsonrpc
from affidavit.core.clock import utc_iso
from affidavit.proxy.audit import AuditEntry, AuditLog, AuditWriter
from affidavit.proxy.audit_entries import (
    CallSubject,
    Ending,
    Entry,
    Pending,
    PinChanged,
    PolicyRecord,
    ReadSubject,
    Unjudged,
)
from affidavit.proxy.changes import verified_change
from affidavit.proxy.options import ProxyOptions
from affidavit.proxy.pinning import PinStore
from affidavit.proxy.relay import BackendGone, HostRequest, Relay
from affidavit.proxy.roots import Roots
from affidavit.proxy.verification import VerifierRunner
from affidavit.proxy.verifiers.base import CallContext, Receipt, Verifier
from affidavit.proxy.verifiers.locate import backend_repo, filesystem_dirs
from affidavit.proxy.verifiers.schema import OutputSchemas, SchemaChecked

logger = logging.getLogger(__name__)

CLIENT_CAPS_META = "io.modelcontextprotocol/clientCapabilities"
ROOTS_TIMEOUT = 10.0


def ms_since(start: float) -> float:
    """Milliseconds since ``start`` (a ``perf_counter`` reading), as the audit log keeps them."""
    return round((time.perf_counter() - start) * 1000, 3)


def result_of(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(result, whole message)`` of a reply line; ``result`` is ``None`` for errors.

    Raises :class:`~affidavit.core.jsonrpc.AmbiguousMessage` for a reply that repeats a key."""
    message = jsonrpc.parse(line)
    if not isinstance(message, dict):
        return None, {}
    result = message.get("result")
    return (result if isinstance(result, dict) else None), message


def cut_short(exc: BaseException, forwarded: bool) -> str:
    """The audit outcome of a call that ended without the usual answer."""
    if isinstance(exc, asyncio.CancelledError):
        return "abandoned" if forwarded else "cancelled"
    if isinstance(exc, BackendGone):
        return "backend-gone"
    if isinstance(exc, jsonrpc.AmbiguousMessage):
        return "refused-reply"
    return "internal-error"


@dataclass
class InFlight:
    """One call or read being acted on: what it is about, and what its steps learned."""

    subject: CallSubject | ReadSubject
    backend: str
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    """Milliseconds per step so far (policy, approval, snapshot, backend, verify)."""
    policy: PolicyRecord | None = None
    audited: bool = False

    def timings_ms(self, *, steps: bool = True) -> dict[str, float]:
        """The timings to record now: the steps' (unless ``steps`` is false) and the total."""
        return {**(self.timings if steps else {}), "total": ms_since(self.started)}


class ProxySession:
    """The state one proxy run shares between its request paths."""

    def __init__(self, relay: Relay, options: ProxyOptions) -> None:
        self.relay = relay
        self.options = options
        self.roots = Roots(configured=options.roots)
        self.log = AuditLog(options.audit_log, session=secrets.token_hex(8))
        self.pins = (
            PinStore(options.pins_path, relay.backend.identity) if options.pin_tools else None
        )
        self.listed: set[str] = set()
        """Tools whose definitions the pins have been checked against."""
        self.schemas = OutputSchemas()
        self.host_caps: dict[str, Any] = {}
        self.backend_name = ""
        self.roots_task: asyncio.Task[None] | None = None
        self.runner = VerifierRunner(options.verifiers, options.verify_timeout)
        self.backend_command = tuple(getattr(relay.backend, "argv", ()))
        self.backend_dirs = self._started_in()
        self.writer = AuditWriter(
            self.log,
            self._complete,
            self._audit_failed,
            self._written if options.remember is not None else None,
        )

    # ------------------------------------------------------------ the audit log

    def record(self, item: Entry | Pending) -> None:
        """Record an audit entry (any thread, in order): stamped now, completed (redaction,
        receipt fields) and written by the audit thread, off the path of any reply."""
        self.writer.put((time.time(), item))

    def audit(
        self,
        flight: InFlight,
        outcome: str,
        *,
        receipt: Receipt | Unjudged | None = None,
        timings_ms: Mapping[str, float] | None = None,
        forwarded: bool | None = None,
    ) -> None:
        """Record ``flight``'s one entry, with how it ended."""
        flight.audited = True
        ending = Ending(outcome, flight.policy, timings_ms, forwarded)
        self.record(Pending(flight.subject, flight.backend, ending, receipt))

    def audit_cut_short(self, flight: InFlight, exc: BaseException, forwarded: bool) -> None:
        """Record ``flight`` as ended without its answer (``exc`` says how)."""
        outcome = cut_short(exc, forwarded)
        self.audit(flight, outcome, forwarded=forwarded, timings_ms=flight.timings_ms(steps=False))

    async def audited(self, request: HostRequest, flight: InFlight, steps: Awaitable[None]) -> None:
        """Run a request's ``steps``; if they end without auditing it (the host or the backend
        went away, the reply was refused, a bug), audit it anyway, then go on."""
        try:
            await steps
        except BaseException as exc:
            if not flight.audited:
                self.audit_cut_short(flight, exc, request.forwarded)
            raise

    def _complete(self, item: tuple[float, Entry | Pending]) -> AuditEntry:
        """An entry as it is kept and written (the audit thread)."""
        stamp, recorded = item
        ts = utc_iso(datetime.fromtimestamp(stamp, UTC))
        entry = recorded.entry(ts) if isinstance(recorded, Pending) else recorded
        return self.log.remember({"ts": ts, **entry.to_json()})

    def _written(
        self, item: tuple[float, Entry | Pending], entry: Mapping[str, Any], link: str
    ) -> None:
        """An entry is on disk (the audit thread): hand a verified change on to
        ``--remember`` (the receipt is the one its call ended with; nothing else has one)."""
        remember = self.options.remember
        recorded = item[1]
        receipt = recorded.receipt if isinstance(recorded, Pending) else None
        change = verified_change(receipt, entry, str(self.log.path), link)
        if remember is not None and change is not None:
            remember(change)

    @staticmethod
    def _audit_failed(exc: Exception) -> None:
        logger.error("could not write the audit log (%s)", exc)

    # ------------------------------------------------------------ what a verifier sees

    def context(self, method: str, name: str, arguments: Mapping[str, Any]) -> CallContext:
        return CallContext(
            method=method,
            name=name,
            arguments=arguments,
            backend=self.backend_name,
            backend_command=self.backend_command,
            roots=self.roots.all,
            settings=self.options.settings,
        )

    def _started_in(self) -> tuple[Path, ...]:
        """Where the backend takes relative paths from: the repository or directories it was
        started on and, for a subprocess, the working directory it inherited from us."""
        ctx = self.context("", "", {})
        dirs = [p for p in (backend_repo(ctx),) if p is not None] + filesystem_dirs(ctx)
        if ctx.backend_command:
            with contextlib.suppress(OSError):
                dirs.append(Path.cwd())
        return tuple(dirs)

    def verifier(self, ctx: CallContext) -> Verifier | None:
        """What judges a call: the first verifier that applies, with the output-schema check
        in front when the tool declared a schema (only then: others pay one dict lookup)."""
        verifier = self.runner.select(ctx)
        schema = self.schemas.get(ctx.name)
        return verifier if schema is None else SchemaChecked(schema, verifier)

    def roots_pending(self) -> bool:
        """Whether the host's roots were asked for and have not arrived yet."""
        return self.roots_task is not None and not self.roots_task.done()

    async def await_roots(self) -> None:
        """Wait (a bounded time) for the host's roots, which change what a verifier sees."""
        task = self.roots_task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=ROOTS_TIMEOUT)

    def host_can(self, capability: str, params: Mapping[str, Any]) -> bool:
        """Whether the proxy may ask the host mid-call (it declared ``capability``)."""
        meta = params.get("_meta")
        if isinstance(meta, Mapping) and isinstance(meta.get(CLIENT_CAPS_META), Mapping):
            return False  # a stateless (2026-07-28) request: the proxy cannot ask mid-call
        return isinstance(self.host_caps.get(capability), Mapping)

    # ------------------------------------------------------------ pins

    async def check_pins(self, tools: list[Any]) -> None:
        """Check listed tool definitions against the pins; audit and report each change."""
        assert self.pins is not None
        definitions = [t for t in tools if isinstance(t, dict)]
        changes = await asyncio.wait_for(asyncio.to_thread(self.pins.check, definitions), 30.0)
        self.listed.update(str(t.get("name")) for t in definitions)
        for change in changes:
            logger.warning(
                "tool %r changed its definition since it was pinned; it is refused until you "
                "run `affidavit proxy trust-tools`",
                change.tool,
            )
            self.record(PinChanged(change.tool, change.pinned, change.seen))

    async def close(self) -> None:
        """Finish audit writes; leave stuck verifier threads behind rather than hang."""
        await asyncio.to_thread(self.writer.close)
        self.runner.close()
        if self.options.telemetry is not None:
            self.options.telemetry.shutdown()
