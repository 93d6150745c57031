"""``pack serve`` through the official MCP client over stdio: contracts, trust, refusals."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from affidavit.core.errors import AuthError, IntegrityError, NotFoundError, UsageError
from affidavit.packs import format as fmt
from affidavit.servers.packs import CHANGED, GET_TOOL, NOTICE, SEARCH_TOOL
from tests.packs._build_fixtures import build_sample, seal_and_sign, tool_body, tool_error
from tests.packs.conftest import SshKey, make_record, pack_json, trusted_keys_file, write_pack
from tests.support import PYTHON, cli_env, handshake, mcp_client, run_cli

REFERENCE_GET_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string", "pattern": "^M-[A-Za-z0-9_-]{1,127}$"}},
    "required": ["id"],
    "additionalProperties": False,
}


def _session(args: list[str], home: Path, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with mcp_client(["pack", "serve", *args], home) as client:
            return await body(client)

    return anyio.run(run)


@pytest.fixture(scope="module")
def sample_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample(tmp_path_factory.mktemp("serve") / "pack")


def test_unsigned_sample_pack_contracts(sample_pack: Path, home: Path) -> None:
    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": (await client.list_tools()).tools}
        out["search"] = await client.call_tool(SEARCH_TOOL, {"query": "Ladders"})
        out["filtered"] = await client.call_tool(
            SEARCH_TOOL, {"query": "ladder", "since": "2026-05-01", "speaker": "tamsin"}
        )
        out["until"] = await client.call_tool(SEARCH_TOOL, {"query": "code", "until": "2026-04-03"})
        out["get"] = await client.call_tool(GET_TOOL, {"id": "M-repair-1"})
        out["missing"] = await client.call_tool(GET_TOOL, {"id": "M-nothing-here"})
        bad = [
            (SEARCH_TOOL, {}),
            (SEARCH_TOOL, {"query": 5}),
            (SEARCH_TOOL, {"query": ""}),
            (SEARCH_TOOL, {"query": "x" * 513}),
            (SEARCH_TOOL, {"query": "ladder", "limit": 3}),
            (SEARCH_TOOL, {"query": "ladder", "since": "last tuesday"}),
            (SEARCH_TOOL, {"query": "ladder", "until": "2026-02-30"}),
            (SEARCH_TOOL, {"query": "?!"}),
            (GET_TOOL, {"id": "garden-1"}),
            (GET_TOOL, {"id": "M-repair-1\n"}),
            (GET_TOOL, {"id": "M-ok", "extra": True}),
            (GET_TOOL, {}),
        ]
        out["bad"] = [await client.call_tool(name, args) for name, args in bad]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("verified_memory_delete", {"id": "M-repair-1"})
        out["unknown"] = unknown.value
        out["after"] = await client.call_tool(GET_TOOL, {"id": "M-fees-1"})
        return out

    out = _session([f"--pack={sample_pack}"], home, body)
    tools = {tool.name: tool for tool in out["tools"]}
    assert sorted(tools) == [GET_TOOL, SEARCH_TOOL]
    assert tools[GET_TOOL].input_schema == REFERENCE_GET_SCHEMA
    search_schema = tools[SEARCH_TOOL].input_schema
    assert search_schema["properties"]["query"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 512,
    }
    assert search_schema["required"] == ["query"]
    assert search_schema["additionalProperties"] is False
    assert set(search_schema["properties"]) == {"query", "speaker", "category", "since", "until"}
    for tool in tools.values():
        hints = tool.annotations
        assert (hints.read_only_hint, hints.destructive_hint) == (True, False)
        assert (hints.idempotent_hint, hints.open_world_hint) == (True, False)

    found = tool_body(out["search"])
    assert set(found) == {"matches", "matched", "verification", "notice"}
    assert found["matched"] == 3
    assert found["matches"][0]["record_id"] == "M-loans-2"
    assert found["notice"] == NOTICE
    assert found["verification"]["signature"] == {
        "status": "unsigned",
        "signer": None,
        "fingerprint": None,
        "pinned": False,
    }
    assert found["verification"]["freshness"]["status"] == "unknown"
    assert found["verification"]["freshness"]["authenticated"] is False
    assert [m["record_id"] for m in tool_body(out["filtered"])["matches"]] == [
        "M-loans-2",
        "M-joke-1",
    ]
    assert [m["record_id"] for m in tool_body(out["until"])["matches"]] == ["M-library-3"]

    got = tool_body(out["get"])
    assert set(got) == {"found", "record", "verification", "notice"}
    assert got["found"] is True and got["record"]["record_id"] == "M-repair-1"
    assert (
        got["record"]["evidence"][1]["quote"]
        == "The café next door lends us its awning when it rains."
    )
    missing = tool_body(out["missing"])
    assert (missing["found"], missing["record"]) == (False, None)
    assert missing["notice"] == NOTICE and "verification" in missing

    messages = [tool_error(result) for result in out["bad"]]
    assert messages[0] == "affidavit: missing required argument 'query'; pass 'query'"
    assert "query must be of type string" in messages[1]  # the servers' one error line
    assert "query is empty or too short" in messages[2]
    assert "longer than 512" in messages[3]
    assert "unknown argument 'limit'" in messages[4]
    assert "argument 'since' is not a UTC day or time" in messages[5]
    assert "argument 'until' is not a UTC day or time" in messages[6]
    assert "query has no words" in messages[7]
    assert "id has the wrong format" in messages[8]
    assert "id has the wrong format" in messages[9]  # no trailing newline either
    assert "unknown argument 'extra'" in messages[10]
    assert "missing required argument 'id'" in messages[11]
    assert "Unknown tool: verified_memory_delete" in str(out["unknown"])
    assert tool_body(out["after"])["found"] is True  # errors do not stop the server


@pytest.fixture
def signed_pack(tmp_path: Path, ssh_key: SshKey) -> Path:
    records = [
        make_record(1),
        make_record(2, supersedes="M-garden-1", approval={"by": "Rowan", "on": "2026-03-03"}),
    ]
    pack = write_pack(tmp_path / "signed", records)
    meta = pack_json("2026-01-01T00:00:00Z", "2099-01-01T00:00:00Z", sequence=4)
    return seal_and_sign(pack, ssh_key, meta)


def test_signed_pinned_strict_pack_reports_signer_freshness_and_keeps_metadata(
    signed_pack: Path, ssh_key: SshKey, tmp_path: Path, home: Path
) -> None:
    keys = trusted_keys_file(tmp_path / "trusted_keys", ("rowan", ssh_key))

    async def body(client: Client) -> Any:
        return await client.call_tool(GET_TOOL, {"id": "M-garden-2"})

    args = [f"--pack={signed_pack}", "--trusted-keys", str(keys), "--strict", "--min-sequence=4"]
    args.append(f"--trusted-fingerprint={ssh_key.fingerprint}")
    got = tool_body(_session(args, home, body))
    assert got["record"]["supersedes"] == "M-garden-1"
    assert got["record"]["approval"] == {"by": "Rowan", "on": "2026-03-03"}
    assert got["verification"] == {
        "signature": {
            "status": "verified",
            "signer": "rowan",  # the name comes from the trusted keys file, never the pack
            "fingerprint": ssh_key.fingerprint,
            "pinned": True,
        },
        "freshness": {
            "status": "fresh",
            "created_utc": "2026-01-01T00:00:00Z",
            "expires_utc": "2099-01-01T00:00:00Z",
            "sequence": 4,
            "authenticated": True,
        },
    }


def _start(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(["pack", "serve", *args], home, input="")


def test_refused_packs_never_start(sample_pack: Path, tmp_path: Path, home: Path) -> None:
    tampered = build_sample(tmp_path / "tampered")
    records = tampered / fmt.RECORDS
    records.write_bytes(records.read_bytes().replace(b"9016", b"1234"))
    cases = [
        ([f"--pack={tampered}"], IntegrityError.exit_code, "pack refused: "),
        (
            [
                f"--pack={sample_pack}",
                "--require-signature",
                "--trusted-fingerprint=SHA256:" + "A" * 43,
            ],
            AuthError.exit_code,
            "pack is unsigned, but a signer fingerprint is pinned",
        ),
        (["--pack=relative/pack"], UsageError.exit_code, "--pack relative/pack is a relative path"),
        ([f"--pack={sample_pack}", "--bogus"], UsageError.exit_code, "unknown argument '--bogus'"),
        (
            [f"--pack={sample_pack}", f"--pack={sample_pack}"],
            UsageError.exit_code,
            "--pack is given twice",
        ),
        ([], UsageError.exit_code, "--pack is required"),
        ([f"--pack={tmp_path / 'absent'}"], NotFoundError.exit_code, "--pack "),  # issue 25
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:  # independent processes: start together
        runs = list(pool.map(lambda case: _start(case[0], home), cases))
    for (args, code, message), done in zip(cases, runs, strict=True):
        assert done.returncode == code, (args, done.stderr)
        assert done.stdout == "", args  # not one byte of protocol from a refused server
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("affidavit: error: "), (args, lines)
        assert message in lines[0], (args, lines)


def test_stdout_carries_protocol_only_and_warnings_go_to_stderr(tmp_path: Path, home: Path) -> None:
    stale = write_pack(
        tmp_path / "stale", pack_json=pack_json("2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z")
    )
    requests = [
        *handshake("raw-test"),
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": SEARCH_TOOL, "arguments": {"query": "seedlings"}},
        },
    ]
    process = subprocess.Popen(
        [PYTHON, "-m", "affidavit", "pack", "serve", f"--pack={stale}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(home),
        text=True,
    )
    responses = []
    assert process.stdin is not None and process.stdout is not None
    for request in requests:
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        if "id" in request:
            responses.append(json.loads(process.stdout.readline()))
    rest, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert rest == ""
    assert [r["id"] for r in responses] == [1, 2] and all(r["jsonrpc"] == "2.0" for r in responses)
    result = responses[1]["result"]
    assert result["structuredContent"]["verification"]["freshness"]["status"] == "stale"
    assert "pack expired at 2021-01-01T00:00:00Z; serving it as stale" in stderr
    assert CHANGED not in stderr
