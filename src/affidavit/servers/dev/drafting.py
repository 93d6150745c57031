"""``draft_commit_message``: ask the host's model (sampling) to describe the pending change.

The server has no model of its own and never reaches the network; it sends the diff to the
host through ``sampling/createMessage`` when, and only when, the client declared the sampling
capability. Without it the tool says so plainly rather than inventing a message.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from affidavit.core.errors import ConflictError, ExternalError, UnsupportedError
from affidavit.servers.dev import interact
from affidavit.servers.dev.tools import Outcome
from affidavit.servers.dev.worktree import WorkTree

SAMPLING_KEY = "draft"
SAMPLING_TIMEOUT_S = 300.0
MAX_DIFF_CHARS = 20_000
MAX_TOKENS = 400
SYSTEM_PROMPT = (
    "You write git commit messages: a subject line of at most 72 characters in the imperative "
    "mood, a blank line, then a short body saying why. Reply with the message only."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"hint": {"type": "string", "description": "what the change is for"}},
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string"}, "model": {"type": "string"}},
    "required": ["message", "model"],
}
DESCRIPTION = (
    "Draft a commit message for the uncommitted changes by asking the host's model "
    "(MCP sampling). Does not commit."
)


def pending_diff(repo: WorkTree) -> str:
    """The uncommitted diff, cut to a size a prompt can carry; refuses when there is none."""
    diff = repo.diff(None)
    untracked = [e["path"] for e in repo.status()["entries"] if e["index"] == "?"]
    if not diff.strip() and not untracked:
        raise ConflictError("there are no uncommitted changes to describe")
    if untracked:
        diff += "\nNew untracked files:\n" + "\n".join(f"  {p}" for p in untracked)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n[diff cut here]"
    return diff


def sampling_request(diff: str, hint: str | None) -> types.CreateMessageRequest:
    """The sampling request sent to the host."""
    text = f"Write a commit message for this change.\n\n{diff}"
    if hint:
        text = f"The change is for: {hint}\n\n{text}"
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(
            messages=[
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=text)
                )
            ],
            system_prompt=SYSTEM_PROMPT,
            max_tokens=MAX_TOKENS,
            include_context="none",
        )
    )


async def draft(
    ctx: ServerRequestContext[Any],
    params: types.CallToolRequestParams,
    diff: str,
    hint: str | None,
) -> Outcome:
    """Ask the host's model; raises :class:`interact.NeedInput` on a modern first pass."""
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise UnsupportedError(
            "this host does not support sampling (it did not declare the capability), "
            "so no model was asked",
            "write the message yourself, or use the commit_message prompt",
        )
    try:
        result = await interact.ask(
            ctx,
            params,
            SAMPLING_KEY,
            sampling_request(diff, hint),
            types.CreateMessageResult,
            SAMPLING_TIMEOUT_S,
        )
    except (MCPError, TimeoutError) as exc:
        raise ExternalError(
            f"the host did not answer the sampling request ({exc})",
            "approve the request in the host, or write the message yourself",
        ) from None
    content = result.content
    if not isinstance(content, types.TextContent) or not content.text.strip():
        raise ExternalError("the host's model answered without text", "try again")
    message = content.text.strip()
    return Outcome(
        f"draft from {result.model}:\n{message}", {"message": message, "model": result.model}
    )
