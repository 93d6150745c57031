"""Argument completion (``completion/complete``): file paths for ``repo://file/{path}`` and
commit-ish names for the ``review_diff`` prompt's ``target``, taken from the repository itself."""

from __future__ import annotations

import mcp_types as types

from affidavit.servers.dev.resources import FILE_TEMPLATE
from affidavit.servers.dev.worktree import WorkTree

MAX_VALUES = 100  # the protocol's cap on values per completion


def complete(repo: WorkTree, params: types.CompleteRequestParams) -> types.Completion:
    """Candidates starting with what the user typed so far; nothing for unknown arguments."""
    ref, argument = params.ref, params.argument
    if isinstance(ref, types.ResourceTemplateReference):
        if ref.uri != FILE_TEMPLATE or argument.name != "path":
            return types.Completion(values=[])
        out = repo.git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        candidates = sorted(set(filter(None, out.split("\0"))))
    elif ref.name == "review_diff" and argument.name == "target":
        out = repo.git("for-each-ref", "--format=%(refname:short)", "refs/heads/", "refs/tags/")
        candidates = ["HEAD", *out.splitlines()]
    else:
        return types.Completion(values=[])
    matches = [c for c in candidates if c.startswith(argument.value)]
    return types.Completion(
        values=matches[:MAX_VALUES], total=len(matches), has_more=len(matches) > MAX_VALUES
    )
