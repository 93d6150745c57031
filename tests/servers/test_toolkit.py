"""The servers' one toolkit: its validator agrees with JSON Schema, its error line names the
field and never the value, and a bug reaches the agent as one line without its message."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from affidavit.core.errors import UsageError
from affidavit.servers import packs
from affidavit.servers.dev import server as dev_server
from affidavit.servers.dev import tools as dev_tools
from affidavit.servers.memory.catalogue import catalogue
from affidavit.servers.toolkit import ToolSpec, check_arguments, crashed, input_object

SPECS: list[ToolSpec[Any]] = [
    *catalogue(),
    packs.SEARCH,
    packs.GET,
    *dev_tools.TOOLS,
    dev_server.DRAFT,
]
WRONG = [None, True, 0, -1, 1.5, "", "x" * 3000, "bad id!", [], ["a", "a"], {}, {"k": 1}]


def _candidates(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Argument sets around ``schema``: nothing, each property given every wrong value, an
    unknown key, and a list property holding a broken item."""
    properties = schema.get("properties", {})
    base = {name: "x" for name in schema.get("required", [])}
    out = [{}, base, {**base, "unknown_key": 1}]
    for name, prop in properties.items():
        out += [{**base, name: value} for value in WRONG]
        if prop.get("type") == "array" and "properties" in prop.get("items", {}):
            out.append({**base, name: [{"text": 5, "nope": 1}]})
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_the_validator_accepts_and_refuses_what_json_schema_does(spec: ToolSpec[Any]) -> None:
    reference = Draft202012Validator(spec.input_schema)
    for arguments in _candidates(spec.input_schema):
        expected = reference.is_valid(arguments)
        try:
            check_arguments(spec, arguments)
        except UsageError as exc:
            assert not expected, (arguments, str(exc))
            assert "\n" not in str(exc)
        else:
            assert expected, arguments


def test_a_pattern_end_is_the_end_of_the_text() -> None:
    # Python's $ also matches before a final newline; JSON Schema's does not.
    spec = ToolSpec(
        "t",
        None,
        "",
        input_object({"id": {"type": "string", "pattern": "^[a-z]+$"}}),
        None,
        handler=None,
        read_only=True,
    )
    check_arguments(spec, {"id": "abc"})
    with pytest.raises(UsageError, match="id has the wrong format"):
        check_arguments(spec, {"id": "abc\n"})


def test_any_of_takes_either_alternative_and_names_them_all() -> None:
    search = next(s for s in catalogue() if s.name == "memory_search")
    for since in ("2026-01-02", 1_700_000_000, 1_700_000_000.5, 0):  # decimals: ADR 199
        check_arguments(search, {"query": "q", "since": since})
    for since in ("yesterday", -5, -1.5, True, None, 10**12):
        with pytest.raises(UsageError) as error:
            check_arguments(search, {"query": "q", "since": since})
        assert str(error.value).startswith(
            "since must be a date YYYY-MM-DD or a unix time in seconds"
        ), since
        assert str(since) not in str(error.value)  # the value is never echoed


def test_the_error_names_the_field_and_never_echoes_the_value() -> None:
    store_many = next(s for s in catalogue() if s.name == "memory_store_many")
    secret = "correct horse battery staple"
    with pytest.raises(UsageError) as error:
        check_arguments(store_many, {"facts": [{"text": "ok"}, {"text": 7, "source": secret}]})
    assert str(error.value).startswith("facts[1].text must be of type string")
    with pytest.raises(UsageError) as error:
        check_arguments(store_many, {"facts": [{"text": "ok", secret: 1}]})
    assert "facts[0]" in str(error.value) and "unknown argument" in str(error.value)


def test_a_keyword_the_validator_does_not_know_is_refused_when_the_tool_is_made() -> None:
    with pytest.raises(ValueError, match="does not know"):
        ToolSpec(
            "t",
            None,
            "",
            {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
            None,
            handler=None,
            read_only=True,
        )


def test_a_bug_is_one_line_without_its_message(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AFFIDAVIT_DEBUG", raising=False)
    bug = KeyError("sk-live-secret-value")
    with caplog.at_level(logging.ERROR):
        result = crashed("memory_search", bug)
    text = result.content[0].text
    assert result.is_error and "\n" not in text
    assert text.startswith("affidavit: internal error in memory_search (KeyError)")
    assert "sk-live" not in text and all("sk-live" not in r.getMessage() for r in caplog.records)
    assert all(r.exc_info is None for r in caplog.records)

    caplog.clear()
    monkeypatch.setenv("AFFIDAVIT_DEBUG", "1")
    with caplog.at_level(logging.ERROR):
        crashed("memory_search", bug)
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [bug]  # full detail, logged
