"""wrap/unwrap on the remaining shapes: VS Code JSONC, Zed's nested form, Continue's list,
opencode's one-list command."""

from __future__ import annotations

import json

import yaml

from affidavit.integrate import wrapping
from affidavit.integrate.clients import BY_KEY
from affidavit.integrate.jsonc import parse

VSCODE = """{
  // servers for this machine
  "inputs": [{"id": "tok", "type": "promptString", "password": true}],
  "servers": {
    "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${workspaceFolder}"],
           "env": {"TOKEN": "${input:tok}"}},
    "web": {"type": "http", "url": "https://example.invalid/mcp"},
  },
}
"""
ZED = """{
  "context_servers": {
    "old": {"command": {"path": "uvx", "args": ["mcp-server-time"], "env": {}}},
    "ext": {"source": "extension", "settings": {}}
  }
}
"""
CONTINUE = """name: my assistant
version: 0.0.1
# servers
mcpServers:
  - name: sqlite
    command: uvx
    args: [mcp-server-sqlite, --db-path, /tmp/x.db]
  - name: remote
    type: streamable-http
    url: https://example.invalid/mcp
"""
OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "time": {"type": "local", "command": ["uvx", "mcp-server-time"], "enabled": true},
    "docs": {"type": "remote", "url": "https://example.invalid/mcp", "enabled": true}
  }
}
"""


def _setup(fake_home, key, text):
    path = BY_KEY[key].config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_vscode_jsonc_keeps_comments_inputs_and_variables(fake_home):
    path = _setup(fake_home, "vscode", VSCODE)
    result = wrapping.wrap(BY_KEY["vscode"])
    assert {d.server: d.action for d in result.decisions} == {"fs": "wrap", "web": "skip"}
    text = path.read_text()
    assert "// servers for this machine" in text and '"inputs"' in text
    fs = parse(text).value["servers"]["fs"]
    assert fs["args"][:3] == ["proxy", "--receipts", "--"]  # a ${variable} is no root
    assert fs["args"][3:] == ["npx", "-y", "server-fs", "${workspaceFolder}"]
    assert fs["env"] == {"TOKEN": "${input:tok}"}
    wrapping.unwrap(BY_KEY["vscode"])
    assert path.read_text() == VSCODE


def test_zed_nested_command_is_wrapped_inside_and_extensions_skipped(fake_home):
    path = _setup(fake_home, "zed", ZED)
    result = wrapping.wrap(BY_KEY["zed"])
    assert {d.server: d.action for d in result.decisions} == {"old": "wrap", "ext": "skip"}
    old = json.loads(path.read_text())["context_servers"]["old"]["command"]
    assert old["args"][-3:] == ["--", "uvx", "mcp-server-time"] and old["env"] == {}
    wrapping.unwrap(BY_KEY["zed"])
    assert path.read_text() == ZED


def test_continue_list_entries(fake_home):
    path = _setup(fake_home, "continue", CONTINUE)
    wrapping.wrap(BY_KEY["continue"])
    servers = {s["name"]: s for s in yaml.safe_load(path.read_text())["mcpServers"]}
    assert servers["sqlite"]["args"][:4] == ["proxy", "--receipts", "--", "uvx"]
    assert servers["remote"] == {
        "name": "remote",
        "type": "streamable-http",
        "url": "https://example.invalid/mcp",
    }
    assert "# servers" in path.read_text()
    assert wrapping.wrap(BY_KEY["continue"]).written is False  # idempotent
    wrapping.unwrap(BY_KEY["continue"])
    assert path.read_text() == CONTINUE


def test_opencode_command_list_is_wrapped_as_one_list(fake_home):
    path = _setup(fake_home, "opencode", OPENCODE)
    result = wrapping.wrap(BY_KEY["opencode"])
    assert {d.server: d.action for d in result.decisions} == {"time": "wrap", "docs": "skip"}
    time = json.loads(path.read_text())["mcp"]["time"]
    assert "args" not in time and time["type"] == "local" and time["enabled"] is True
    assert time["command"][-5:] == ["proxy", "--receipts", "--", "uvx", "mcp-server-time"]
    assert wrapping.wrap(BY_KEY["opencode"]).written is False  # idempotent
    wrapping.unwrap(BY_KEY["opencode"])
    assert path.read_text() == OPENCODE
