"""The JSONC span editor: edits touch one member and keep every other byte."""

from __future__ import annotations

import json

import pytest

from affidavit.core.errors import InputError
from affidavit.integrate.jsonc import JsoncDocument, parse

ZED = """// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{
  "theme": "One Dark", /* inline */
  "context_servers": {
    "other": {"command": "x", "args": []},
  },
}
"""


def test_parse_accepts_comments_and_trailing_commas():
    assert parse(ZED).value == {
        "theme": "One Dark",
        "context_servers": {"other": {"command": "x", "args": []}},
    }


@pytest.mark.parametrize(
    "bad", ['{"a": 1', '{"a" 1}', "[1, 2", '{"a": 1} x', '{"a": tru}', "/* open", "{a: 1}"]
)
def test_parse_rejects_broken_text_with_a_position(bad):
    with pytest.raises(InputError, match="line 1, column"):
        parse(bad)


def test_set_then_delete_round_trips_byte_for_byte():
    doc = JsoncDocument(ZED)
    doc.set(("context_servers", "affidavit"), {"command": "/abs/affidavit", "args": ["serve"]})
    assert "// For information" in doc.text and "/* inline */" in doc.text
    assert doc.get(("context_servers", "affidavit")) == {
        "command": "/abs/affidavit",
        "args": ["serve"],
    }
    assert doc.get(("context_servers", "other")) == {"command": "x", "args": []}
    assert doc.delete(("context_servers", "affidavit"))
    assert doc.text == ZED


def test_replacing_a_member_leaves_its_neighbours_alone():
    text = '{\n    "mcpServers": {\n        "a": {"command": "a"},\n        "b": 1\n    }\n}\n'
    doc = JsoncDocument(text)
    doc.set(("mcpServers", "a"), {"command": "z"})
    assert doc.text.endswith('        "b": 1\n    }\n}\n')
    assert json.loads(doc.text)["mcpServers"] == {"a": {"command": "z"}, "b": 1}


def test_missing_parents_are_created_and_indentation_follows_the_file():
    doc = JsoncDocument('{\n    "theme": "x"\n}\n')
    doc.set(("mcpServers", "affidavit"), {"command": "c"})
    assert '\n    "mcpServers": {\n        "affidavit": {\n            "command": "c"' in doc.text
    assert json.loads(doc.text) == {"theme": "x", "mcpServers": {"affidavit": {"command": "c"}}}


def test_several_missing_parents_nest_in_path_order():
    # OpenClaw keeps its servers two levels down, at mcp.servers
    doc = JsoncDocument('{"gateway": {"port": 1}}')
    doc.set(("mcp", "servers", "affidavit"), {"command": "c"})
    assert json.loads(doc.text)["mcp"] == {"servers": {"affidavit": {"command": "c"}}}
    doc = JsoncDocument('{"mcp": {"sessionIdleTtlMs": 0}}')
    doc.set(("mcp", "servers", "affidavit"), 1)
    assert json.loads(doc.text)["mcp"] == {"sessionIdleTtlMs": 0, "servers": {"affidavit": 1}}


def test_empty_file_and_empty_object():
    doc = JsoncDocument("")
    doc.set(("servers", "s"), {"type": "stdio"})
    assert json.loads(doc.text) == {"servers": {"s": {"type": "stdio"}}}
    doc = JsoncDocument("{}")
    doc.set(("servers", "s"), 1)
    assert json.loads(doc.text) == {"servers": {"s": 1}}


def test_crlf_files_stay_crlf():
    doc = JsoncDocument('{\r\n  "a": 1\r\n}\r\n')
    doc.set(("mcpServers", "x"), {"command": "c"})
    assert "\n" not in doc.text.replace("\r\n", "")
    assert json.loads(doc.text)["mcpServers"] == {"x": {"command": "c"}}


def test_a_non_object_top_level_is_refused():
    with pytest.raises(InputError, match="not a JSON object"):
        JsoncDocument("[1, 2]")


def test_deleting_a_middle_and_the_only_member():
    doc = JsoncDocument('{\n  "s": {\n    "a": 1,\n    "b": 2,\n    "c": 3\n  }\n}\n')
    assert doc.delete(("s", "b"))
    assert json.loads(doc.text) == {"s": {"a": 1, "c": 3}}
    doc = JsoncDocument('{"s": {"a": 1}}')
    assert doc.delete(("s", "a"))
    assert json.loads(doc.text) == {"s": {}}
    assert not doc.delete(("s", "missing"))


def test_a_one_line_object_stays_one_line():
    doc = JsoncDocument('{"theme": "dark"}')
    doc.set(("mcpServers", "affidavit"), {"command": "/a", "args": ["serve"]})
    assert doc.text == (
        '{"theme": "dark", "mcpServers": {"affidavit": {"command": "/a", "args": ["serve"]}}}'
    )
