"""A backend MCP server reached over Streamable HTTP (``--backend-url``).

Each message from the host is POSTed on its own; the server answers with ``202`` (nothing to
relay), one JSON body, or an SSE stream of messages. The ``Mcp-Session-Id`` the server assigns
at initialize is sent on every later request, and the negotiated protocol version as
``MCP-Protocol-Version``; once a session exists a GET stream carries the server's own requests
and notifications (a ``405`` means the server has none). Header values given by the user are
sent but never logged; HTTP failures become JSON-RPC errors for the requests they affect, with
the status code and no response body (which might echo a credential).

The HTTP client lives on the relay's event loop; the relay's reader threads reach it through
the blocking :meth:`HttpBackend.send` and :meth:`HttpBackend.receive`, which hand each step to
that loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlparse

import httpx2

from affidavit.core import jsonrpc
from affidavit.core.errors import UsageError

_ACCEPT = "application/json, text/event-stream"


def validate_url(url: str) -> str:
    """The backend URL, refused unless it is plain http(s) with a host."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(
            f"--backend-url {url!r} is not an http(s) URL", "e.g. http://host:8000/mcp"
        )
    if parsed.username or parsed.password:
        raise UsageError(
            "--backend-url must not carry credentials",
            "pass them with --header-from-env NAME=ENV instead",
        )
    return url


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The ``data`` payloads of an SSE stream, one per event."""
    data: list[str] = []
    async for line in lines:
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


_NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_HEADER_SAFE = re.compile(r"[\x20-\x7E]*")
_B64_SENTINEL = re.compile(r"=\?base64\?.*\?=")


def header_value(value: str) -> str:
    """``value`` as an HTTP field value: verbatim if printable ASCII, else the base64 form."""
    if (
        _HEADER_SAFE.fullmatch(value)
        and value == value.strip()
        and not _B64_SENTINEL.fullmatch(value)
    ):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def envelope_headers(line: bytes) -> dict[str, str]:
    """The routing headers a 2026-07-28 request needs on HTTP (empty for session-era lines).

    A stateless request carries its protocol version in ``params._meta``; the server insists
    that ``MCP-Protocol-Version``, ``Mcp-Method`` and, for name-bearing methods, ``Mcp-Name``
    repeat the body. Only this transport parses the line for it; the stdio path never does.
    """
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(jsonrpc.PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(version, str) or not isinstance(method, str):
        return {}
    assert isinstance(params, dict)
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name = params.get(_NAME_PARAMS.get(method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = header_value(name)
    return headers


def _one_line(body: bytes) -> bytes:
    """A body as one framed line: re-encoded only if the server pretty-printed it."""
    body = body.strip()
    if b"\n" in body or b"\r" in body:
        with contextlib.suppress(ValueError):
            return jsonrpc.encode(json.loads(body)).rstrip(b"\n")
    return body


class HttpBackend:
    """A Streamable HTTP MCP endpoint presented to the relay as a line stream."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        self.url = validate_url(url)
        self.headers = dict(headers)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx2.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._listening = False
        self._closed = False

    @property
    def identity(self) -> str:
        """What names this backend for pinning: its URL."""
        return "http:" + self.url

    async def start(self) -> None:
        """Create the HTTP client (connections are opened lazily, per request)."""
        self._loop = asyncio.get_running_loop()
        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=15.0))

    def exit_status(self) -> str:
        """How the backend ended, for error replies."""
        return "closed the connection"

    def note_protocol_version(self, version: str) -> None:
        """Record the negotiated version; later requests carry it as a header."""
        self.protocol_version = version

    def _request_headers(self) -> dict[str, str]:
        headers = {**self.headers, "Content-Type": "application/json", "Accept": _ACCEPT}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def send(self, line: bytes) -> None:
        """POST one message (from a thread other than the loop's); its reply (if any) arrives
        later through :meth:`receive`."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._start_post, line.rstrip(b"\r\n"))

    def _start_post(self, line: bytes) -> None:
        if self._closed:  # the relay answers what was still in flight
            return
        task = asyncio.create_task(self._post(line))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def receive(self) -> bytes | None:
        """The next message from the server (from a thread other than the loop's), or
        ``None`` after :meth:`close`."""
        assert self._loop is not None
        try:
            return asyncio.run_coroutine_threadsafe(self._queue.get(), self._loop).result()
        except RuntimeError:  # the loop is gone
            return None

    def _fail(self, line: bytes, why: str) -> None:
        peeked = jsonrpc.peek(line)
        ids = []
        if peeked.kind is jsonrpc.Kind.REQUEST:
            ids = [peeked.id]
        elif peeked.kind is jsonrpc.Kind.BATCH:
            ids = [m.get("id") for m in peeked.message if isinstance(m, dict) and "method" in m]
        for request_id in ids:
            if request_id is not None:
                error = jsonrpc.error_response(request_id, jsonrpc.BACKEND_GONE, why)
                self._queue.put_nowait(error.rstrip(b"\n"))

    async def _post(self, line: bytes) -> None:
        assert self._client is not None
        try:
            headers = {**self._request_headers(), **envelope_headers(line)}
            async with self._client.stream(
                "POST", self.url, content=line, headers=headers
            ) as response:
                session = response.headers.get("mcp-session-id")
                if session and session != self.session_id:
                    self.session_id = session
                if response.status_code == 202:
                    self._maybe_listen()
                    return
                if response.status_code >= 400:
                    await response.aread()
                    hint = " (session expired)" if response.status_code == 404 else ""
                    self._fail(line, f"HTTP backend answered {response.status_code}{hint}")
                    return
                await self._relay_body(response)
        except httpx2.HTTPError as exc:
            self._fail(line, f"HTTP backend unreachable ({type(exc).__name__})")
        except Exception as exc:  # e.g. the offline guard: the request still gets an answer
            self._fail(line, f"HTTP backend request failed ({type(exc).__name__})")

    async def _relay_body(self, response: httpx2.Response) -> None:
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            async for data in sse_events(response.aiter_lines()):
                if data.strip():
                    self._queue.put_nowait(_one_line(data.encode("utf-8")))
        else:
            body = await response.aread()
            if body.strip():
                self._queue.put_nowait(_one_line(body))

    def _maybe_listen(self) -> None:
        if self.session_id and not self._listening and not self._closed:
            self._listening = True
            task = asyncio.create_task(self._listen())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _listen(self) -> None:
        """The GET stream for server-initiated messages; absent (405) is normal."""
        assert self._client is not None
        headers = self._request_headers()
        headers["Accept"] = "text/event-stream"
        del headers["Content-Type"]
        with contextlib.suppress(httpx2.HTTPError):
            async with self._client.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    return
                await self._relay_body(response)

    async def close(self, grace: float = 5.0) -> None:
        """End the session (DELETE, as the spec asks) and stop every request."""
        if self._closed:
            return
        self._closed = True
        if self._client is not None:
            if self.session_id:
                with contextlib.suppress(httpx2.HTTPError, TimeoutError):
                    await asyncio.wait_for(
                        self._client.delete(self.url, headers=self._request_headers()), grace
                    )
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._client.aclose()
        self._queue.put_nowait(None)
