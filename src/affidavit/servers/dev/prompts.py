"""Prompts: a diff review and a commit message, each filled with the repository's real diff."""

from __future__ import annotations

import mcp_types as types

from affidavit.core.errors import InputError, NotFoundError
from affidavit.servers.dev.drafting import MAX_DIFF_CHARS
from affidavit.servers.dev.worktree import WorkTree

PROMPTS = [
    types.Prompt(
        name="review_diff",
        description="Review the uncommitted changes against a commit (default HEAD).",
        arguments=[
            types.PromptArgument(
                name="target", description="branch, tag or commit to compare with", required=False
            ),
            types.PromptArgument(
                name="focus", description="what to look at most closely", required=False
            ),
        ],
    ),
    types.Prompt(
        name="commit_message",
        description="Write a commit message for the uncommitted changes.",
        arguments=[
            types.PromptArgument(name="hint", description="what the change is for", required=False)
        ],
    ),
]
_ARGS = {p.name: {a.name for a in p.arguments or []} for p in PROMPTS}


def get(repo: WorkTree, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    """The filled prompt ``name``, or an AffidavitError for an unknown name or argument."""
    if name not in _ARGS:
        raise NotFoundError(f"unknown prompt {name!r}", f"prompts are: {', '.join(sorted(_ARGS))}")
    args = dict(arguments or {})
    unknown = sorted(set(args) - _ARGS[name])
    if unknown:
        raise InputError(f"prompt {name} has no argument {unknown[0]!r}")
    target = args.get("target") or None
    diff = repo.diff(target)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n[diff cut here]"
    diff_block = f"```diff\n{diff}```" if diff.strip() else "(there are no uncommitted changes)"
    if name == "review_diff":
        focus = args.get("focus")
        text = (
            f"Review this change against {target or 'HEAD'}. Point out bugs, risky edits, "
            "missing tests and unclear names; quote the lines you mean."
            + (f" Focus on: {focus}." if focus else "")
            + f"\n\n{diff_block}"
        )
        description = f"review of the changes against {target or 'HEAD'}"
    else:
        hint = args.get("hint")
        text = (
            "Write a git commit message for this change: a subject of at most 72 characters "
            "in the imperative mood, a blank line, then why the change was made."
            + (f" The change is for: {hint}." if hint else "")
            + f"\n\n{diff_block}"
        )
        description = "commit message for the uncommitted changes"
    return types.GetPromptResult(
        description=description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
