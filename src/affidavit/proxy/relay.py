"""The raw relay: JSON-RPC lines in from one side, the same bytes out the other.

Each side is read by its own thread with blocking reads (ADR 0084). The thread classifies a
line with :func:`affidavit.core.jsonrpc.peek` and, when nothing has to be judged, writes the
very same bytes to the other side at once: a message costs one ``read`` and one ``write``
system call and no event-loop round. Requests flow both ways (the host's ``tools/call``; the
backend's ``sampling/createMessage``, ``elicitation/create``, ``roots/list``; the proxy's own
questions to either side), so replies are correlated by direction *and* id: a response read
from the backend can only answer a request that went to the backend, whatever id the other
direction happens to be using. The tables that correlate them are shared by the threads under
one lock, and never held across I/O.

What the proxy acts on goes to the :class:`~affidavit.proxy.intercept.Interceptor`. A call it
only has to forward and audit (no verifier, policy, pin or receipt to apply) is carried by
the reader threads alone (:meth:`Interceptor.quick`); everything else runs as a task on the
event loop (policy questions, snapshots and verification in threads, the proxy's own
requests), to which the readers hand it. The loop never blocks on the backend: it writes to
it from a worker thread.

Robustness rules: a blank or non-JSON line is reported on stderr and dropped; if the backend
dies, every request still waiting for it gets a JSON-RPC error and the proxy exits; if the
host goes away, the calls it already sent are still forwarded, answered and audited (within a
grace period), then the backend's stdin is closed, it gets a grace period, then it is stopped.

Nothing reaches the host around the interceptor: a line that repeats a routing key (its
meaning depends on the parser) is refused and whoever waits on it gets an error, as is a line
the proxy acts on that repeats a key anywhere; a reply for no request in flight (a second
answer for one id) is dropped; the members of a backend batch are handled one by one, as if
each had come alone. Each refusal is reported to the interceptor (which audits it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from affidavit.core import jsonrpc
from affidavit.core.jsonrpc import IdKey, Kind, Peek
from affidavit.proxy.hostio import HostIO

logger = logging.getLogger(__name__)


class Backend(Protocol):
    """What the relay needs from a backend transport (stdio subprocess or Streamable HTTP).

    ``send`` and ``receive`` block; they are called from the relay's threads, never from the
    event loop's."""

    @property
    def identity(self) -> str: ...

    async def start(self) -> None: ...

    def send(self, line: bytes) -> None: ...

    def receive(self) -> bytes | None: ...

    def exit_status(self) -> str: ...

    async def close(self, grace: float = 5.0) -> None: ...


class BackendGone(Exception):
    """The backend ended before it answered."""


class HostGone(Exception):
    """The host closed its side before it answered the proxy's question."""


HOST_GONE_GRACE = 5.0
"""Seconds the calls a departed host already sent get to be answered and audited."""


class Quick(Protocol):
    """A call the reader threads carry alone: forwarded at once, its reply passed on as it
    came; the interceptor only hears how it ended (to audit it)."""

    def answered(self, line: bytes) -> None:
        """The backend's reply reached the host unchanged."""

    def cut_short(self, exc: BaseException, forwarded: bool) -> None:
        """The call ended without its reply (the host got an error saying why)."""


@dataclass
class Pending:
    """A request sent to one side and not yet answered: the reply goes to ``future`` (a task
    waits for it), or to the host and then ``quick``, or (neither) to the host as it is."""

    method: str
    request_id: Any
    future: asyncio.Future[bytes] | None = None
    quick: Quick | None = None


@dataclass
class HostRequest:
    """A request from the host that the interceptor acts on."""

    relay: Relay
    peek: Peek
    line: bytes
    message: dict[str, Any]
    forwarded: bool = False
    task: asyncio.Task[None] | None = None

    @property
    def id(self) -> Any:
        return self.peek.id

    @property
    def method(self) -> str:
        return self.peek.method or ""

    @property
    def params(self) -> dict[str, Any]:
        params = self.message.get("params")
        return params if isinstance(params, dict) else {}

    async def forward(self) -> bytes:
        """Send the original bytes to the backend; return the backend's reply line."""
        self.forwarded = True
        return await self.relay.send_to_backend(self.peek, self.line)

    @property
    def stateless(self) -> bool:
        """Whether this is a 2026-07-28 request (its ``_meta`` carries the protocol version)."""
        meta = self.params.get("_meta")
        return isinstance(meta, dict) and jsonrpc.PROTOCOL_VERSION_META in meta

    def reply(self, line: bytes) -> None:
        """Answer the host with a line as it is (its id is free again the moment the host can
        see the answer, so a host that reuses it at once is not refused)."""
        self.relay.release(self)
        self.relay.host.write(line)

    def answer(self, result: dict[str, Any]) -> None:
        """Answer the host with a result the proxy made (typed for the request's era)."""
        if self.stateless and "resultType" not in result:
            result = {**result, "resultType": "complete"}
        self.reply(jsonrpc.result_response(self.id, result))


class Interceptor(Protocol):
    """The acting half of the proxy (see :mod:`affidavit.proxy.intercept`)."""

    methods: frozenset[str]

    def quick(self, request: HostRequest) -> Quick | None: ...

    async def handle(self, request: HostRequest) -> None: ...

    def on_host_notification(self, peek: Peek, line: bytes) -> None: ...

    def on_backend_request(self, peek: Peek, line: bytes) -> bytes | None: ...

    def on_refused(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None: ...

    async def close(self) -> None: ...


def _settle(future: asyncio.Future[bytes], outcome: bytes | BaseException) -> None:
    if not future.done():
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class Relay:
    """One host, one backend, the threads that read them and the tables that correlate their
    requests."""

    def __init__(self, backend: Backend, host: HostIO | None = None) -> None:
        self.backend = backend
        self.host = host or HostIO()
        self.interceptor: Interceptor | None = None
        self._lock = threading.Lock()  # guards the three tables and the two "gone" flags
        self._to_backend: dict[IdKey, Pending] = {}
        self._to_host: dict[IdKey, Pending] = {}
        self._held: dict[IdKey, HostRequest] = {}  # ids of requests not answered yet
        self._handling: set[asyncio.Task[None]] = set()  # their tasks, until they end
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prefix = f"affidavit-{secrets.token_hex(4)}-"
        self._counter = itertools.count(1)
        self._backend_gone = False
        self._host_gone = False
        self._finishing = 0  # quick calls out of the table whose ending is still being recorded
        self._stopped = False  # shutdown is over: the reader threads act on nothing more
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ends: dict[str, asyncio.Future[None]] = {}
        self.exit_code = 0

    # --------------------------------------------------------- the event loop

    def _soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` on the event loop (from any thread)."""
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run is over
            self._loop.call_soon_threadsafe(callback, *args)

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as a tracked task (finished or cancelled at shutdown); loop thread."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            logger.error(
                "internal error while handling a message (%s: %s)", type(exc).__name__, exc
            )

    # ----------------------------------------------------------------- sending

    def _send_backend(self, line: bytes) -> None:
        """Write a line to the backend now (a reader thread; blocks while its pipe is full)."""
        if not self._backend_gone:
            self.backend.send(line)

    async def _send_backend_async(self, line: bytes) -> None:
        """Write a line to the backend without blocking the event loop."""
        if not self._backend_gone:
            await asyncio.to_thread(self.backend.send, line)

    def _post_to_backend(self, line: bytes) -> None:
        """Write a line to the backend soon, from any thread (never blocking the caller: the
        backend's reader must not wait on the backend's input)."""
        self._soon(lambda: self.spawn(self._send_backend_async(line)))

    def _track(self, table: dict[IdKey, Pending], key: IdKey | None, pending: Pending) -> bool:
        """Put ``pending`` in ``table``; ``False`` (and nothing put) once the backend is gone
        and ``table`` is the backend's."""
        with self._lock:
            if table is self._to_backend and self._backend_gone:
                return False
            if key is not None:
                table[key] = pending
            return True

    async def send_to_backend(self, peek: Peek, line: bytes) -> bytes:
        """Forward a host request from the event loop; return the backend's reply line."""
        assert self._loop is not None
        future: asyncio.Future[bytes] = self._loop.create_future()
        if not self._track(self._to_backend, peek.key, Pending(peek.method or "", peek.id, future)):
            raise BackendGone(self.backend.exit_status())
        await self._send_backend_async(line)
        return await future

    async def ask(self, side: str, method: str, params: Any, timeout: float) -> dict[str, Any]:
        """The proxy's own request to ``side`` (``"host"`` or ``"backend"``); its result.

        Raises :class:`BackendGone`, :class:`HostGone`, ``TimeoutError``, or ``RuntimeError``
        for an error reply.
        """
        assert self._loop is not None
        if side == "host" and self._host_gone:
            raise HostGone("the host closed its side")
        request_id = f"{self._prefix}{next(self._counter)}"
        key = jsonrpc.id_key(request_id)
        future: asyncio.Future[bytes] = self._loop.create_future()
        table = self._to_host if side == "host" else self._to_backend
        if not self._track(table, key, Pending(method, request_id, future)):
            raise BackendGone(self.backend.exit_status())
        line = jsonrpc.request_line(request_id, method, params)
        try:
            if side == "host":
                self.host.write(line)
            else:
                await self._send_backend_async(line)
            reply = jsonrpc.parse(await asyncio.wait_for(future, timeout))
        finally:
            with self._lock:
                table.pop(key, None)  # type: ignore[arg-type]
        if not isinstance(reply, dict) or "error" in reply:
            error = reply.get("error") if isinstance(reply, dict) else None
            message = error.get("message") if isinstance(error, dict) else "invalid reply"
            raise RuntimeError(str(message))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _is_own(self, request_id: Any) -> bool:
        return isinstance(request_id, str) and request_id.startswith(self._prefix)

    # ------------------------------------------------------------- readers

    def _pump(
        self, side: str, read: Callable[[], bytes | None], handle: Callable[[Peek, bytes], None]
    ) -> None:
        """One side's reader thread: every line classified and handled, until the side ends
        (or the relay stops acting on it)."""
        try:
            while True:
                line = read()
                if line is None or self._stopped or (side == "host" and self._host_gone):
                    break
                try:
                    handle(jsonrpc.peek(line), line)
                except Exception as exc:  # a bug: reported, and the relay goes on
                    logger.error(
                        "internal error on a line from the %s (%s: %s)",
                        side,
                        type(exc).__name__,
                        exc,
                    )
        finally:
            if side == "backend":
                with self._lock:
                    self._backend_gone = True
            self._soon(self._ended, side)

    # ------------------------------------------------------------- host side

    def _from_host(self, peek: Peek, line: bytes) -> None:
        kind = peek.kind
        if kind is Kind.INVALID:
            logger.warning("dropped a line from the host: %s", peek.reason)
        elif kind is Kind.AMBIGUOUS:
            self._refuse("host", peek, line)
        elif kind is Kind.RESPONSE:
            self._host_reply(peek, line)
        elif kind is Kind.REQUEST:
            self._host_request(peek, line)
        elif kind is Kind.NOTIFICATION:
            self._host_notification(peek, line)
        else:
            self._host_batch(peek, line)

    def _host_reply(self, peek: Peek, line: bytes) -> None:
        key = peek.key
        with self._lock:
            pending = self._to_host.pop(key, None) if key is not None else None
        if pending is not None and pending.future is not None:
            self._soon(_settle, pending.future, line)
        elif self._is_own(peek.id):
            logger.warning("dropped a late answer to a question the proxy had given up on")
        else:
            self._send_backend(line)

    def _host_request(self, peek: Peek, line: bytes) -> None:
        key = peek.key
        with self._lock:  # only this thread adds host requests: checked, then added, safely
            in_use = key is not None and (key in self._held or key in self._to_backend)
        if in_use:
            self.host.write(
                jsonrpc.error_response(
                    peek.id,
                    jsonrpc.INVALID_REQUEST,
                    f"affidavit proxy: id {peek.id!r} is already in use by a request in flight; "
                    "give each request its own id",
                )
            )
            return
        interceptor = self.interceptor
        if interceptor is not None and peek.method in interceptor.methods:
            self._act_on(interceptor, peek, line)
            return
        self._forward(peek, line, Pending(peek.method or "", peek.id))

    def _act_on(self, interceptor: Interceptor, peek: Peek, line: bytes) -> None:
        """Hand a request to the interceptor: what it acts on is read in full first, and a
        key repeated anywhere in it is refused."""
        try:
            message = jsonrpc.parse(line, peek.message)
        except jsonrpc.AmbiguousMessage as exc:
            refused = peek._replace(reason=str(exc), waiting=(((peek.id,), True),))
            self._refuse("host", refused, line)
            return
        except (ValueError, RecursionError):  # orjson read it, Python's parser cannot
            self._error_to(
                "host", peek.id, jsonrpc.INVALID_REQUEST, "affidavit proxy: invalid JSON"
            )
            return
        request = HostRequest(self, peek, line, message)
        quick = interceptor.quick(request)
        if quick is not None:
            self._forward(peek, line, Pending(peek.method or "", peek.id, quick=quick))
            return
        key = peek.key
        if key is not None:
            with self._lock:
                self._held[key] = request
        self._soon(self._hold, request)

    def _forward(self, peek: Peek, line: bytes, pending: Pending) -> None:
        """Send a host request on to the backend, expecting ``pending``'s reply."""
        if not self._track(self._to_backend, peek.key, pending):
            self.host.write(self._gone_error(peek.id))
            if pending.quick is not None:
                pending.quick.cut_short(BackendGone(self.backend.exit_status()), forwarded=False)
            return
        self.backend.send(line)

    def _hold(self, request: HostRequest) -> None:
        task = request.task = self.spawn(self._handle(request))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    def release(self, request: HostRequest) -> None:
        """Free a held request's id (it is answered, or its handling ended)."""
        key = request.peek.key
        with self._lock:
            if key is not None and self._held.get(key) is request:
                del self._held[key]

    async def _handle(self, request: HostRequest) -> None:
        assert self.interceptor is not None
        try:
            await self.interceptor.handle(request)
        except BackendGone:
            request.reply(self._gone_error(request.id))
        except jsonrpc.AmbiguousMessage as exc:
            request.reply(
                jsonrpc.error_response(
                    request.id,
                    jsonrpc.REPLY_REFUSED,
                    f"affidavit proxy: refused the backend's reply: {exc} (parsers disagree on "
                    "what it means)",
                )
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.error("internal error on %s (%s: %s)", request.method, type(exc).__name__, exc)
            request.reply(
                jsonrpc.error_response(
                    request.id, jsonrpc.INTERNAL_ERROR, f"affidavit proxy: internal error ({exc})"
                )
            )
        finally:
            self.release(request)

    def _host_notification(self, peek: Peek, line: bytes) -> None:
        if peek.method == "notifications/cancelled":
            try:  # the proxy acts on it (a held call may be dropped): it is read in full
                message = jsonrpc.parse(line, peek.message)
            except jsonrpc.AmbiguousMessage as exc:
                self._refuse("host", peek._replace(reason=str(exc)), line)
                return
            params = message.get("params") if isinstance(message, dict) else None
            target = jsonrpc.id_key(params.get("requestId")) if isinstance(params, dict) else None
            with self._lock:
                held = self._held.get(target) if target is not None else None
            if held is not None:
                self._soon(self._cancel_held, held, line)
                return
        if self.interceptor is not None:
            self._soon(self.interceptor.on_host_notification, peek, line)
        self._send_backend(line)

    def _cancel_held(self, request: HostRequest, line: bytes) -> None:
        """A held call the host cancelled: dropped if it never reached the backend (nothing
        to tell it), else the cancellation goes on to the backend."""
        task = request.task
        if not request.forwarded and task is not None and not task.done():
            task.cancel()
            return
        self.spawn(self._send_backend_async(line))

    def _host_batch(self, peek: Peek, line: bytes) -> None:
        members = [jsonrpc.classify(m) for m in peek.message]
        acted = self.interceptor.methods if self.interceptor is not None else frozenset()
        if any(m.kind is Kind.REQUEST and m.method in acted for m in members):
            errors = [
                {
                    "jsonrpc": "2.0",
                    "id": m.id,
                    "error": {
                        "code": jsonrpc.INVALID_REQUEST,
                        "message": "affidavit proxy: a batch containing "
                        f"{m.method} cannot be verified; send each call as its own message",
                    },
                }
                for m in members
                if m.kind is Kind.REQUEST
            ]
            self.host.write(jsonrpc.encode(errors))
            return
        with self._lock:
            if self._backend_gone:
                return
            for member in members:
                key = member.key
                if member.kind is Kind.REQUEST and key is not None:
                    self._to_backend[key] = Pending(member.method or "", member.id)
        self.backend.send(line)

    # ---------------------------------------------------------- backend side

    def _from_backend(self, peek: Peek, line: bytes) -> None:
        kind = peek.kind
        if kind is Kind.INVALID:
            logger.warning("dropped a line from the backend: %s", peek.reason)
        elif kind is Kind.AMBIGUOUS:
            self._refuse("backend", peek, line)
        elif kind is Kind.RESPONSE:
            if self._backend_reply(peek, line):
                self.host.write(line)
        elif kind is Kind.REQUEST:
            if self._backend_request(peek, line):
                self.host.write(line)
        elif kind is Kind.BATCH:
            self._backend_batch(peek, line)
        else:
            self.host.write(line)

    def _backend_reply(self, peek: Peek, line: bytes) -> bool:
        """Route a reply to whoever waits on it; True when the host gets ``line`` as it is
        and nothing else is to be done."""
        key = peek.key
        if key is None:
            return True  # an error about a line the backend could not read: the host may want it
        pending = self._take(self._to_backend, key)
        if pending is None:
            if self._is_own(peek.id):
                logger.warning("dropped a late answer to a question the proxy had given up on")
            else:  # never relayed: it could overtake the verified answer to the same id
                reason = "a reply for no request in flight (a second answer, or one never asked)"
                logger.warning("dropped a reply from the backend: %s", reason)
                self._report("backend", reason, (peek.id,), line)
            return False
        if pending.future is not None:
            self._soon(_settle, pending.future, line)
            return False
        if pending.quick is not None:
            try:
                self.host.write(line)  # the reply first, the audit after
                pending.quick.answered(line)
            finally:
                self._finished()
            return False
        return True

    def _take(self, table: dict[IdKey, Pending], key: IdKey | None) -> Pending | None:
        """Take a request out of ``table``; a quick call counts as in flight until
        :meth:`_finished` (its audit entry is not recorded yet)."""
        with self._lock:
            pending = table.pop(key, None) if key is not None else None
            if pending is not None and pending.quick is not None:
                self._finishing += 1
            return pending

    def _finished(self) -> None:
        with self._lock:
            self._finishing -= 1

    def _backend_request(self, peek: Peek, line: bytes) -> bool:
        """Let the interceptor answer a backend request; True when it goes on to the host."""
        answer = self.interceptor.on_backend_request(peek, line) if self.interceptor else None
        if answer is None:
            return True
        self._post_to_backend(answer)
        return False

    def _backend_batch(self, peek: Peek, line: bytes) -> None:
        """Each member as if it had come alone; the rest go on to the host as one array."""
        members = peek.message
        kept = []
        for member in members:
            single = jsonrpc.classify(member)
            member_line = jsonrpc.encode(member)
            if single.kind is Kind.RESPONSE:
                keep = self._backend_reply(single, member_line)
            elif single.kind is Kind.REQUEST:
                keep = self._backend_request(single, member_line)
            else:
                keep = True
            if keep:
                kept.append(member)
        if len(kept) == len(members):
            self.host.write(line)
        elif kept:
            self.host.write(jsonrpc.encode(kept))

    # ------------------------------------------------------------- refusals

    def _report(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None:
        if self.interceptor is not None:
            self.interceptor.on_refused(side, reason, ids, line.rstrip(b"\r\n"))

    def _refuse(self, side: str, peek: Peek, line: bytes) -> None:
        """An ambiguous line goes nowhere; whoever waits on one of its ids is told why."""
        logger.warning("refused a line from the %s: %s", side, peek.reason)
        self._report(side, peek.reason, tuple(i for ids, _ in peek.waiting for i in ids), line)
        text = (
            f"affidavit proxy: refused a message in which {peek.reason} (parsers disagree on "
            "what it means); send each key once"
        )
        for ids, is_request in peek.waiting:
            if is_request:  # its sender waits for an answer; an id it repeats is unknown: null
                self._error_to(
                    side, ids[0] if len(ids) == 1 else None, jsonrpc.INVALID_REQUEST, text
                )
                continue
            for request_id in ids:  # a reply: the other side waits for it
                self._fail_waiting(side, request_id, peek.reason, text)

    def _fail_waiting(self, side: str, request_id: Any, reason: str, text: str) -> None:
        table = self._to_backend if side == "backend" else self._to_host
        pending = self._take(table, jsonrpc.id_key(request_id))
        if pending is not None and pending.future is not None:
            self._soon(_settle, pending.future, jsonrpc.AmbiguousMessage(reason))
        elif side == "backend" and pending is not None:
            self._error_to("host", request_id, jsonrpc.REPLY_REFUSED, text)
            if pending.quick is not None:
                try:
                    pending.quick.cut_short(jsonrpc.AmbiguousMessage(reason), forwarded=True)
                finally:
                    self._finished()
        elif side == "host" and not self._is_own(request_id):
            self._error_to("backend", request_id, jsonrpc.INVALID_REQUEST, text)

    def _error_to(self, side: str, request_id: Any, code: int, text: str) -> None:
        line = jsonrpc.error_response(request_id, code, text)
        if side == "host":
            self.host.write(line)
        else:
            self._post_to_backend(line)

    def _gone_error(self, request_id: Any) -> bytes:
        return jsonrpc.error_response(
            request_id,
            jsonrpc.BACKEND_GONE,
            f"affidavit proxy: the backend {self.backend.exit_status()} before answering",
        )

    def _fail_in_flight(self) -> None:
        """Answer every request the backend will now never answer."""
        with self._lock:
            self._backend_gone = True
            in_flight = list(self._to_backend.values())
            self._to_backend.clear()
        for pending in in_flight:
            if pending.future is not None:
                _settle(pending.future, BackendGone(self.backend.exit_status()))
                continue
            self.host.write(self._gone_error(pending.request_id))
            if pending.quick is not None:
                pending.quick.cut_short(BackendGone(self.backend.exit_status()), forwarded=True)

    # --------------------------------------------------------------- running

    async def run(self, make_interceptor: Callable[[Relay], Interceptor] | None = None) -> int:
        """Relay until either side ends; return the process exit code."""
        loop = self._loop = asyncio.get_running_loop()
        await self.backend.start()
        self.host.open()
        if make_interceptor is not None:
            try:
                self.interceptor = make_interceptor(self)
            except BaseException:
                await self.backend.close(grace=1.0)  # never leave the backend running alone
                raise
        self._ends = {side: loop.create_future() for side in ("host", "backend")}
        readers = (
            ("host", self.host.readline, self._from_host),
            ("backend", self.backend.receive, self._from_backend),
        )
        for side, read, handle in readers:
            threading.Thread(
                target=self._pump, args=(side, read, handle), name=f"affidavit-{side}", daemon=True
            ).start()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            # a host that stops us with SIGTERM gets the same clean shutdown as closing stdin
            loop.add_signal_handler(signal.SIGTERM, self._ended, "host")
        await asyncio.wait(self._ends.values(), return_when=asyncio.FIRST_COMPLETED)
        if self._ends["backend"].done():
            await self._after_backend_exit()
        else:
            await self._after_host_exit()
        self._stopped = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.interceptor is not None:
            await self.interceptor.close()
        self.host.close()
        return self.exit_code

    def _ended(self, side: str) -> None:
        """One side closed (or SIGTERM stood for the host closing); loop thread."""
        if side == "host":
            self._host_gone = True
        future = self._ends.get(side)
        if future is not None and not future.done():
            future.set_result(None)

    async def _settle_held(self, timeout: float) -> None:
        """Give the calls in flight up to ``timeout`` to finish (and be audited): the ones
        the interceptor holds, and the quick ones the reader threads carry."""
        assert self._loop is not None
        deadline = self._loop.time() + timeout
        held = list(self._handling)
        if held:  # asyncio.wait, unlike wait_for, does not cancel what is still running
            await asyncio.wait(held, timeout=timeout)
        while self._loop.time() < deadline and self._quick_in_flight():
            await asyncio.sleep(0.01)

    def _quick_in_flight(self) -> bool:
        with self._lock:
            return bool(self._finishing) or any(
                p.quick is not None for p in self._to_backend.values()
            )

    async def _after_backend_exit(self) -> None:
        with self._lock:
            self._backend_gone = True
        await self.backend.close(grace=2.0)  # reap it, so its exit status can be reported
        logger.warning("the backend %s", self.backend.exit_status())
        self._fail_in_flight()
        await self._settle_held(3.0)  # let the interceptor answer the calls it was holding
        with self._lock:
            held = list(self._held.values())
            self._held.clear()
            self._host_gone = True  # the host's thread acts on nothing more
        for request in held:  # e.g. still waiting for an approval
            if request.task is not None:
                request.task.cancel()
            request.reply(self._gone_error(request.id))
        self.exit_code = 8

    async def _after_host_exit(self) -> None:
        # the host closed our stdin: nobody answers the proxy's questions any more, but the
        # calls it already sent still reach the backend and are judged and audited
        with self._lock:
            self._host_gone = True
            asked = list(self._to_host.values())
        for pending in asked:
            if pending.future is not None:
                _settle(pending.future, HostGone("the host closed its side"))
        await self._settle_held(HOST_GONE_GRACE)
        # then close the backend's stdin, give it time to finish and exit
        await self.backend.close(grace=5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._ends["backend"]), 5.0)
        self._fail_in_flight()
        await self._settle_held(3.0)
