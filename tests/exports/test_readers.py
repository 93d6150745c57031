"""The ChatGPT and Claude export readers: the documented shapes, their edges, clear errors."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime
from typing import Any

import pytest

from affidavit.core.errors import InputError, NotFoundError
from affidavit.exports import CHATGPT, CLAUDE, parse_export, read_export
from tests.exports.synthetic import (
    BASE,
    LIBRARY,
    chatgpt_conversation,
    claude_conversation,
    write_chatgpt,
    write_claude,
)


def dump(data: Any) -> bytes:
    return json.dumps(data).encode()


@pytest.mark.parametrize(("write", "format"), [(write_chatgpt, CHATGPT), (write_claude, CLAUDE)])
def test_reads_conversations_in_order_with_roles_texts_and_utc_times(tmp_path, write, format):
    export = read_export(write(tmp_path / "conversations.json"))
    assert export.format == format and export.label == "conversations.json"
    assert [c.title for c in export.conversations] == ["Tool library", "Bike repair"]
    expected = [[(role, text) for role, text in turns] for _, turns in LIBRARY]
    assert [[(m.role, m.text) for m in c.messages] for c in export.conversations] == expected
    first = export.conversations[0].messages[0]
    assert first.created == datetime.fromtimestamp(BASE + 60, UTC)
    assert export.message_count == 5


def test_chatgpt_follows_the_branch_that_ends_at_current_node(tmp_path):
    conversation = chatgpt_conversation(
        "Edited", [("user", "first try"), ("assistant", "old answer")]
    )
    mapping = conversation["mapping"]
    # the user edited the first message: a sibling branch that current_node now points into
    mapping["sys"]["children"].append("edit")
    mapping["edit"] = {
        "id": "edit",
        "message": {
            "id": "edit",
            "author": {"role": "user"},
            "create_time": BASE + 500,
            "content": {"content_type": "text", "parts": ["second try"]},
        },
        "parent": "sys",
        "children": [],
    }
    conversation["current_node"] = "edit"
    export = parse_export("c.json", dump([conversation]))
    assert [m.text for m in export.conversations[0].messages] == ["second try"]


def test_chatgpt_keeps_only_what_the_people_in_the_chat_saw(tmp_path):
    conversation = chatgpt_conversation(
        "Mixed", [("user", "look at this"), ("tool", "search results"), ("assistant", "  ")]
    )
    nodes = [n for n in conversation["mapping"].values() if n["message"] and n["id"] != "sys"]
    nodes[0]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [{"content_type": "image_asset_pointer"}, "look at this"],
    }
    export = parse_export("c.json", dump([conversation]))
    assert [(m.role, m.text) for m in export.conversations[0].messages] == [
        ("user", "look at this")
    ]


def test_chatgpt_message_without_a_time_takes_its_conversations(tmp_path):
    conversation = chatgpt_conversation("Undated", [("user", "hello there")])
    node = conversation["mapping"][conversation["current_node"]]
    node["message"]["create_time"] = None
    export = parse_export("c.json", dump([conversation]))
    assert export.conversations[0].messages[0].created == datetime.fromtimestamp(BASE, UTC)


def test_claude_reads_text_blocks_and_falls_back_to_text(tmp_path):
    conversation = claude_conversation("Blocks", [("user", "plain"), ("assistant", "ignored")])
    conversation["chat_messages"][0]["content"] = []
    conversation["chat_messages"][1]["content"] = [
        {"type": "text", "text": "part one"},
        {"type": "tool_use", "name": "search", "input": {}},
        {"type": "text", "text": "part two"},
    ]
    export = parse_export("c.json", dump([conversation]))
    assert [m.text for m in export.conversations[0].messages] == ["plain", "part one\n\npart two"]


def test_an_export_zip_is_read_through_its_conversations_json(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("user.json", "{}")
        archive.writestr(
            "conversations.json", json.dumps([claude_conversation("Zip", [("user", "hi")])])
        )
    path = tmp_path / "export.zip"
    path.write_bytes(buffer.getvalue())
    export = read_export(path)
    assert export.format == CLAUDE and export.conversations[0].messages[0].text == "hi"


def broken_chatgpt() -> list[Any]:
    good = chatgpt_conversation("Fine", [("user", "fine")])
    bad = chatgpt_conversation("Broken one", [("user", "a"), ("assistant", "b")])
    bad["mapping"][bad["current_node"]]["message"]["create_time"] = "yesterday"
    return [good, bad]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"not": "a list"}, "neither a ChatGPT nor a Claude export"),
        (
            broken_chatgpt(),
            "c.json: conversation 2 ('Broken one'), node 'Broken o-n2': "
            "create_time 'yesterday' is not a number of seconds",
        ),
        (
            [{**chatgpt_conversation("Lost", [("user", "x")]), "current_node": "nowhere"}],
            "c.json: conversation 1 ('Lost'): current_node 'nowhere' is not a node of its mapping",
        ),
        (
            [{**chatgpt_conversation("No map", [("user", "x")]), "mapping": []}],
            "conversation 1 ('No map'): mapping is not a JSON object",
        ),
        (
            [
                claude_conversation("Who", [("user", "x")])
                | {"chat_messages": [{"sender": "robot"}]}
            ],
            "c.json: conversation 1 ('Who'), message 1: sender 'robot' is neither 'human' nor "
            "'assistant'",
        ),
        (
            [{k: v for k, v in claude_conversation("Undated", []).items() if k != "created_at"}],
            "conversation 1 ('Undated'): created_at is missing",
        ),
    ],
)
def test_bad_exports_are_one_error_naming_the_file_and_the_place(data, message):
    with pytest.raises(InputError) as caught:
        parse_export("c.json", dump(data))
    assert message in str(caught.value)


def test_a_parent_loop_is_refused_not_followed_forever():
    conversation = chatgpt_conversation("Loop", [("user", "a"), ("assistant", "b")])
    conversation["mapping"]["sys"]["parent"] = conversation["current_node"]
    with pytest.raises(InputError, match="parents form a loop"):
        parse_export("c.json", dump([conversation]))


def test_a_lone_surrogate_is_refused_at_its_place():
    conversation = claude_conversation("Odd", [("user", "x")])
    raw = json.dumps([conversation]).replace('"text": "x"', '"text": "\\ud800"').encode()
    with pytest.raises(InputError, match=r"message 1: the text holds a lone UTF-16 surrogate"):
        parse_export("c.json", raw)


def test_the_wrong_format_is_named(tmp_path):
    with pytest.raises(InputError, match="is a claude export, not a chatgpt one"):
        read_export(write_claude(tmp_path / "c.json"), CHATGPT)


def test_missing_file_and_invalid_json_are_clear(tmp_path):
    with pytest.raises(NotFoundError, match="does not exist"):
        read_export(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json is not valid JSON"):
        read_export(bad)


def test_a_zip_without_conversations_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("chat.html", "<html></html>")
    path = tmp_path / "export.zip"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(InputError, match=r"export\.zip holds no conversations\.json"):
        read_export(path)
