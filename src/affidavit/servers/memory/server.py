"""``affidavit serve``: the memory vault as an MCP server over stdio (14 tools).

The MCP layer is thin on purpose: it lists the catalogue of :mod:`.catalogue`, holds each
call's arguments to the published input schema (:mod:`affidavit.servers.toolkit`: an error
names the exact field, e.g. ``facts[3].text``, and never echoes the value, which may be a
passphrase), runs the tool's handler in a worker thread (one at a time, so a slow self-test
never stalls pings or cancellation) and returns the result as JSON text plus the same object
as ``structuredContent``. A failure the user can act on is an ``isError`` result with one line
saying what to do; an unknown tool is a protocol error, and so is a tool the server does not
offer right now (``memory_unlock`` while the user has not allowed it: neither listed nor
distinguishable from a tool that does not exist).

Start-up stays lean: nothing but the MCP SDK is imported before the handshake. The vault is
opened and the embedding model loaded in a background thread once the client lists the tools
(after the handshake, so ``initialize`` is never delayed), or by the first call, whichever
comes first; calls wait for that warm-up instead of racing it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from affidavit import __version__
from affidavit.servers.memory.catalogue import INSTRUCTIONS, catalogue
from affidavit.servers.memory.handlers import MemoryTools
from affidavit.servers.toolkit import HiddenToolError, answer, check_arguments

SERVER_NAME = "affidavit-memory"


def build_server(tools: MemoryTools, max_chars: int = 200) -> Any:
    """The low-level MCP server over ``tools``."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    specs = {spec.name: spec for spec in catalogue(max_chars)}
    listing = [spec.listing() for spec in specs.values()]
    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        tools.warm_up_in_background()  # the handshake is done; tools/call comes next
        return types.ListToolsResult(tools=[tool for tool in listing if tools.offers(tool.name)])

    def unknown(name: str) -> MCPError:
        return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")

    def run(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        spec = specs[name]

        def call() -> dict[str, Any]:
            checked = check_arguments(spec, arguments)
            with tools.busy:
                return spec.handler(tools, checked)

        return answer(name, call)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in specs or not tools.offers(params.name):
            raise unknown(params.name)
        try:
            return await anyio.to_thread.run_sync(
                run, params.name, params.arguments, limiter=one_at_a_time
            )
        except HiddenToolError:
            raise unknown(params.name) from None

    return Server(
        SERVER_NAME,
        version=__version__,
        title="affidavit memory",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(caller: str, vault_path: Path | None = None) -> None:
    """Serve the memory tools for ``caller`` over stdio until the client disconnects."""
    tools = MemoryTools(caller, vault_path)
    server = build_server(tools)

    import anyio

    from affidavit.servers.stdio import stdio_transport

    async def main() -> None:
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        tools.close()
        sys.stderr.flush()
