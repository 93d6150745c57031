"""The fast entry of ``affidavit serve``: straight to the server, without typer and rich.

An MCP client starts the memory server for every session, so its start-to-ready time is a
measured target. The typer app costs about 0.2 s of imports before any command runs; when the
command line is plainly ``serve [--caller NAME] [--vault PATH]`` the entry point
(:mod:`affidavit.cli.fastpath`) calls :func:`run` instead. Anything else (``--help``, an
unknown option) goes to the typer app, which owns the documented command line.
"""

from __future__ import annotations

from pathlib import Path


def serve_args(argv: list[str]) -> tuple[str, Path | None] | None:
    """``(caller, vault)`` when argv is plainly the serve command, else None."""
    args = list(argv)
    if args[:1] == ["--assert-offline"]:
        args = args[1:]
    if args[:1] != ["serve"]:
        return None
    caller, vault = "user", None
    rest = args[1:]
    while rest:
        option, *rest = rest
        name, eq, value = option.partition("=")
        if name not in {"--caller", "--vault"}:
            return None
        if not eq:
            if not rest:
                return None
            value, *rest = rest
        if name == "--caller":
            caller = value
        else:
            vault = Path(value)
    return caller, vault


def run(args: tuple[str, Path | None]) -> None:
    """Serve the memory tools for the parsed arguments (errors propagate as AffidavitError)."""
    from affidavit.recall import access
    from affidavit.servers.memory import serve

    caller, vault = args
    serve(access.check_name(caller, "caller"), vault)
