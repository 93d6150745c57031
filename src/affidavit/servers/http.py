"""Streamable HTTP for affidavit's three MCP servers: a gate in front of the SDK's transport.

The MCP SDK's :class:`StreamableHTTPSessionManager` speaks the protocol (both the 2025
handshake era and the 2026-07-28 stateless era, which the proxy also speaks); this module
decides who reaches it. Every request to ``/mcp`` passes these checks in order, and the first
that fails answers alone, before a byte of the body is read or a tool runs:

1. ``Host`` and ``Origin`` (DNS rebinding): a loopback server answers only to loopback names,
   and a browser page's ``Origin`` only when it is one of those names -> 403.
2. The method: POST only -> 405. A stateless server has nothing to send on a GET event
   stream, which would otherwise stay open for ever.
3. The client address's failure budget: an address that sent too many missing or wrong
   tokens gets 429 with ``Retry-After`` before its token is even looked up (a token this
   server accepted recently still goes through, so a working client on the same address,
   e.g. 127.0.0.1, is not locked out by a flood).
4. ``Authorization: Bearer <token>``: missing, unknown, replaced or revoked -> 401 (and one
   failure counted against the address); a memory vault that is locked (so tokens cannot be
   checked) -> 503 saying how to unlock.
5. The caller's token bucket (a sustained rate and a burst) and its open requests -> 429 with
   ``Retry-After``.
6. The declared body size -> 413 (the SDK enforces the same limit on chunked bodies).

Beneath the gate, the connection itself is bounded (:mod:`affidavit.core.http_connections`):
connections per address, and how long a request head or a paused body may keep it waiting.

The token decides the caller; each caller gets its own MCP server (built by the plane's
factory on first use, so the memory server's grants apply per caller) behind its own session
manager, in stateless mode: no session to hijack, any request may reach any worker.

Exposure rules live in :meth:`HttpOptions.check`: 127.0.0.1 by default; any other address
needs ``--allow-remote`` and either TLS or an explicit ``--insecure-http``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from affidavit.core.errors import AffidavitError, LockedError, UsageError
from affidavit.core.http_connections import ConnectionLimits, uvicorn_settings

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.server.lowlevel import Server
    from starlette.types import ASGIApp, Receive, Scope, Send

PATH = "/mcp"
DEFAULT_RATE = 100.0
"""Requests per second one caller may make, sustained: above what one client calling in a
loop reaches (about 75 searches/s measured through the SDK client on a loaded machine)."""
BURST_SECONDS = 10
"""A caller's burst, unless given: this many seconds of its sustained rate (1,000 requests
at the default), so a loop of a few hundred calls never waits."""
DEFAULT_AUTH_FAILURES = 20
"""Missing or wrong tokens one client address may send per minute (a burst of as many)."""
DEFAULT_OPEN_REQUESTS = 32
"""Requests one caller may have open at once (a streamed response counts until it ends)."""
DEFAULT_MAX_BODY = 1024 * 1024
"""Bytes one request body may hold: far above any tool call the catalogues accept."""
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
UNLOCK_HINT = (
    "the memory vault is locked: run `affidavit unlock` on the server's machine, then retry"
)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8765`` for IPv6; port 0 picks a free one) as a pair."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--http {text!r} is not HOST:PORT", "e.g. --http 127.0.0.1:8765")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (a loopback address or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpOptions:
    """How a server is exposed over HTTP: where, with which protection, within which limits."""

    host: str
    port: int
    allow_remote: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure_http: bool = False
    rate_limit: float = DEFAULT_RATE
    rate_burst: int | None = None
    auth_failures: int = DEFAULT_AUTH_FAILURES
    open_requests: int = DEFAULT_OPEN_REQUESTS
    max_body: int = DEFAULT_MAX_BODY
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)

    @property
    def burst(self) -> int:
        """Requests one caller may make at once (``rate_burst``, else ten seconds' worth)."""
        if self.rate_burst is not None:
            return self.rate_burst
        return max(1, math.ceil(self.rate_limit * BURST_SECONDS))

    @property
    def tls(self) -> bool:
        """Whether the server speaks HTTPS."""
        return self.tls_cert is not None

    def check(self) -> None:
        """UsageError unless the exposure is one the user asked for explicitly."""
        if (self.tls_cert is None) != (self.tls_key is None):
            raise UsageError("--tls-cert and --tls-key go together", "pass both, or neither")
        for flag, given in (("--tls-cert", self.tls_cert), ("--tls-key", self.tls_key)):
            if given is not None and not given.is_file():
                raise UsageError(f"{flag} {given} is not a readable file", "check the path")
        if is_loopback(self.host):
            return
        if not self.allow_remote:
            raise UsageError(
                f"refusing to listen on {self.host}: only this machine (127.0.0.1) by default",
                "pass --allow-remote, with --tls-cert/--tls-key (or --insecure-http)",
            )
        if not self.tls and not self.insecure_http:
            raise UsageError(
                f"refusing plain HTTP on {self.host}: tokens would cross the network in clear",
                "pass --tls-cert and --tls-key, or --insecure-http behind your own TLS proxy",
            )


class Authenticator(Protocol):
    """What the gate asks about a bearer token: whose it is (None: nobody's)."""

    def caller_for(self, token: str) -> str | None:
        """The caller ``token`` belongs to; LockedError when that cannot be told right now."""
        ...


class FileToken:
    """One token read from a file the user made (the pack and dev servers have no vault).

    The file must be a regular file readable by its owner only (0600 or 0400), like an SSH
    key; the token is its first line. It is read once, at start-up, and never logged.
    """

    def __init__(self, path: Path, caller: str) -> None:
        self.caller = caller
        try:
            info = path.stat()
            text = path.read_text(encoding="utf-8") if stat.S_ISREG(info.st_mode) else ""
        except (OSError, UnicodeDecodeError):
            raise UsageError(f"--token-file {path} cannot be read", "check the path") from None
        if info.st_mode & 0o077:
            raise UsageError(
                f"--token-file {path} is readable by others (mode {info.st_mode & 0o777:o})",
                f"chmod 600 {path}",
            )
        lines = text.splitlines()
        token = lines[0].strip() if lines else ""
        if len(token) < 16:
            raise UsageError(
                f"--token-file {path} holds no token of 16 characters or more",
                "e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE",
            )
        from affidavit.access import tokens

        self._digest = tokens.digest(token)

    def caller_for(self, token: str) -> str | None:
        """The one caller, when ``token`` is the file's token."""
        from affidavit.access import tokens

        return self.caller if hmac.compare_digest(tokens.digest(token), self._digest) else None


class RateLimit:
    """Token buckets by key (a caller, a client address): ``rate`` a second, up to ``burst``.

    A bucket that has filled up again is the same as none, so buckets are dropped once
    there are more than ``MAX_KEYS`` of them and they are full (a flood from many addresses
    cannot grow the table without bound).
    """

    MAX_KEYS = 10_000

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def wait(self, key: str) -> float:
        """0 if ``key`` may go now (and count it), else the seconds until it may."""
        with self._lock:
            tokens, now = self._tokens(key)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, now)
                self._prune(now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / self.rate

    def delay(self, key: str) -> float:
        """Like :meth:`wait`, without counting: 0 if ``key`` has a token left."""
        with self._lock:
            tokens, _ = self._tokens(key)
            return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def _tokens(self, key: str) -> tuple[float, float]:
        now = time.monotonic()
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - then) * self.rate), now

    def _prune(self, now: float) -> None:
        if len(self._buckets) <= self.MAX_KEYS:
            return
        refill = self.burst / self.rate
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < refill}


class OpenRequests:
    """How many requests each caller has open right now, up to a cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: dict[str, int] = {}

    def enter(self, caller: str) -> bool:
        """Count one more open request for ``caller``; False (nothing counted) at the cap."""
        count = self._open.get(caller, 0)
        if count >= self.cap:
            return False
        self._open[caller] = count + 1
        return True

    def leave(self, caller: str) -> None:
        """One of ``caller``'s requests has ended."""
        count = self._open.pop(caller) - 1
        if count:
            self._open[caller] = count


class Gate:
    """The ASGI app: the checks of the module docstring, then the caller's MCP server."""

    def __init__(
        self,
        options: HttpOptions,
        port: int,
        auth: Authenticator,
        factory: Callable[[str], Server[Any]],
        *,
        json_response: bool = True,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        self.options = options
        self.port = port
        self.auth = auth
        self.factory = factory
        self.json_response = json_response
        self.on_start = on_start
        self.limit = RateLimit(options.rate_limit, options.burst)
        self.failures = RateLimit(options.auth_failures / 60, options.auth_failures)
        self.open = OpenRequests(options.open_requests)
        self._accepted: set[bytes] = set()  # digests of tokens that found a caller
        self._apps: dict[str, ASGIApp] = {}
        import anyio

        self._starting = anyio.Lock()  # held while a caller's manager starts
        self._tasks: TaskGroup | None = None
        # imported now, before on_start can arm a sandbox that refuses the bytecode cache
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self._manager = StreamableHTTPSessionManager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Hold the task group every caller's session manager runs in, for the server's life."""
        import anyio

        await receive()  # lifespan.startup
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            if self.on_start is not None:
                self.on_start()
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            tasks.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if scope["path"].rstrip("/") != PATH:
            return await _refuse(send, 404, f"no MCP endpoint here: use {PATH}")
        if not self._host_allowed(headers.get("host", "")):
            return await _refuse(send, 403, "Host header not allowed (DNS rebinding protection)")
        if "origin" in headers and not self._origin_allowed(headers["origin"]):
            return await _refuse(send, 403, "Origin not allowed (DNS rebinding protection)")
        if scope["method"] != "POST":
            message = "only POST: this stateless server has no event stream to open"
            return await _refuse(send, 405, message, ((b"allow", b"POST"),))
        caller = await self._caller(scope, headers.get("authorization", ""))
        if isinstance(caller, Refusal):
            return await _refuse(send, caller.status, caller.message, caller.headers)
        wait = self.limit.wait(caller)
        if wait > 0:
            message = f"rate limit of {self.options.rate_limit:g} requests/s reached; retry later"
            return await _refuse(send, 429, message, _retry_after(wait))
        declared = headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > self.options.max_body:
            limit = self.options.max_body
            return await _refuse(send, 413, f"request body over the {limit}-byte limit")
        if not self.open.enter(caller):
            message = f"{self.open.cap} requests of this caller are open already; retry later"
            return await _refuse(send, 429, message, _retry_after(1))
        try:
            app = await self._app(caller)
            await app(scope, receive, send)
        finally:
            self.open.leave(caller)

    async def _caller(self, scope: Scope, authorization: str) -> str | Refusal:
        """The caller the request's token names, or why the request is refused.

        Failures are counted per client address; past its budget an address is refused
        before its token is looked up, unless the token is one this server accepted before.
        """
        import anyio

        address = (scope.get("client") or ("",))[0]
        token = _bearer(authorization)
        digest = hashlib.sha256((token or "").encode("utf-8", "replace")).digest()
        if digest not in self._accepted:
            wait = self.failures.delay(address)
            if wait > 0:
                message = "too many missing or wrong tokens from this address; retry later"
                return Refusal(429, message, _retry_after(wait))
        if token is None:
            self.failures.wait(address)
            return Refusal(401, "missing bearer token: send Authorization: Bearer")
        try:
            caller = await anyio.to_thread.run_sync(self.auth.caller_for, token)
        except LockedError:
            return Refusal(503, UNLOCK_HINT)
        except AffidavitError as exc:  # no vault, a wrong passphrase: the server's own problem
            return Refusal(503, f"cannot check tokens: {exc}")
        if caller is None:
            self._accepted.discard(digest)  # revoked since
            self.failures.wait(address)
            return Refusal(401, "unknown or revoked token")
        self._accepted.add(digest)
        return caller

    def _host_allowed(self, host: str) -> bool:
        if not is_loopback(self.options.host):
            return True  # a remote server's names are the user's DNS; the token guards it
        name, port = _split_host(host)
        return name in _LOOPBACK_NAMES and port in (None, self.port)

    def _origin_allowed(self, origin: str) -> bool:
        """A browser page may call a loopback server only from a loopback origin."""
        if not is_loopback(self.options.host):
            return False
        try:
            parts = urlsplit(origin)
            port = parts.port
        except ValueError:
            return False
        return (
            parts.scheme in ("http", "https")
            and parts.hostname in _LOOPBACK_NAMES
            and (port is None or port == self.port)
        )

    async def _app(self, caller: str) -> ASGIApp:
        """The caller's session manager, started in the lifespan's task group on first use.

        A manager is published only once it runs: a caller's first requests arrive together,
        and one that found a manager still starting was answered 500 (issue 26). The lock
        makes the others wait for the first; once published, a caller's requests never take it.
        """
        app = self._apps.get(caller)
        if app is not None:
            return app
        async with self._starting:
            app = self._apps.get(caller)
            if app is None:
                app = await self._start(caller)
                self._apps[caller] = app
        return app

    async def _start(self, caller: str) -> ASGIApp:
        """A new session manager for ``caller``, running in the lifespan's task group."""
        assert self._tasks is not None, "the lifespan starts before any request"
        manager = self._manager(
            self.factory(caller),
            json_response=self.json_response,
            stateless=True,
            max_request_body_size=self.options.max_body,
        )

        async def run(*, task_status: Any) -> None:
            import anyio

            async with manager.run():
                task_status.started()
                await anyio.sleep_forever()

        await self._tasks.start(run)
        return manager.handle_request


def _split_host(host: str) -> tuple[str, int | None]:
    """``Host`` header value as (lower-case name, port or None)."""
    name, port = host, None
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port_text = host.partition(":")
    if port_text:
        if not port_text.isdigit():
            return "", None
        port = int(port_text)
    return name.lower(), port


def _bearer(value: str) -> str | None:
    scheme, _, token = value.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _retry_after(wait: float) -> tuple[tuple[bytes, bytes], ...]:
    """A ``Retry-After`` header for a wait of ``wait`` seconds (whole seconds, at least 1)."""
    return ((b"retry-after", str(max(1, math.ceil(wait))).encode()),)


@dataclass(frozen=True)
class Refusal:
    """An answer the gate gives instead of the MCP server (see :func:`_refuse`)."""

    status: int
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


async def _refuse(
    send: Send, status: int, message: str, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """A refusal as a JSON-RPC error (id null) with ``status``; the request body is unread."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="affidavit"'))
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


def serve(
    options: HttpOptions,
    auth: Authenticator,
    factory: Callable[[str], Server[Any]],
    *,
    what: str,
    json_response: bool = True,
    on_start: Callable[[], None] | None = None,
) -> None:
    """Serve ``factory``'s MCP servers behind the gate until interrupted (Ctrl-C, SIGTERM).

    The socket is bound first (so ``on_start``, e.g. the pack server's sandbox, runs after the
    last bind), and one line on stderr says where the server listens, with the real port when
    port 0 was asked for.
    """
    import uvicorn

    options.check()
    sock = _bind(options.host, options.port)
    port = sock.getsockname()[1]
    gate = Gate(options, port, auth, factory, json_response=json_response, on_start=on_start)
    config = uvicorn.Config(
        gate,
        lifespan="on",
        log_level="warning",
        access_log=False,  # request lines only, but nothing a user needs; headers never logged
        server_header=False,
        loop="asyncio",
        **uvicorn_settings(options.connections),
        ssl_certfile=options.tls_cert,
        ssl_keyfile=options.tls_key,
        timeout_graceful_shutdown=5,
    )
    scheme = "https" if options.tls else "http"
    host = f"[{options.host}]" if ":" in options.host else options.host
    print(f"affidavit: serving {what} at {scheme}://{host}:{port}{PATH}", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.Server(config).run(sockets=[sock])


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a one-line error when the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted sockets only when
    # their proto says TCP, and without it Nagle plus delayed ACKs add ~40 ms to every
    # response on a kept-alive connection
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({os.strerror(exc.errno or 0)})",
            "pick another --http HOST:PORT (port 0 picks a free one)",
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
