"""``affidavit devserver``: the git/CI/SQLite MCP server over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


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
    ) -> None:
        """Serve a git repository to an MCP host over stdio (tools, resources, prompts)."""
        import anyio

        from affidavit.servers.dev.gitrepo import GitRepo
        from affidavit.servers.dev.server import serve_stdio

        GitRepo.open(repo_path)  # a bad path is a one-line CLI error, before any MCP traffic
        anyio.run(serve_stdio, repo_path)
