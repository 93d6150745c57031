"""Wiring: the dev server's tools, resources and prompts on the low-level MCP ``Server``.

Every request that touches the repository first passes the host's roots
(:class:`~affidavit.servers.dev.interact.RootsGate`), then runs its blocking work (git, disk,
SQLite, CI) in a worker thread under one lock, so the event loop keeps answering and two calls
never race on the index. A tool call that is cancelled (by the client, or because stdin closed)
sets its :attr:`~.tools.Call.stop` flag, so a long SQLite statement stops and frees the lock
and the process can exit. Any failure becomes a tool result with ``isError: true`` (tools) or
a JSON-RPC error (resources, prompts) carrying one line of reason; nothing a client sends can
crash the server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from affidavit import __version__
from affidavit.core.errors import AffidavitError, InputError, Interrupted, NotFoundError
from affidavit.servers.dev import (
    ci,
    completions,
    drafting,
    interact,
    prompts,
    resources,
    tools,
)
from affidavit.servers.dev.worktree import WorkTree
from affidavit.servers.stdio import stdio_transport
from affidavit.servers.toolkit import ToolSpec, check_arguments, crashed, failed, report_bug

SERVER_NAME = "affidavit-devserver"
DRAFT_TOOL = "draft_commit_message"
RESOURCE_NOT_FOUND = -32002
INSTRUCTIONS = (
    "A git/CI/SQLite workspace confined to one repository. Paths are relative to the repository "
    "root; run_ci_pipeline runs only the steps of the .affidavit-ci.yml the user had committed "
    "when the server started (a changed pipeline takes effect after the user restarts it)."
)
T = TypeVar("T")
Ctx = ServerRequestContext[Any]
#: Failed calls of this server say ``error: ...`` (the other two say ``affidavit: ...``).
PREFIX = "error: "
DRAFT: ToolSpec[Callable[..., Any]] = ToolSpec(
    DRAFT_TOOL,
    None,
    drafting.DESCRIPTION,
    drafting.INPUT_SCHEMA,
    drafting.OUTPUT_SCHEMA,
    handler=drafting.draft,
    read_only=True,
    destructive=None,
    returns_content=True,  # the model's words about the repository's content
)


class DevServer:
    """The handlers, bound to one repository."""

    def __init__(self, workspace: tools.Workspace) -> None:
        self.workspace = workspace
        self.repo = workspace.repo
        self.roots = interact.RootsGate(self.repo.root)
        self._lock = threading.Lock()
        self._specs: dict[str, ToolSpec[Any]] = {s.name: s for s in (*tools.TOOLS, DRAFT)}
        self._tools = [spec.listing() for spec in self._specs.values()]
        self._subscribed: set[str] = set()

    async def _locked(
        self, fn: Callable[..., T], *args: Any, stop: threading.Event | None = None
    ) -> T:
        """``fn(*args)`` in a worker thread under the lock. A thread cannot be cancelled, so a
        cancelled caller leaves it behind and sets ``stop`` instead: work that checks the flag
        (SQL, CI steps) ends at its next look, work still waiting for the lock never starts."""
        flag = stop or threading.Event()

        def run() -> T:
            with self._lock:
                if flag.is_set():
                    raise Interrupted("the call was cancelled before it started")
                return fn(*args)

        try:
            return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            flag.set()
            raise

    async def _gated(self, ctx: Ctx, params: Any, fn: Callable[..., T], *args: Any) -> T:
        """Pass the roots gate, then run ``fn`` under the lock: the path of every request that
        is not a tool call. :class:`~.interact.NeedInput` goes up for the handler to answer its
        own way; any other failure becomes the JSON-RPC error the request is answered with."""
        try:
            await self.roots.check(ctx, params)
            return await self._locked(fn, *args)
        except interact.NeedInput:
            raise
        except Exception as exc:
            raise _rpc_error(exc) from None

    # -- tools ----------------------------------------------------------------------------------

    async def list_tools(
        self, _ctx: Ctx, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            spec = self._spec(params.name)
            args = check_arguments(spec, params.arguments)
            await self.roots.check(ctx, params)
            if spec is DRAFT:
                diff = await self._locked(drafting.pending_diff, self.repo)
                outcome = await spec.handler(ctx, params, diff, args.get("hint"))
            else:
                call = tools.Call(self.workspace, args, _progress_reporter(ctx))
                outcome = await self._locked(spec.handler, call, stop=call.stop)
                if not spec.read_only:
                    await self._announce_changes(ctx)
        except interact.NeedInput as need:
            return need.result
        except AffidavitError as exc:
            return failed(exc, prefix=PREFIX)
        except Exception as exc:  # a bug must not take the server down with it
            return crashed(params.name, exc, prefix=PREFIX)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=outcome.text)]
        if spec.returns_content:  # a second block, so the first stays exactly what was read
            content.append(types.TextContent(type="text", text=tools.DATA_NOTICE))
        return types.CallToolResult(content=content, structured_content=outcome.structured)

    def _spec(self, name: str) -> ToolSpec[Any]:
        spec = self._specs.get(name)
        if spec is None:
            raise InputError(
                f"unknown tool {name!r}", f"tools are: {', '.join(sorted(self._specs))}"
            )
        return spec

    # -- resources ------------------------------------------------------------------------------

    async def list_resources(
        self, _ctx: Ctx, _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources.RESOURCES)

    async def list_templates(
        self, _ctx: Ctx, _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.TEMPLATES)

    async def read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        try:
            contents = await self._gated(ctx, params, resources.read, self.repo, str(params.uri))
        except interact.NeedInput as need:
            return need.result
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        """Remember a resource; it is announced after every call that may have changed it."""
        uri = str(params.uri)
        try:  # only what exists and is allowed
            await self._gated(ctx, params, resources.read, self.repo, uri)
        except interact.NeedInput as need:  # a subscription has no input_required answer
            raise _rpc_error(need) from None
        self._subscribed.add(uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, _ctx: Ctx, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._subscribed.discard(str(params.uri))
        return types.EmptyResult()

    async def _announce_changes(self, ctx: Ctx) -> None:
        """A changing tool ran: every subscribed resource may be different now.

        The server cannot tell cheaply which resources a CI step or a checkout touched, so it
        announces them all; a client re-reads, which is cheap. Changes made outside the server
        (an editor, another process) are not watched.
        """
        for uri in sorted(self._subscribed):
            await ctx.session.send_resource_updated(uri)

    # -- prompts --------------------------------------------------------------------------------

    async def list_prompts(
        self, _ctx: Ctx, _params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.PROMPTS)

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        try:
            return await self._gated(
                ctx, params, prompts.get, self.repo, params.name, params.arguments
            )
        except interact.NeedInput as need:
            return need.result

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        """Completions name repository files, so they pass the roots gate too."""
        try:
            completion = await self._gated(ctx, params, completions.complete, self.repo, params)
        except interact.NeedInput:  # 2026-07-28: completion cannot ask for roots; offer nothing
            completion = types.Completion(values=[])
        return types.CompleteResult(completion=completion)

    async def roots_changed(self, _ctx: Ctx, _params: types.NotificationParams) -> None:
        self.roots.invalidate()


def _progress_reporter(ctx: Ctx) -> tools.Progress:
    """A reporter a worker thread can call; it hops back to the event loop to notify."""

    def report(done: float, total: float | None, message: str) -> None:
        anyio.from_thread.run(ctx.session.report_progress, done, total, message)

    return report


def _rpc_error(exc: Exception) -> MCPError:
    if isinstance(exc, NotFoundError):
        return MCPError(code=RESOURCE_NOT_FOUND, message=str(exc))
    if isinstance(exc, AffidavitError):
        return MCPError(code=types.INVALID_PARAMS, message=str(exc))
    report_bug("a request", exc)
    return MCPError(code=types.INTERNAL_ERROR, message=f"internal error ({type(exc).__name__})")


def build_server(workspace: tools.Workspace) -> Server[Any]:
    """The low-level MCP server for ``workspace``, every handler registered."""
    dev = DevServer(workspace)
    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=dev.list_tools,
        on_call_tool=dev.call_tool,
        on_list_resources=dev.list_resources,
        on_list_resource_templates=dev.list_templates,
        on_read_resource=dev.read_resource,
        on_subscribe_resource=dev.subscribe,
        on_unsubscribe_resource=dev.unsubscribe,
        on_list_prompts=dev.list_prompts,
        on_get_prompt=dev.get_prompt,
        on_completion=dev.complete,
    )
    # Registered directly: the constructor keyword warns that roots are deprecated in 2026-07-28,
    # but 2025 hosts still send this notification and the cached roots must be dropped on it.
    server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, dev.roots_changed
    )
    return server


async def serve_stdio(repo_path: Path, *, allow_ci_edits: bool, sql_timeout_s: float) -> None:
    """Serve the repository at ``repo_path`` over stdio until the client disconnects; its CI
    pipeline is pinned now, before any client can act."""
    repo = WorkTree.open(repo_path)
    pipeline = ci.PinnedPipeline.pin(repo, allow_edits=allow_ci_edits)
    server = build_server(tools.Workspace(repo, pipeline, sql_timeout_s))
    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
