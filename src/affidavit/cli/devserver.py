"""``affidavit devserver``: the git/CI/SQLite MCP server over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DEFAULT_SQL_TIMEOUT_S = 30.0
"""How long one agent SQL statement may run unless the user says otherwise."""


def register(app: typer.Typer) -> None:
    """Add ``devserver`` to the root app."""

    @app.command("devserver")
    def devserver(
        repo_path: Annotated[
            Path,
            typer.Option(
                "--repo-path", help="Top level of the git work tree the server is confined to."
            ),
        ],
        allow_ci_edits: Annotated[
            bool,
            typer.Option(
                "--allow-ci-edits",
                help="Let the agent write .affidavit-ci.yml. Runs still use the file committed "
                "when the server started; a restart picks up a newly committed one.",
            ),
        ] = False,
        sql_timeout: Annotated[
            float,
            typer.Option(
                "--sql-timeout",
                min=0.1,
                max=3600.0,
                help="Seconds one sqlite_query/sqlite_execute statement may run.",
            ),
        ] = DEFAULT_SQL_TIMEOUT_S,
    ) -> None:
        """Serve a git repository to an MCP host over stdio (tools, resources, prompts)."""
        import anyio

        from affidavit.servers.dev.server import serve_stdio
        from affidavit.servers.dev.worktree import WorkTree

        WorkTree.open(repo_path)  # a bad path is a one-line CLI error, before any MCP traffic
        anyio.run(
            lambda: serve_stdio(repo_path, allow_ci_edits=allow_ci_edits, sql_timeout_s=sql_timeout)
        )
