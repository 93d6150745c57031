"""The memory section of ``affidavit demo``: two agents share one encrypted vault over MCP.

Everything is real: a new vault in the demo's temporary directory (default Argon2id cost),
unlocked once by a session, two ``affidavit serve`` child processes for two callers, driven by
the official MCP client over stdio. One agent stores, the other finds it on its next search;
a bad batch is refused whole; the vault is locked at the end, and a locked vault answers with
the advice to unlock. Each step checks its own outcome and raises if it does not hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from affidavit.cli.output import stdout
from affidavit.core.errors import AffidavitError, IntegrityError

FACTS = (
    "Deploys of the Larkspur app go out on Tuesdays after 14:00 UTC.",
    "Rosa approves every Larkspur database migration before it runs.",
    "The Larkspur staging API listens on port 8443.",
)


def _step(text: str) -> None:
    stdout.print(f"[bold cyan]>[/] {text}")


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise IntegrityError(f"demo check failed: {what}")


def _server(caller: str, vault: Path) -> Any:
    from mcp import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k != "AFFIDAVIT_PASSPHRASE"}
    env["AFFIDAVIT_VAULT"] = str(vault)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "affidavit", "serve", "--caller", caller], env=env
    )


def _text(result: Any) -> str:
    """The first text block of a tool result."""
    return str(getattr(result.content[0], "text", ""))


def _body(result: Any) -> dict[str, Any]:
    if result.is_error:
        raise AffidavitError(f"demo tool call failed: {_text(result)}")
    return dict(result.structured_content)


async def _agents(vault: Path) -> None:
    from mcp import Client

    from affidavit.servers.memory.catalogue import catalogue

    async with contextlib.AsyncExitStack() as stack:
        planner = await stack.enter_async_context(Client(_server("planner", vault)))
        reviewer = await stack.enter_async_context(Client(_server("reviewer", vault)))
        listed = {tool.name for tool in (await planner.list_tools()).tools}
        # memory_unlock stays unlisted until the user allows it (`affidavit unlock-tool`)
        offered = {spec.name for spec in catalogue()} - {"memory_unlock"}
        _check(listed == offered, f"the server lists {sorted(listed)}, not {sorted(offered)}")
        _step(f"two MCP servers up (callers 'planner' and 'reviewer'), {len(listed)} tools each")

        refused = await planner.call_tool(
            "memory_store_many",
            {"source": "demo", "facts": [{"text": FACTS[0]}, {"text": "- a list\n- of things"}]},
        )
        _check(refused.is_error and "facts[1]" in _text(refused), "bad batch refused")
        _step(f"a batch with a bulleted entry is refused whole: {_text(refused)}")

        stored = _body(
            await planner.call_tool(
                "memory_store_many",
                {"source": "planning meeting", "facts": [{"text": t} for t in FACTS]},
            )
        )
        _check(all(r["stored"] for r in stored["results"]), "all three stored")
        _step("planner stored 3 memories (one claim each, with a source) in namespace 'planner'")

        found = _body(
            await reviewer.call_tool(
                "memory_search", {"query": "who approves database migrations?"}
            )
        )
        hits = found["results"]
        _check(bool(hits) and hits[0]["text"] == FACTS[1], "reviewer finds the planner's memory")
        table = Table("text", "source", "namespace", "score", box=None)
        for hit in hits:
            table.add_row(escape(hit["text"]), hit["source"], hit["namespace"], str(hit["score"]))
        _step("reviewer searches 'who approves database migrations?' and finds it at once:")
        stdout.print(table)
        stdout.print(f"  [dim]notice: {escape(found['notice'])}[/]")

        denied = await reviewer.call_tool("memory_forget", {"id": hits[0]["id"]})
        _check(denied.is_error, "reviewer may not delete the planner's memory")
        _step(f"reviewer cannot delete it (read-only there): {_text(denied)}")

        locked = _body(await planner.call_tool("memory_lock", {}))
        _check(locked == {"locked": True, "failures": []}, "panic lock")
        after = await reviewer.call_tool("memory_search", {"query": "deploy day"})
        _check(after.is_error and "affidavit unlock" in _text(after), "locked")
        _step(f"planner panic-locks the vault; reviewer now gets: {_text(after)}")
        status = _body(await reviewer.call_tool("memory_status", {}))
        stdout.print(f"  [dim]memory_status: {escape(json.dumps(status))}[/]")


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The innermost error of a task-group failure (an AffidavitError when there is one)."""
    for exc in group.exceptions:
        inner = _first_error(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if isinstance(inner, AffidavitError):
            return inner
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first


def run(workdir: Path) -> None:
    """Create a vault in ``workdir``, share it between two MCP agents, then lock it."""
    from affidavit.vault import Vault, session

    vault_dir = workdir / "vault"
    with Vault.create(vault_dir, secrets.token_urlsafe(24)) as vault:
        vault.start_session()
    _step(f"created an encrypted vault in {vault_dir.name}/ and unlocked it for this session")
    try:
        asyncio.run(_agents(vault_dir))
    except BaseExceptionGroup as group:  # the MCP client's task groups wrap what went wrong
        raise _first_error(group) from None
    finally:
        session.clear(vault_dir)
    leaked = [p for p in vault_dir.rglob("*") if p.is_file() and b"Larkspur" in p.read_bytes()]
    _check(not leaked, "no plaintext in the vault's files")
    _step("no vault file contains the word 'Larkspur': everything on disk is sealed")
