"""The official MCP Inspector CLI (Node) against ``affidavit serve``: list, strict checks, call.

Inspector 2.x has ``--strict`` (tool-schema portability problems in full on stderr, exit 6 on
an error); it is used whenever the installed Inspector offers it, and any problem it reports,
warnings included, fails the test. Inspector 0.15 has no such switch; with either, the strict
part is also done here on exactly what it printed: every input and output schema must be valid
JSON Schema 2020-12 with every input property described, and every call's
``structuredContent`` must validate against the tool's output schema. The vault is unlocked by
a session, so no passphrase appears in argv.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from jsonschema import Draft202012Validator

from affidavit.vault import Vault
from tests.servers.memory.conftest import LIGHT, OFFERED
from tests.support import INSPECTOR, inspector_cli, inspector_tool_call
from tests.vault.conftest import TEST_PASSPHRASE

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists(), reason=f"MCP Inspector not installed at {INSPECTOR} (.ci/run does)"
)


def _env(setup) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(setup.home)}  # inspector_cli puts Node first


def _has_strict(setup) -> bool:
    shown = inspector_cli(["--help"], _env(setup))
    return "--strict" in shown.stdout + shown.stderr


def _inspector(setup, *args: str) -> dict:
    server_env = {
        "AFFIDAVIT_VAULT": str(setup.path),
        "AFFIDAVIT_HOME": str(setup.home / ".affidavit"),
        "AFFIDAVIT_RUNTIME_DIR": str(setup.runtime),
        "AFFIDAVIT_ASSERT_OFFLINE": "1",
        **LIGHT,  # the protocol and schemas are under test here, not embeddings
    }
    flags = [f"-e{k}={v}" for k, v in server_env.items()]
    done = inspector_cli(
        [*flags, sys.executable, "-m", "affidavit", "serve", *args], _env(setup), timeout=180
    )
    assert done.returncode == 0, done.stderr + done.stdout
    if "--strict" in args:
        assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr
    data = json.loads(done.stdout)
    return data.get("result", data)  # Inspector 2.x with --format json wraps the result


def _described(schema: dict, where: str) -> None:
    for name, prop in schema.get("properties", {}).items():
        # a Compartment alias (ADR 137) takes either of two typed forms: each must be typed
        typed = prop.get("type") or all(alt.get("type") for alt in prop.get("anyOf", [{}]))
        assert prop.get("description") and typed, f"{where}.{name}"
        if "properties" in prop.get("items", {}):
            _described(prop["items"], f"{where}.{name}[]")


def test_inspector_lists_strictly_valid_tools_and_round_trips_a_call(setup):
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        v.start_session()

    modern = _has_strict(setup)
    fmt = ["--format", "json"] if modern else []
    strict = ["--strict"] if modern else []
    listed = _inspector(setup, "--method", "tools/list", *strict, *fmt)["tools"]
    assert {tool["name"] for tool in listed} == OFFERED  # memory_unlock is not offered yet
    schemas = {}
    for tool in listed:
        assert tool["description"] and tool["title"] and tool["annotations"]
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["inputSchema"]["type"] == "object"
        _described(tool["inputSchema"], tool["name"])
        schemas[tool["name"]] = Draft202012Validator(tool["outputSchema"])

    stored = _inspector(
        setup,
        *inspector_tool_call(
            "memory_store",
            text="The Inspector round trip stored this claim.",
            source="mcp inspector",
        ),
        *fmt,
    )
    assert stored["isError"] is False
    schemas["memory_store"].validate(stored["structuredContent"])
    assert stored["structuredContent"]["stored"] is True

    found = _inspector(
        setup, *inspector_tool_call("memory_search", query="inspector round trip"), *fmt
    )
    schemas["memory_search"].validate(found["structuredContent"])
    ids = [r["id"] for r in found["structuredContent"]["results"]]
    assert ids == [stored["structuredContent"]["id"]]
