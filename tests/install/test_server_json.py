"""``server.json`` for the MCP Registry: the 2025-12-11 schema's shape, and one name everywhere.

The registry's JSON Schema is not vendored; the rules it and the official registry enforce for
a PyPI package are written out here (name pattern, 100-character description, exact versions,
stdio transport, pypi.org only) so a drift in our file fails a test.
"""

from __future__ import annotations

import json
import re
import tomllib

import jsonschema
import pytest

import affidavit
from tests.support import REPO_ROOT

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
NAME = r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"
EXACT = {"type": "string", "minLength": 1, "not": {"pattern": r"^(latest|[\^~><=].*|.*\.[x*].*)$"}}
ARGUMENT = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"enum": ["positional", "named"]},
        "name": {"type": "string", "pattern": "^-"},
        "value": {"type": "string"},
        "description": {"type": "string"},
        "format": {"enum": ["string", "number", "boolean", "filepath"]},
        "default": {"type": "string"},
        "isRequired": {"type": "boolean"},
        "isSecret": {"type": "boolean"},
    },
}
SHAPE = {
    "type": "object",
    "required": ["$schema", "name", "description", "version", "packages"],
    "properties": {
        "$schema": {"const": SCHEMA_URL},
        "name": {"type": "string", "pattern": NAME, "minLength": 3, "maxLength": 200},
        "title": {"type": "string", "maxLength": 100},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": EXACT,
        "packages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["registryType", "identifier", "version", "transport"],
                "properties": {
                    "registryType": {"const": "pypi"},
                    "registryBaseUrl": {"const": "https://pypi.org"},
                    "identifier": {"type": "string"},
                    "version": EXACT,
                    "runtimeHint": {"type": "string"},
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"const": "stdio"}},
                    },
                    "packageArguments": {"type": "array", "items": ARGUMENT},
                    "environmentVariables": {
                        "type": "array",
                        "items": {"type": "object", "required": ["name", "description"]},
                    },
                },
            },
        },
    },
}


@pytest.fixture(scope="module")
def server() -> dict:
    return json.loads((REPO_ROOT / "server.json").read_text())


def test_server_json_has_the_registry_shape(server):
    jsonschema.validate(server, SHAPE)


def test_the_shape_refuses_what_the_registry_refuses(server):
    for bad in ({"version": "latest"}, {"name": "affidavit"}, {"description": "x" * 101}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**server, **bad}, SHAPE)


def test_versions_and_package_name_match_the_project(server):
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert server["version"] == project["version"] == affidavit.__version__
    memory, pack = server["packages"]
    for package in (memory, pack):
        assert package["identifier"] == project["name"]
        assert package["version"] == project["version"]
    assert "affidavit" in project["scripts"]  # what uvx runs, with the subcommand after it
    assert memory["packageArguments"][0] == {"type": "positional", "value": "serve"}
    assert [a.get("value") for a in pack["packageArguments"][:2]] == ["pack", "serve"]


def test_the_pack_server_takes_exactly_the_flags_pack_serve_parses(server, tmp_path):
    """Each named argument of the pack package is one `pack serve` accepts (parsed by the
    command's own parser), and --pack is the one it cannot start without."""
    from affidavit.cli.pack_serve import parse_serve_args

    _, pack = server["packages"]
    named = [a for a in pack["packageArguments"] if a["type"] == "named"]
    assert [a["name"] for a in named if a.get("isRequired")] == ["--pack"]
    values = {"--pack": str(tmp_path), "--trusted-fingerprint": "SHA256:" + "A" * 43}
    values |= {"--min-sequence": "2", "--strict": "true"}
    pack_dir, trust = parse_serve_args([f"{a['name']}={values[a['name']]}" for a in named])
    assert pack_dir == tmp_path and trust.min_sequence == 2 and trust.strict


def test_no_secret_is_asked_for_in_the_client_config(server):
    """The vault is unlocked by ``affidavit unlock``; a passphrase in a client config would
    sit in plaintext next to every other server's settings."""
    for package in server["packages"]:
        for variable in package.get("environmentVariables", []):
            assert "PASSPHRASE" not in variable["name"] and not variable.get("isSecret")


def test_readme_and_image_name_the_same_server(server):
    """The registry proves ownership of a PyPI package by ``mcp-name: NAME`` in its README,
    and of an OCI image by the ``io.modelcontextprotocol.server.name`` label."""
    readme = (REPO_ROOT / "README.md").read_text()
    assert re.findall(r"mcp-name: (\S+)", readme) == [server["name"]]
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert f'io.modelcontextprotocol.server.name="{server["name"]}"' in dockerfile
