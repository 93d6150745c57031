"""``affidavit serve``: the memory vault as an MCP server over stdio (the memory_* tools).

The MCP layer is thin on purpose: it lists the catalogue of :mod:`.catalogue`, holds each
call's arguments to the published input schema (:mod:`affidavit.servers.toolkit`: an error
names the exact field, e.g. ``facts[3].text``, and never echoes the value, which may be a
passphrase), runs the tool's handler in a worker thread (one at a time, so a slow self-test
never stalls pings or cancellation) and returns the result as JSON text plus the same object
as ``structuredContent``. A failure the user can act on is an ``isError`` result with one line
saying what to do; an unknown tool is a protocol error, and so is a tool the server does not
offer right now (``memory_unlock`` while the user has not allowed it: neither listed nor
distinguishable from a tool that does not exist).

Start-up stays lean (ADR 0110): :mod:`affidavit.servers.toolserver` answers the handshake,
``tools/list`` and ``tools/call`` without importing the MCP SDK, which serves the session
only when a message needs it (:func:`sdk_server` builds it; the HTTP transport uses the same
factory). The vault is opened and indexed and the embedding model loaded in background
threads from process start, while the client is still initialising; calls wait for that
warm-up instead of racing it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from affidavit import __version__
from affidavit.servers.memory.catalogue import INSTRUCTIONS, catalogue
from affidavit.servers.memory.handlers import MemoryTools
from affidavit.servers.toolkit import HiddenToolError, answer_wire, check_arguments
from affidavit.servers.toolserver import ToolServer, UnknownToolError, serve_stdio

SERVER_NAME = "affidavit-memory"
SERVER_TITLE = "affidavit memory"


def sdk_server(tools: MemoryTools, max_chars: int = 200) -> Any:
    """The MCP SDK's low-level ``Server`` over ``tools`` (one caller): what the stdio loop
    hands unusual sessions to, and what other transports (Streamable HTTP) serve."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    calls = Calls(tools, max_chars)
    listing = [types.Tool.model_validate(tool) for tool in calls.wire_listing]
    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        tools.warm_up_in_background()  # once: a transport that did not start it yet (HTTP)
        return types.ListToolsResult(tools=[tool for tool in listing if tools.offers(tool.name)])

    def run(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return types.CallToolResult.model_validate(calls.call(name, arguments))

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return await anyio.to_thread.run_sync(
                run, params.name, params.arguments, limiter=one_at_a_time
            )
        except UnknownToolError:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}"
            ) from None

    return Server(
        SERVER_NAME,
        version=__version__,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class Calls:
    """The tools of one :class:`MemoryTools` as wire JSON: the listing and each call's result
    (:func:`~affidavit.servers.toolkit.answer_wire`), shared by the plain loop and the SDK."""

    def __init__(self, tools: MemoryTools, max_chars: int = 200) -> None:
        self.tools = tools
        self.specs = {spec.name: spec for spec in catalogue(max_chars)}
        self.wire_listing = [spec.wire_listing() for spec in self.specs.values()]

    def listing(self) -> list[dict[str, Any]]:
        """``tools/list``: every tool offered now (memory_unlock only while allowed)."""
        return [tool for tool in self.wire_listing if self.tools.offers(tool["name"])]

    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """One ``tools/call`` result; UnknownToolError for a tool not offered."""
        spec = self.specs.get(name)
        if spec is None or not self.tools.offers(name):
            raise UnknownToolError(name)

        def call() -> dict[str, Any]:
            checked = check_arguments(spec, arguments)
            with self.tools.busy:
                return dict(spec.handler(self.tools, checked))

        try:
            return answer_wire(name, call)
        except HiddenToolError:
            raise UnknownToolError(name) from None


#: OpenBLAS's thread count, set before numpy loads (a user's own value is kept).
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """Load numpy (in the warm-up) with one OpenBLAS thread.

    Why: at import OpenBLAS starts a thread per core that spins while it waits, and that
    was a third of numpy's import (~70-95 ms of CPU, ~50 with one thread, issue 27) on the
    path to a server's first search, on the 2 cores the warm-up already shares. Ranking
    never calls BLAS (its products are ``einsum``: OpenBLAS's threads contended with
    onnxruntime, :mod:`affidavit.recall.ranking.channels`), so nothing needs more.
    """
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def serve(caller: str, vault_path: Path | None = None) -> None:
    """Serve the memory tools for ``caller`` over stdio until the client disconnects."""
    from affidavit.recall import prefer_shared

    one_blas_thread()
    prefer_shared()  # several servers of one user: one model (AFFIDAVIT_EMBEDDER overrides)
    tools = MemoryTools(caller, vault_path)
    calls = Calls(tools)
    server = ToolServer(
        name=SERVER_NAME,
        title=SERVER_TITLE,
        version=__version__,
        instructions=INSTRUCTIONS,
        list_tools=calls.listing,
        call_tool=calls.call,
        sdk_server=lambda: sdk_server(tools),
    )
    # Everything the handshake needs is imported and built by now: the warm-up's threads,
    # busy with the vault and the model, would otherwise slow each import step (the GIL).
    tools.warm_up_in_background()  # while the client is still initialising
    try:
        serve_stdio(server)
    finally:
        tools.close()
        sys.stderr.flush()
