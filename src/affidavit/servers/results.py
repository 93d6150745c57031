"""The two ``tools/call`` result shapes affidavit's own MCP servers answer with.

A JSON body goes out twice, as ``structuredContent`` and as its text (clients that read only
``content`` see the same thing); a failure is one line of text with ``isError: true``, so the
agent can read what went wrong and the session carries on. ``mcp_types`` is imported only when
a result is built: modules that merely import a server stay cheap to load.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types


def json_result(body: dict[str, Any]) -> types.CallToolResult:
    """A successful result: ``body`` as structured content and as its JSON text."""
    import mcp_types as types

    text = json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body
    )


def error_result(text: str) -> types.CallToolResult:
    """A failed call: ``text`` (one line) with ``isError`` set."""
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
