"""``affidavit devserver --http``: the git/CI/SQLite server over Streamable HTTP.

The same server as over stdio, behind the gate of :mod:`affidavit.servers.http`, for clients
holding the token of ``--token-file``. Each request is served statelessly, so what needs a
session does not cross it: the server cannot ask the client for its roots mid-call, and
resource subscriptions last one request; tools, resources and prompts work as over stdio.
"""

from __future__ import annotations

from pathlib import Path

from affidavit.servers.dev import ci, tools
from affidavit.servers.dev.server import build_server
from affidavit.servers.dev.worktree import WorkTree
from affidavit.servers.http import FileToken, HttpOptions, serve


def serve_http(
    repo_path: Path,
    options: HttpOptions,
    token_file: Path,
    *,
    allow_ci_edits: bool,
    sql_timeout_s: float,
) -> None:
    """Serve the repository at ``repo_path`` over HTTP until interrupted; its CI pipeline is
    pinned now, before any client can act."""
    auth = FileToken(token_file, "dev")
    repo = WorkTree.open(repo_path)
    pipeline = ci.PinnedPipeline.pin(repo, allow_edits=allow_ci_edits)
    server = build_server(tools.Workspace(repo, pipeline, sql_timeout_s))
    serve(options, auth, lambda _caller: server, what=f"the repository {repo_path}")
