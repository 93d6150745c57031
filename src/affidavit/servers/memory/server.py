"""``affidavit serve``: the memory vault as an MCP server over stdio (14 tools).

The MCP layer is thin on purpose: it lists the catalogue of :mod:`memory_tools`, holds each
call's arguments to the published input schema (precompiled validators; an error names the
exact field, e.g. ``facts[3].text``, and never echoes the value, which may be a passphrase),
runs the tool in a worker thread (one at a time, so a slow self-test never stalls pings or
cancellation) and returns the result as JSON text plus the same object as
``structuredContent``. A failure the user can act on is an ``isError`` result with one line
saying what to do; an unknown tool is a protocol error, and so is a tool the server does not
offer right now (``memory_unlock`` while the user has not allowed it: neither listed nor
distinguishable from a tool that does not exist).

Start-up stays lean: nothing but the MCP SDK is imported before the handshake. The vault is
opened and the embedding model loaded in a background thread once the client lists the tools
(after the handshake, so ``initialize`` is never delayed), or by the first call, whichever
comes first; calls wait for that warm-up instead of racing it.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from affidavit import __version__
from affidavit.core.errors import AffidavitError, UsageError
from affidavit.servers.memory.catalogue import INSTRUCTIONS, ToolSpec, catalogue
from affidavit.servers.memory.handlers import HiddenToolError, MemoryTools
from affidavit.servers.results import error_result, json_result

SERVER_NAME = "affidavit-memory"


def _where(path: Any) -> str:
    """A JSON path as an agent writes it: ``facts[3].text``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def _explain(error: Any) -> UsageError:
    """One clear line for a schema violation, without the offending value."""
    where = _where(error.absolute_path)
    rule, limit = error.validator, error.validator_value
    if rule == "required":
        missing = next((n for n in limit if n not in (error.instance or {})), "?")
        target = f"{where}.{missing}" if where != "arguments" else missing
        return UsageError(f"missing required argument {target!r}", f"pass {missing!r}")
    if rule == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        name = extra[0] if extra else "?"
        return UsageError(f"unknown argument {name!r} in {where}", f"allowed: {', '.join(allowed)}")
    if rule == "maxLength":
        return UsageError(f"{where} is longer than {limit} characters", "shorten it")
    message, hint = _MESSAGES.get(rule, _other)(where, limit)
    return UsageError(message, hint)


def _other(where: str, limit: Any) -> tuple[str, str]:
    return f"{where} is not valid", "check the tool's input schema"


def _choices(where: str, limit: Any) -> tuple[str, str]:
    return f"{where} must be one of {', '.join(map(str, limit))}", "pick one of those"


_MESSAGES: dict[str, Any] = {
    "minLength": lambda w, n: (f"{w} is empty or too short", f"give {w} a value"),
    "type": lambda w, t: (f"{w} must be of type {t}", "check the tool's input schema"),
    "pattern": lambda w, p: (f"{w} has the wrong format", f"it must match {p}"),
    "enum": _choices,
    "minimum": lambda w, n: (f"{w} must be at least {n}", "raise it"),
    "maximum": lambda w, n: (f"{w} must be at most {n}", "lower it"),
    "minItems": lambda w, n: (f"{w} needs at least {n} item(s)", "add one"),
    "maxItems": lambda w, n: (f"{w} takes at most {n} items", "split it into several calls"),
    "uniqueItems": lambda w, n: (f"{w} lists the same item twice", "remove the duplicate"),
}


class Validators:
    """One precompiled JSON Schema validator per tool, built on first use."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        self._schemas = {spec.name: spec.input_schema for spec in specs}
        self._compiled: dict[str, Any] = {}

    def check(self, name: str, arguments: Mapping[str, Any]) -> None:
        """UsageError naming the first (by path) field that breaks the schema."""
        validator = self._compiled.get(name)
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(self._schemas[name])
            self._compiled[name] = validator
        errors = sorted(
            validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path]
        )
        if errors:
            raise _explain(errors[0])


def _tool_list(specs: list[ToolSpec]) -> list[Any]:
    import mcp_types as types

    return [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            output_schema=spec.output_schema,
            annotations=types.ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=spec.destructive,
                idempotent_hint=spec.idempotent,
                open_world_hint=False,
            ),
        )
        for spec in specs
    ]


def build_server(tools: MemoryTools, max_chars: int = 200) -> Any:
    """The low-level MCP server over ``tools``."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    specs = catalogue(max_chars)
    listing = _tool_list(specs)
    validators = Validators(specs)
    handlers = {spec.name: getattr(tools, spec.name) for spec in specs}
    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        tools.warm_up_in_background()  # the handshake is done; tools/call comes next
        return types.ListToolsResult(tools=[tool for tool in listing if tools.offers(tool.name)])

    def unknown(name: str) -> MCPError:
        return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")

    def run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        validators.check(name, arguments)
        with tools.busy:
            return handlers[name](arguments)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in handlers or not tools.offers(params.name):
            raise unknown(params.name)
        arguments = dict(params.arguments or {})
        try:
            body = await anyio.to_thread.run_sync(
                run, params.name, arguments, limiter=one_at_a_time
            )
        except HiddenToolError:
            raise unknown(params.name) from None
        except AffidavitError as exc:
            return error_result(f"affidavit: {exc}")
        except Exception as exc:  # a bug: one line to the agent, details only on request
            if os.environ.get("AFFIDAVIT_DEBUG") == "1":
                traceback.print_exc(file=sys.stderr)
            return error_result(
                f"affidavit: internal error in {params.name} ({type(exc).__name__}); "
                "the user can rerun the server with AFFIDAVIT_DEBUG=1 and report it"
            )
        return json_result(body)

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
