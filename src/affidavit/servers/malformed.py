"""What a server answers to a line that is not a valid JSON-RPC message.

The SDK's stdio transport drops such a line without a word, so a client that sent a request
in it waits forever. :func:`refusals` says instead what is wrong, as the JSON-RPC errors to
send back: the request's own id when one can be read (so the client can match the answer),
``null`` when none can; nothing for a broken notification or response, which JSON-RPC never
answers. Codes follow JSON-RPC 2.0: -32700 when the line is not JSON text at all (or not
UTF-8), -32600 when it is JSON but not a request (a batch, no method, a wrong ``jsonrpc``),
-32602 when it is a request whose ``params`` cannot be used (not an object, or holding a lone
surrogate, which is not Unicode text).

Pure functions of the line: the transport (:mod:`.stdio`) calls this only for lines the SDK
refused, so a valid message never pays for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Refusal:
    """One JSON-RPC error to send back: to ``id`` (``None`` when it could not be read)."""

    id: str | int | None
    code: int
    message: str


def refusals(line: bytes) -> list[Refusal]:
    """The errors that answer ``line``, one JSON-RPC message the server could not accept."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        readable = _parsed(line.decode("utf-8", errors="replace"))
        return [
            Refusal(
                _answerable_id(readable),
                PARSE_ERROR,
                f"the message is not UTF-8 text (byte 0x{line[exc.start]:02x} at offset "
                f"{exc.start}); MCP messages are UTF-8",
            )
        ]
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = (
            f" ({exc.msg} at column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        )
        reason = f"the line is not valid JSON{where}; send one JSON-RPC message per line"
        return [Refusal(None, PARSE_ERROR, reason)]
    if isinstance(message, list):
        return _batch(message)
    refusal = _request_refusal(message)
    return [] if refusal is None else [refusal]


def _batch(members: list[Any]) -> list[Refusal]:
    reason = (
        "JSON-RPC batches are not supported (MCP sends one message per line); "
        "send each request on its own line"
    )
    ids = [_answerable_id(m) for m in members]
    answered = [Refusal(i, INVALID_REQUEST, reason) for i in ids if i is not None]
    return answered or [Refusal(None, INVALID_REQUEST, reason)]


def _request_refusal(message: Any) -> Refusal | None:
    """Why ``message`` is not a usable request, or None when it is no request at all."""
    if not isinstance(message, dict):
        return Refusal(None, INVALID_REQUEST, "a JSON-RPC message must be a JSON object")
    if "id" not in message or _is_response(message):
        return None  # a notification or a response: never answered
    request_id = _answerable_id(message)
    if request_id is None:
        return Refusal(None, INVALID_REQUEST, "the id must be a string or an integer")
    if message.get("jsonrpc") != "2.0":
        return Refusal(request_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if not isinstance(message.get("method"), str):
        return Refusal(request_id, INVALID_REQUEST, "the request has no method (a string)")
    params = message.get("params", {})
    if not isinstance(params, dict):
        kind = "an array" if isinstance(params, list) else f"a {type(params).__name__}"
        reason = f"params must be a JSON object (MCP names every parameter), not {kind}"
        return Refusal(request_id, INVALID_PARAMS, reason)
    where = next(_lone_surrogates(message), None)
    if where is not None:
        code = INVALID_PARAMS if where.startswith("params") else INVALID_REQUEST
        reason = (
            f"{where} holds a lone surrogate, which is not Unicode text; "
            "send valid surrogate pairs or plain UTF-8"
        )
        return Refusal(request_id, code, reason)
    return Refusal(request_id, INVALID_REQUEST, "the request is not a valid JSON-RPC 2.0 request")


def _is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def _answerable_id(message: Any) -> str | int | None:
    """The id of a message that is meant as a request, when it is an id MCP allows."""
    if not isinstance(message, dict) or _is_response(message):
        return None
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _lone_surrogates(value: Any, where: str = "") -> Iterator[str]:
    """The JSON path of every string (key or value) that cannot be encoded as UTF-8."""
    if isinstance(value, str):
        if not _is_unicode(value):
            yield where or "the message"
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _is_unicode(key):
                yield f"{where}.<a key>" if where else "<a key>"
                continue
            yield from _lone_surrogates(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _lone_surrogates(item, f"{where}[{index}]")


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
