"""Newline-delimited JSON-RPC 2.0 framing for the relay: look at a line, never rewrite it.

The proxy forwards most messages byte for byte, so this module only *inspects* a copy of a
line: :func:`peek` classifies it (request, notification, response, batch, ambiguous, invalid)
and pulls out ``method`` and ``id``. It first tries an anchored prefix match on the key orders
real SDKs emit (``{"jsonrpc":"2.0","id":7,"method":"ping"...``), which settles the class
without decoding the rest of the line; anything else gets one full parse of the copy. Messages
the proxy itself creates (error replies, its own requests) are built by :func:`encode`.

A key given twice in one object means different things to different parsers (Python and
JavaScript keep the last value, simdjson and others the first), so a line with one is
*ambiguous*: the proxy must never act on one reading while its peer acts on the other. Every
full parse here refuses repeated keys. The prefix fast path reads the *first* ``id`` and
``method``; it is taken only when a last-wins parse of the whole line (orjson, in C: the
cheapest way to look at every byte) reads the same ones, so every parser agrees on where the
line goes. A line the proxy acts on is parsed in full anyway, repeated keys refused at any
depth.

Ids are compared by :data:`IdKey` (type tag + value) because JSON-RPC treats ``1`` and ``"1"``
as different ids.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
BACKEND_GONE = -32001
"""Server-defined error: the backend exited or failed before it answered."""
CONTRADICTED = -32002
"""Server-defined error: a resource read was contradicted by verification."""
REPLY_REFUSED = -32003
"""Server-defined error: the proxy refused the backend's reply (it repeated a key)."""
POLICY_DENIED = -32004
"""Server-defined error: the policy denied a request that has no tool result to carry it."""

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
"""The ``params._meta`` key that marks a 2026-07-28 stateless request."""

IdKey = tuple[str, Any]
"""An id as a hashable key that keeps ``1`` and ``"1"`` apart: ``("n", 1)`` or ``("s", "1")``."""


class Kind(enum.Enum):
    """What a line holds."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    BATCH = "batch"
    AMBIGUOUS = "ambiguous"
    INVALID = "invalid"


@dataclass(frozen=True)
class Peek:
    """The class of one line, its ``method`` and ``id``, and the parsed copy if one was made.

    For an ``AMBIGUOUS`` line, ``reason`` names the repeated key, ``id`` is set only when the
    line gives one id unambiguously, and ``waiting`` holds, per message in it (one, or each
    batch member), every id it gives (more than one when ``id`` itself is repeated) and whether
    it is a request (its sender waits) or a reply (the other side waits).
    """

    kind: Kind
    method: str | None = None
    id: Any = None
    message: Any = None
    reason: str = ""
    waiting: tuple[tuple[tuple[Any, ...], bool], ...] = ()

    @property
    def key(self) -> IdKey | None:
        """The hashable form of :attr:`id` (``None`` for notifications and invalid lines)."""
        return id_key(self.id)


def id_key(value: Any) -> IdKey | None:
    """A hashable key for a JSON-RPC id, or ``None`` if ``value`` is not a usable id."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    return None


_STR = rb'"(?:[^"\\]|\\.)*"'
_NUM = rb"-?\d+"
_PREFIX_REQUEST = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(' + _STR + b"|" + _NUM + rb')\s*,\s*"method"'
    rb"\s*:\s*(" + _STR + rb")\s*[,}]"
)
_PREFIX_RESPONSE = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*('
    + _STR
    + b"|"
    + _NUM
    + rb')\s*,\s*"(?:result|error)"'
    rb"\s*:"
)


class AmbiguousMessage(ValueError):
    """A line gives some key twice in one object (see the module docstring)."""


@dataclass(frozen=True)
class _Repeat:
    """One object that gives ``key`` more than once, and every value it gives it."""

    owner: dict[str, Any]
    key: str
    values: tuple[Any, ...]

    @property
    def reason(self) -> str:
        return f"the key {self.key!r} is given twice"


def _first_repeat(items: list[tuple[str, Any]]) -> str:
    seen: set[str] = set()
    for key, _ in items:
        if key in seen:
            return key
        seen.add(key)
    raise ValueError("no key is repeated")


def _load(data: bytes) -> tuple[Any, list[_Repeat]]:
    """Parse ``data`` in full; also return every object in it that repeats a key."""
    repeats: list[_Repeat] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            key = _first_repeat(items)
            repeats.append(_Repeat(obj, key, tuple(v for k, v in items if k == key)))
        return obj

    return json.loads(data, object_pairs_hook=pairs), repeats


def _waiting(message: Any, repeats: list[_Repeat]) -> tuple[tuple[tuple[Any, ...], bool], ...]:
    """Per member of an ambiguous message: every id it gives, and whether it is a request."""
    members = message if isinstance(message, list) else [message]
    found = []
    for member in members:
        if not isinstance(member, dict) or "id" not in member:
            continue
        given = next((r.values for r in repeats if r.owner is member and r.key == "id"), None)
        ids = tuple(v for v in (given or (member["id"],)) if id_key(v) is not None)
        if ids:
            found.append((ids, "method" in member))
    return tuple(found)


def _ambiguous(message: Any, repeats: list[_Repeat]) -> Peek:
    waiting = _waiting(message, repeats)
    single = None
    if isinstance(message, dict) and len(waiting) == 1 and len(waiting[0][0]) == 1:
        single = waiting[0][0][0]
    return Peek(
        Kind.AMBIGUOUS, id=single, message=message, reason=repeats[0].reason, waiting=waiting
    )


def _from_prefix(line: bytes) -> Peek | None:
    """The class, ``id`` and ``method`` that the line's leading keys give, if they are in the
    order real SDKs emit them."""
    match = _PREFIX_REQUEST.match(line)
    if match:
        return Peek(Kind.REQUEST, method=json.loads(match[2]), id=json.loads(match[1]))
    match = _PREFIX_RESPONSE.match(line)
    if match:
        return Peek(Kind.RESPONSE, id=json.loads(match[1]))
    return None


def _last_reading_agrees(fast: Peek, line: bytes) -> bool:
    """Whether a parser that keeps the last of repeated keys routes ``line`` as the prefix
    (the first of them) does: same ``id`` (and type), same ``method`` (or none)."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False  # the full parse below says what is wrong (or accepts what orjson won't)
    if not isinstance(message, dict):
        return False
    last_id = message.get("id")
    return (
        type(last_id) is type(fast.id)
        and last_id == fast.id
        and message.get("method") == fast.method
    )


def peek(line: bytes) -> Peek:
    """Classify one line (without its newline) cheaply; see the module docstring."""
    stripped = line.strip()
    if not stripped:
        return Peek(Kind.INVALID, reason="blank line")
    first, last = stripped[:1], stripped[-1:]
    if not ((first == b"{" and last == b"}") or (first == b"[" and last == b"]")):
        return Peek(Kind.INVALID, reason="not a JSON object")
    if first == b"{":
        fast = _from_prefix(stripped)
        if fast is not None and _last_reading_agrees(fast, stripped):
            return fast
    try:
        message, repeats = _load(stripped)
    except (ValueError, RecursionError):
        return Peek(Kind.INVALID, reason="not valid JSON")
    if repeats:
        return _ambiguous(message, repeats)
    return classify(message)


def classify(message: Any) -> Peek:
    """Classify an already-parsed message (also used for the members of a batch)."""
    if isinstance(message, list):
        if not message:
            return Peek(Kind.INVALID, message=message, reason="empty batch")
        return Peek(Kind.BATCH, message=message)
    if not isinstance(message, dict):
        return Peek(Kind.INVALID, message=message, reason="not a JSON-RPC object")
    method = message.get("method")
    if isinstance(method, str):
        if "id" in message and id_key(message["id"]) is not None:
            return Peek(Kind.REQUEST, method=method, id=message["id"], message=message)
        if "id" in message:
            return Peek(Kind.INVALID, message=message, reason="request with an unusable id")
        return Peek(Kind.NOTIFICATION, method=method, message=message)
    if "result" in message or "error" in message:
        return Peek(Kind.RESPONSE, id=message.get("id"), message=message)
    return Peek(Kind.INVALID, message=message, reason="neither a request nor a response")


def parse(line: bytes) -> Any:
    """The full parsed copy of a line the proxy acts on; :class:`AmbiguousMessage` if it
    repeats a key anywhere (``ValueError`` if it is not JSON at all)."""
    message, repeats = _load(line)
    if repeats:
        raise AmbiguousMessage(repeats[0].reason)
    return message


def encode(message: Any) -> bytes:
    """One compact JSON line (with its newline) for a message the proxy itself creates."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error reply line."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def result_response(request_id: Any, result: Any) -> bytes:
    """A JSON-RPC success reply line."""
    return encode({"jsonrpc": "2.0", "id": request_id, "result": result})


def request_line(request_id: Any, method: str, params: Any = None) -> bytes:
    """A JSON-RPC request line."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return encode(message)
