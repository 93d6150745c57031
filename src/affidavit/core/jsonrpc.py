"""Newline-delimited JSON-RPC 2.0 framing for the relay: look at a line, never rewrite it.

The proxy forwards most messages byte for byte, so this module only *inspects* a copy of a
line: :func:`peek` classifies it (request, notification, response, batch, ambiguous, invalid)
and pulls out ``method`` and ``id``; :func:`parse` gives the parsed copy of a line the proxy
acts on. Messages the proxy itself creates (error replies, its own requests) are built by
:func:`encode`.

A key given twice in one object means different things to different parsers (Python and
JavaScript keep the last value, simdjson and others the first), so the proxy must never act
on one reading while its peer acts on the other. Every line is parsed once, in C (orjson,
which keeps the last value). Where it goes is settled when the leading keys, in the order
SDKs emit them (``{"jsonrpc":"2.0","id":7,"method":"ping"...``: the first ``id`` and
``method``), match that parse, or when an exact byte count shows that no key in the line can
have been given twice (ADR 0083). Otherwise (or when orjson refuses the line) a full Python
parse records every object that repeats a key, and a line whose routing keys (``id``,
``method`` of the message or of a batch member) are repeated is *ambiguous*: it is refused.
A line the proxy acts on goes through :func:`parse`, which refuses a key repeated at any
depth.

Ids are compared by :data:`IdKey` (type tag + value) because JSON-RPC treats ``1`` and ``"1"``
as different ids.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

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

ROUTING_KEYS = frozenset({"id", "method"})
"""The keys that decide where a message goes; repeating one makes the line ambiguous."""


class Kind(enum.Enum):
    """What a line holds."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    BATCH = "batch"
    AMBIGUOUS = "ambiguous"
    INVALID = "invalid"


class Peek(NamedTuple):
    """The class of one line, its ``method`` and ``id``, and its parsed copy.

    For an ``AMBIGUOUS`` line, ``reason`` names the repeated key, ``id`` is set only when the
    line gives one id unambiguously, and ``waiting`` holds, per message in it (one, or each
    batch member), every id it gives (more than one when ``id`` itself is repeated) and whether
    it is a request (its sender waits) or a reply (the other side waits). ``message`` is the
    parse of a valid line; it may still repeat a key below the routing keys, so what the
    proxy acts on goes through :func:`parse`.
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
    kind = type(value)
    if kind is int or kind is str:  # the usual ids, told apart without the general checks
        return ("n" if kind is int else "s", value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    return None


class AmbiguousMessage(ValueError):
    """A line gives some key twice in one object (see the module docstring)."""


# ------------------------------------------------------------------ one parse, checked by bytes

_STR = rb'"(?:[^"\\]|\\.)*"'
_NUM = rb"-?\d+"
_PREFIX = re.compile(
    rb'\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(' + _STR + b"|" + _NUM + rb")\s*,\s*"
    rb'(?:"method"\s*:\s*(' + _STR + rb')\s*[,}]|"(?:result|error)"\s*:)'
)
_SPACED_KEY_END = re.compile(rb'"[ \t\r\n]+:')
_SPACED_QUOTES = (b'" ', b'"\t', b'"\r', b'"\n')
_NOT_SURE: Any = object()


def _token(raw: bytes) -> Any:
    """A JSON number or string token from the prefix, decoded (the common forms cheaply)."""
    if raw[:1] != b'"':
        return int(raw)
    if b"\\" not in raw:
        return raw[1:-1].decode("utf-8")
    return orjson.loads(raw)


def _first_keys_agree(line: bytes, message: dict[str, Any]) -> bool:
    """Whether the line's leading ``id`` and ``method`` (the first of each, in the key order
    SDKs emit) are the ones a parse that keeps the last of repeated keys read (``message``):
    then every parser routes the line alike."""
    match = _PREFIX.match(line)
    if match is None:
        return False
    try:
        first_id = _token(match[1])
        first_method = _token(match[2]) if match[2] is not None else None
    except (ValueError, orjson.JSONDecodeError):
        return False
    last_id = message.get("id")
    return (
        type(last_id) is type(first_id)
        and last_id == first_id
        and message.get("method") == first_method
    )


def _routing_written_once(data: bytes) -> bool:
    """Whether no object in the JSON text ``data`` can give ``id`` or ``method`` twice.

    Only a ``\\u`` escape can spell a letter differently, so without one anywhere in the
    line every key named ``id`` is the bytes ``"id"`` (likewise ``method``); at most one such
    occurrence means at most one such key, at any depth. Values that happen to read ``"id"``
    only make the test fail safe.
    """
    return b"\\u" not in data and data.count(b'"id"') < 2 and data.count(b'"method"') < 2


def _keys_written(data: bytes) -> int:
    """At least as many as the keys written in the JSON text ``data``.

    Outside strings a colon only ever follows a key, so the colons are an upper bound; most
    messages have no colon inside a string and the count is exact. Otherwise the keys are
    counted by how they end: a closing quote, optional whitespace, ``:``. A closing quote
    follows an even run of backslashes (none, or escaped backslashes); a quote inside a string
    is always escaped, so it follows an odd run, and each ``":`` after an odd run is subtracted
    (inclusion-exclusion over the run lengths). What is left over-counts only a string value
    that begins with ``:`` and the rare spaced form inside a string: never too few.
    """
    count = data.count(b'":')
    run, sign = 1, -1
    while count:
        found = data.count(b"\\" * run + b'":')
        if not found:
            break
        count += sign * found
        run, sign = run + 1, -sign
    if any(pair in data for pair in _SPACED_QUOTES):
        count += len(_SPACED_KEY_END.findall(data))
    return count


def _keys_kept(value: Any) -> int:
    """How many keys the parsed ``value`` holds, summed over every object in it."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            count += len(item)
            stack.extend([v for v in item.values() if type(v) is dict or type(v) is list])
        elif type(item) is list:
            stack.extend([v for v in item if type(v) is dict or type(v) is list])
    return count


def _no_key_repeated(data: bytes, message: Any) -> bool:
    """Whether no object in ``message`` (the parse of ``data``) was given a key twice.

    A parse keeps one value per key, so the keys it kept add up to the keys written exactly
    when none was repeated (ADR 0083). Cheapest first, all in C: outside strings a colon only
    ever follows a key, and without a ``\\u`` escape a colon inside a string is written as
    itself, in the line as in orjson's compact re-encoding of the parse; so the line has
    exactly as many colons as that re-encoding when, and only when, it wrote no key more than
    the parse kept (a repeat adds its key's colon, and whatever its dropped value held).
    Otherwise the kept keys are counted and compared with byte counts that never undercount
    the keys written. Inequality only means "not sure": the full parse decides.
    """
    colons = data.count(b":")
    if b"\\u" not in data and colons == orjson.dumps(message).count(b":"):
        return True
    kept = _keys_kept(message)
    return colons == kept or _keys_written(data) == kept


def _parsed(data: bytes) -> Any:
    """orjson's parse of ``data`` (it keeps the last of repeated keys), or ``_NOT_SURE``."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _NOT_SURE


# ------------------------------------------------------------------ the full parse


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


def _routing(message: Any, repeats: list[_Repeat]) -> list[_Repeat]:
    """The repeats of ``id`` or ``method`` in the message itself or in a batch member."""
    members = message if isinstance(message, list) else [message]
    return [r for r in repeats if r.key in ROUTING_KEYS and any(r.owner is m for m in members)]


def _peek_in_full(line: bytes) -> Peek:
    stripped = line.strip()
    if not stripped:
        return Peek(Kind.INVALID, reason="blank line")
    first, last = stripped[:1], stripped[-1:]
    if not ((first == b"{" and last == b"}") or (first == b"[" and last == b"]")):
        return Peek(Kind.INVALID, reason="not a JSON object")
    try:
        message, repeats = _load(stripped)
    except (ValueError, RecursionError):
        return Peek(Kind.INVALID, reason="not valid JSON")
    if not repeats:
        return classify(message)
    routing = _routing(message, repeats)
    if routing:
        return _ambiguous(message, routing)
    return classify(message)  # only deeper down: routed as any parser reads it


def peek(line: bytes) -> Peek:
    """Classify one line (a trailing newline is allowed); see the module docstring.

    One C parse reads the line; its routing is then confirmed by bytes alone, cheapest first
    (ADR 0083): no ``id`` or ``method`` key can be repeated when each is written at most once
    and nothing is spelled with a ``\\u`` escape; else the leading keys agree with the parse;
    else the key count shows no key repeated at all. Only a line that fails all three gets
    the full parse.
    """
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _peek_in_full(line)
    if (
        _routing_written_once(line)
        or (type(message) is dict and _first_keys_agree(line, message))
        or _no_key_repeated(line, message)
    ):
        return classify(message)
    return _peek_in_full(line)


def classify(message: Any) -> Peek:
    """Classify an already-parsed message (also used for the members of a batch)."""
    if not isinstance(message, dict):
        if isinstance(message, list) and message:
            return Peek(Kind.BATCH, message=message)
        reason = "empty batch" if isinstance(message, list) else "not a JSON-RPC object"
        return Peek(Kind.INVALID, message=message, reason=reason)
    method = message.get("method")
    if isinstance(method, str):
        if "id" in message and id_key(message["id"]) is not None:
            return Peek(Kind.REQUEST, method, message["id"], message)
        if "id" in message:
            return Peek(Kind.INVALID, message=message, reason="request with an unusable id")
        return Peek(Kind.NOTIFICATION, method=method, message=message)
    if "result" in message or "error" in message:
        return Peek(Kind.RESPONSE, id=message.get("id"), message=message)
    return Peek(Kind.INVALID, message=message, reason="neither a request nor a response")


def parse(line: bytes, parsed: Any = _NOT_SURE) -> Any:
    """The parsed copy of a line the proxy acts on (``parsed``, the copy :func:`peek` made,
    is reused when given); :class:`AmbiguousMessage` if it repeats a key anywhere
    (``ValueError`` if it is not JSON at all)."""
    message = _parsed(line) if parsed is _NOT_SURE else parsed
    if message is not _NOT_SURE and _no_key_repeated(line, message):
        return message
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
