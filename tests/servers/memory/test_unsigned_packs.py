"""A pack no trusted key signed: refused at install without ``--allow-unsigned``, and once
allowed, every hit from it says so in the CLI table, ``search --json`` and ``memory_search``.

Real processes throughout: the CLI, and the memory server through the official MCP client.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from affidavit.packs import sign_pack
from tests.packs._build_fixtures import build_sample
from tests.packs.conftest import make_key
from tests.servers.memory.conftest import LIGHT, body, run
from tests.support import mcp_client, run_cli

MARK = "no key this host trusts signed"


@pytest.fixture
def packs(tmp_path: Path) -> dict[str, tuple[Path, list[str]]]:
    """The sample pack three ways, each with the trust flags it is installed under."""
    key = make_key(tmp_path / "keys")
    expires = datetime.now(UTC) + timedelta(days=30)
    unsigned = build_sample(tmp_path / "unsigned")
    untrusted = tmp_path / "untrusted"
    sign_pack(build_sample(tmp_path / "draft-a"), key.private, expires, untrusted, sequence=1)
    pinned = tmp_path / "pinned"
    sign_pack(build_sample(tmp_path / "draft-b"), key.private, expires, pinned, sequence=1)
    return {
        "unsigned": (unsigned, []),
        "untrusted": (untrusted, []),
        "pinned": (pinned, [f"--trusted-fingerprint={key.fingerprint}"]),
    }


def _installed(home: Path, env: dict[str, str]) -> list[object]:
    status = run_cli(["status", "--json"], home, env=env)
    assert status.returncode == 0, status.stderr
    return json.loads(status.stdout).get("packs", [])


@pytest.mark.parametrize("kind", ["unsigned", "untrusted"])
def test_a_pack_no_trusted_key_signed_is_refused_without_the_flag(setup, packs, kind: str) -> None:
    env = setup.env(**LIGHT)
    pack, trust = packs[kind]
    refused = run_cli(["pack", "install", str(pack), *trust], setup.home, env=env)
    assert refused.returncode == 6, refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("affidavit: error: pack refused: "), lines
    assert kind in lines[0] and MARK in lines[0] and "--allow-unsigned" in lines[0]
    assert _installed(setup.home, env) == []  # nothing sealed


def test_an_allowed_unsigned_pack_is_marked_on_every_front_end(setup, packs) -> None:
    env = setup.env(**LIGHT)
    for kind, extra in (("unsigned", ["--allow-unsigned"]), ("pinned", [])):
        pack, trust = packs[kind]
        args = ["pack", "install", str(pack), *trust, *extra, "--name", kind]
        done = run_cli(args, setup.home, env=env)
        assert done.returncode == 0, done.stderr
        assert ("marked" in done.stderr) == (kind == "unsigned"), done.stderr
    found = run_cli(["search", "key box code", "--json"], setup.home, env=env)
    assert found.returncode == 0, found.stderr
    hits = {h["namespace"]: h for h in json.loads(found.stdout)["results"]}
    assert MARK in hits["pack:unsigned"]["warning"]
    assert hits["pack:unsigned"]["pack"]["signature"] == "unsigned"
    assert "warning" not in hits["pack:pinned"]
    table = run_cli(["search", "key box code"], setup.home, env={**env, "COLUMNS": "400"})
    assert table.returncode == 0 and MARK in table.stdout, table.stdout
    marked = [line for line in table.stdout.splitlines() if MARK in line]
    assert all("pack:unsigned" in line for line in marked), marked

    async def scenario() -> None:
        async with mcp_client(["serve"], setup.home, env=env) as client:
            result = body(await client.call_tool("memory_search", {"query": "key box code"}))
            by_ns = {h["namespace"]: h for h in result["results"]}
            assert MARK in by_ns["pack:unsigned"]["warning"]
            assert "warning" not in by_ns["pack:pinned"]
            one = body(await client.call_tool("memory_get", {"id": by_ns["pack:unsigned"]["id"]}))
            assert MARK in one["memory"]["warning"]

    run(scenario)
