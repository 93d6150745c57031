"""``affidavit bundle``: the .mcpb a user opens in Claude Desktop, built and started for real.

The bundle is built once by the real command, unzipped, and its server entry started the
way the host does it (variables substituted from the manifest) with ``python -S``: no
site-packages at all, so the server can only run on what the bundle carries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

import affidavit
from tests.support import NODE_TOOLS, PYTHON, run_cli
from tests.vault.conftest import create_test_vault

USER_OPTION = {
    "type": "object",
    "required": ["type", "title", "description"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["string", "number", "boolean", "directory", "file"]},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "required": {"type": "boolean"},
        "default": {"type": ["string", "number", "boolean", "array"]},
        "multiple": {"type": "boolean"},
        "sensitive": {"type": "boolean"},
    },
}
MANIFEST_SHAPE = {
    "type": "object",
    "required": ["manifest_version", "name", "version", "description", "author", "server"],
    "properties": {
        "manifest_version": {"const": "0.3"},
        "author": {"type": "object", "required": ["name"]},
        "server": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type", "entry_point", "mcp_config"],
            "properties": {
                "type": {"const": "python"},
                "entry_point": {"type": "string"},
                "mcp_config": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["command"],
                    "properties": {
                        "command": {"type": "string"},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
            },
        },
        "user_config": {"type": "object", "additionalProperties": USER_OPTION},
        "compatibility": {
            "type": "object",
            "properties": {"platforms": {"items": {"enum": ["darwin", "win32", "linux"]}}},
        },
    },
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    out = tmp_path_factory.mktemp("out") / "affidavit.mcpb"
    done = run_cli(["bundle", "--out", str(out)], home, timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{out} (") and "MB" in done.stdout
    return out


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("installed")
    with zipfile.ZipFile(built) as archive:
        archive.extractall(folder)
    return folder


@pytest.fixture(scope="module")
def manifest(unpacked) -> dict:
    return json.loads((unpacked / "manifest.json").read_text())


def test_the_manifest_has_the_mcpb_shape_and_a_settings_form(manifest, unpacked):
    jsonschema.validate(manifest, MANIFEST_SHAPE)
    assert manifest["version"] == affidavit.__version__
    assert (unpacked / manifest["server"]["entry_point"]).is_file()
    form = manifest["user_config"]
    assert form["vault"]["type"] == "directory" and form["caller"]["type"] == "string"
    assert not any(option.get("sensitive") for option in form.values()), "no secret asked"
    args = manifest["server"]["mcp_config"]["args"]
    assert "${user_config.vault}" in args and "${user_config.caller}" in args
    platform = "linux" if sys.platform.startswith("linux") else sys.platform
    assert manifest["compatibility"]["platforms"] == [platform]


def assert_mcpb_validates(manifest_path: Path) -> None:
    """``mcpb validate`` (@anthropic-ai/mcpb, installed by .ci/run with the other Node peers)
    checks a manifest against the spec's own schema."""
    mcpb = NODE_TOOLS / ".bin" / "mcpb"
    if not mcpb.exists():
        pytest.skip(f"the official mcpb CLI is not installed at {mcpb} (.ci/run installs it)")
    done = subprocess.run(
        [str(mcpb), "validate", str(manifest_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "validation passes" in done.stdout, done.stdout + done.stderr


def test_the_official_mcpb_tool_accepts_the_manifest(unpacked):
    assert_mcpb_validates(unpacked / "manifest.json")


def test_the_bundle_carries_the_runtime_and_nothing_of_the_dev_tools(built):
    with zipfile.ZipFile(built) as archive:
        names = archive.namelist()
    tops = {n.split("/")[2] for n in names if n.startswith("server/lib/")}
    assert {"affidavit", "mcp", "onnxruntime", "nacl"} <= tops
    assert "server/lib/affidavit/recall/model/model.onnx" in names
    assert not tops & {"pytest", "mypy", "ruff", "playwright", "vulture"}
    assert not any("__pycache__" in n or n.endswith((".pyc", "direct_url.json")) for n in names)
    assert any(n.endswith("entry_points.txt") and "/affidavit-" in n for n in names)


def _host_command(manifest: dict, unpacked: Path, settings: dict[str, str]) -> list[str]:
    """The server command line as the host builds it: variables substituted, python -S."""
    config = manifest["server"]["mcp_config"]

    def fill(value: str) -> str:
        value = value.replace("${__dirname}", str(unpacked))
        for key, given in settings.items():
            value = value.replace(f"${{user_config.{key}}}", given)
        return value

    assert config["command"] == "python"
    return [PYTHON, "-S", *(fill(a) for a in config["args"])]


def _status(command: list[str], home: Path) -> tuple[list[str], dict]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "PYTHONNOUSERSITE": "1"}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def run() -> tuple[list[str], dict]:
        async with Client(params) as client:  # type: ignore[arg-type]
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            status = (await client.call_tool("memory_status", {})).structured_content
            return tools, dict(status or {})

    return anyio.run(run)


def test_the_server_entry_starts_from_the_bundle_alone(manifest, unpacked, home, tmp_path):
    vault = tmp_path / "desk vault"
    create_test_vault(vault).close()
    command = _host_command(manifest, unpacked, {"vault": str(vault), "caller": "desk"})
    tools, status = _status(command, home)
    assert "memory_status" in tools and "memory_search" in tools
    assert status["vault"] == str(vault) and status["caller"] == "desk"
    assert status["locked"] is True


def test_an_empty_setting_falls_back_to_the_default(manifest, unpacked, home):
    create_test_vault(home / ".affidavit" / "vault").close()
    command = _host_command(manifest, unpacked, {"vault": "", "caller": ""})
    _, status = _status(command, home)
    assert status["vault"] == str(home / ".affidavit" / "vault")
    assert status["caller"] == "user"


def test_the_model_inside_passes_its_sha256_check(unpacked):
    lib = unpacked / "server" / "lib"
    code = (
        f"import sys; sys.path.insert(0, {str(lib)!r}); "
        "from affidavit.recall.embedder import availability; print(availability()['semantic'])"
    )
    found = subprocess.run([PYTHON, "-S", "-c", code], capture_output=True, text=True, check=False)
    assert found.stdout.strip() == "True", found.stderr


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_an_output_that_cannot_be_written_is_one_line_and_leaves_nothing(home, tmp_path, where):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = tmp_path if where == "folder" else blocker / "a.mcpb"
    done = run_cli(["bundle", "--out", str(out)], home)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "--out" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "home"]
