"""``affidavit dev serve``: the git/CI/SQLite MCP server over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.params import EXISTING, check_token_file, http_options, token_file_option

if TYPE_CHECKING:
    from affidavit.servers.http import HttpOptions

DEFAULT_SQL_TIMEOUT_S = 30.0
"""How long one agent SQL statement may run unless the user says otherwise."""


@click.command("serve")
@click.option(
    "--repo-path", type=EXISTING, required=True, help="The git work tree to confine it to."
)
@click.option(
    "--allow-ci-edits",
    is_flag=True,
    help="Let the agent write .affidavit-ci.yml. Runs still use the file committed when the "
    "server started; a restart picks up a newly committed one.",
)
@click.option(
    "--sql-timeout",
    type=click.FloatRange(0.1, 3600.0),
    default=DEFAULT_SQL_TIMEOUT_S,
    show_default=True,
    help="Seconds one sqlite_query/sqlite_execute statement may run.",
)
@http_options
@token_file_option
def serve(
    repo_path: Path,
    allow_ci_edits: bool,
    sql_timeout: float,
    http: HttpOptions | None,
    token_file: Path | None,
) -> None:
    """Serve a git repository to an MCP host over stdio (or --http).

    Tools, resources and prompts for git, CI runs and SQLite, confined to the work tree. Over
    --http clients send the bearer token of --token-file (required).
    """
    import anyio

    from affidavit.servers.dev.server import serve_stdio
    from affidavit.servers.dev.worktree import WorkTree

    check_token_file(http, token_file)
    WorkTree.open(repo_path)  # a bad path is a one-line CLI error, before any MCP traffic
    if http is not None and token_file is not None:
        from affidavit.servers.dev.http import serve_http

        serve_http(
            repo_path, http, token_file, allow_ci_edits=allow_ci_edits, sql_timeout_s=sql_timeout
        )
        return
    anyio.run(
        lambda: serve_stdio(repo_path, allow_ci_edits=allow_ci_edits, sql_timeout_s=sql_timeout)
    )
