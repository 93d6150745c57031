"""Newline-delimited JSON-RPC 2.0 framing for the relay: look at a line, never rewrite it.

The proxy forwards most messages byte for byte, so this module only *inspects* a copy of a
line: :func:`peek` classifies it (request, notification, response, batch, invalid) and pulls
out ``method`` and ``id``. It first tries an anchored prefix match on the key orders real SDKs
emit (``{"jsonrpc":"2.0","id":7,"method":"ping"...``), which settles the class without
decoding the rest of the line; anything else gets one full ``json.loads`` of the copy. Messages
the proxy itself creates (error replies, its own requests) are built by :func:`encode`.

Ids are compared by :data:`IdKey` (type tag + value) because JSON-RPC treats ``1`` and ``"1"``
as different ids.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
BACKEND_GONE = -32001
"""Server-defined error: the backend exited or failed before it answered."""
CONTRADICTED = -32002
"""Server-defined error: a resource read was contradicted by verification."""

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
    INVALID = "invalid"


@dataclass(frozen=True)
class Peek:
    """The class of one line, its ``method`` and ``id``, and the parsed copy if one was made."""

    kind: Kind
    method: str | None = None
    id: Any = None
    message: Any = None
    reason: str = ""

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


def peek(line: bytes) -> Peek:
    """Classify one line (without its newline) cheaply; see the module docstring."""
    stripped = line.strip()
    if not stripped:
        return Peek(Kind.INVALID, reason="blank line")
    first, last = stripped[:1], stripped[-1:]
    if not ((first == b"{" and last == b"}") or (first == b"[" and last == b"]")):
        return Peek(Kind.INVALID, reason="not a JSON object")
    if first == b"{":
        match = _PREFIX_REQUEST.match(stripped)
        if match:
            return Peek(Kind.REQUEST, method=json.loads(match[2]), id=json.loads(match[1]))
        match = _PREFIX_RESPONSE.match(stripped)
        if match:
            return Peek(Kind.RESPONSE, id=json.loads(match[1]))
    try:
        message = json.loads(stripped)
    except (ValueError, RecursionError):
        return Peek(Kind.INVALID, reason="not valid JSON")
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
    """The full parsed copy of a line the proxy acts on."""
    return json.loads(line)


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
