"""core.jsonrpc: classify a line cheaply and correctly, whatever the key order."""

from __future__ import annotations

import json

import pytest

from affidavit.core import jsonrpc
from affidavit.core.jsonrpc import Kind


@pytest.mark.parametrize(
    ("line", "kind", "method", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', Kind.REQUEST, "ping", 7),
        (
            b'{"jsonrpc": "2.0", "id": "a\\"b", "method": "x/y", "params": {}}',
            Kind.REQUEST,
            "x/y",
            'a"b',
        ),
        (
            b'{"method":"tools/call","params":{"method":"nested"},"jsonrpc":"2.0","id":3}',
            Kind.REQUEST,
            "tools/call",
            3,
        ),
        (
            b'{"jsonrpc":"2.0","id":-4,"result":{"method":"inside a result"}}',
            Kind.RESPONSE,
            None,
            -4,
        ),
        (b'{"result":{},"id":"r","jsonrpc":"2.0"}', Kind.RESPONSE, None, "r"),
        (b'{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"}}', Kind.RESPONSE, None, 5),
        (
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":9}}',
            Kind.NOTIFICATION,
            "notifications/progress",
            None,
        ),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', Kind.BATCH, None, None),
    ],
)
def test_peek_classifies_every_shape(line, kind, method, request_id):
    peeked = jsonrpc.peek(line)
    assert (peeked.kind, peeked.method, peeked.id) == (kind, method, request_id)


def test_the_one_parse_agrees_with_a_full_parse():
    line = b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"n"}}'
    fast = jsonrpc.peek(line)
    assert fast.message == json.loads(line)  # parsed once, and handed on to what acts on it
    full = jsonrpc.classify(json.loads(line))
    assert (fast.kind, fast.method, fast.id) == (full.kind, full.method, full.id)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   ",
        b"hello",
        b"{not json}",
        b"[]",
        b"42",
        b'{"jsonrpc":"2.0"}',
        b'{"id":true,"method":"x"}',
    ],
)
def test_anything_else_is_invalid(line):
    assert jsonrpc.peek(line).kind is Kind.INVALID


def test_ids_of_different_types_never_collide():
    assert jsonrpc.id_key(1) != jsonrpc.id_key("1")
    assert jsonrpc.id_key(True) is None and jsonrpc.id_key(None) is None


def test_built_messages_are_one_line():
    line = jsonrpc.error_response("x\ny", jsonrpc.BACKEND_GONE, "multi\nline", {"a": "é"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["error"]["data"] == {"a": "é"}


@pytest.mark.parametrize(
    ("line", "waiting"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}', (((1,), True),)),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","\\u006dethod":"tools/call"}', (((1,), True),)),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","id":2}', (((1, 2), True),)),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"\\u0069d":2}', (((1, 2), False),)),
        (b'[{"jsonrpc":"2.0","id":3,"result":{}},{"id":4,"id":5,"method":"x"}]', None),
    ],
)
def test_a_repeated_key_in_any_spelling_makes_a_line_ambiguous(line, waiting):
    """The fast path reads the first ``method``/``id``; Python and JavaScript the last."""
    peeked = jsonrpc.peek(line)
    assert peeked.kind is Kind.AMBIGUOUS and "is given twice" in peeked.reason
    if waiting is not None:
        assert peeked.waiting == waiting
    else:
        assert peeked.waiting == (((3,), False), ((4, 5), True))
    with pytest.raises(jsonrpc.AmbiguousMessage):
        jsonrpc.parse(line)


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get","inputSchema":{"id":{}}}]}}',
        b'{"jsonrpc":"2.0","id":"a","method":"x","params":{"method":"y","id":2}}',
        b'{"jsonrpc":"2.0","id":1,"result":{"text":"caf\\u00e9 \\"id\\": 2"}}',
    ],
)
def test_keys_nested_or_quoted_keep_the_fast_path(line):
    """One orjson parse settles these: the leading keys agree with it, and the byte count of
    their keys proves no key is repeated anywhere (so the Python parse is never needed)."""
    peeked = jsonrpc.peek(line)
    assert peeked.kind in (Kind.REQUEST, Kind.RESPONSE)
    assert jsonrpc._no_key_repeated(line, peeked.message)


def test_a_key_repeated_deeper_down_is_refused_where_the_proxy_acts():
    """Routing is unambiguous, so the line is relayed; a full parse (what the proxy acts on)
    still refuses it."""
    line = b'{"jsonrpc":"2.0","id":1,"result":{"isError":false,"isError":true}}'
    assert jsonrpc.peek(line).kind is Kind.RESPONSE
    with pytest.raises(jsonrpc.AmbiguousMessage, match="'isError' is given twice"):
        jsonrpc.parse(line)
