"""``affidavit console [--port N] [--host 127.X.Y.Z] [--no-browser] [--audit-log FILE]``: the
local web console.

Only the options are read here; everything else is :mod:`affidavit.console`, imported when the
command runs (starting the console is a measured target: first page within 1 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.params import PATH

if TYPE_CHECKING:
    from affidavit.console import ConsoleSettings


def settings(
    port: int | None,
    no_browser: bool,
    audit_log: Path | None,
    stop_when_stdin_closes: bool,
    host: str | None = None,
) -> ConsoleSettings:
    """The console's settings from its options (the log defaults to the proxy's)."""
    from affidavit.console import ConsoleSettings, loopback_address
    from affidavit.proxy import default_log_path

    return ConsoleSettings(
        audit_log=(audit_log or default_log_path()).expanduser().absolute(),
        port=port,
        host=loopback_address(host) if host is not None else None,
        open_browser=not no_browser,
        stop_when_stdin_closes=stop_when_stdin_closes,
    )


@click.command("console")
@click.option("--port", type=int, help="Port to listen on (default: a free one).")
@click.option(
    "--host",
    metavar="127.X.Y.Z",
    help="Loopback address to listen on (default: a random one of 127.0.0.0/8 per launch).",
)
@click.option("--no-browser", is_flag=True, help="Print the link; do not open a browser.")
@click.option(
    "--audit-log", type=PATH, help="The proxy audit log to watch (default: the proxy's own)."
)
@click.option("--stop-when-stdin-closes", is_flag=True, hidden=True)
def console(
    port: int | None,
    host: str | None,
    no_browser: bool,
    audit_log: Path | None,
    stop_when_stdin_closes: bool,
) -> None:
    """A local web console: memories, packs, proxy verdicts.

    Packs are made from chat exports and checked as `pack verify` checks them; the proxy's
    verdicts appear live as its audit log grows. It listens on a loopback address only and
    answers only the browser that signs in with the link it prints (once).
    """
    from affidavit.console import serve

    serve(settings(port, no_browser, audit_log, stop_when_stdin_closes, host))
