"""``affidavit console``: the local web console (pack maker, pack checker, proxy verdicts).

Only the options are read here; everything else is :mod:`affidavit.console`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def console(
    port: Annotated[
        int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one).")
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the link; do not open a browser.")
    ] = False,
    audit_log: Annotated[
        Path | None,
        typer.Option(help="The proxy audit log to watch (default: the proxy's default log)."),
    ] = None,
    stop_when_stdin_closes: Annotated[
        bool, typer.Option("--stop-when-stdin-closes", hidden=True)
    ] = False,
) -> None:
    """Open the local web console: make and check packs, watch the proxy's verdicts live.

    It listens on 127.0.0.1 only and answers only a browser holding this launch's token
    (in the link it prints).
    """
    from affidavit.console import ConsoleSettings, serve
    from affidavit.proxy.audit import default_log_path

    log = (audit_log or default_log_path()).expanduser().absolute()
    serve(
        ConsoleSettings(
            audit_log=log,
            port=port,
            open_browser=not no_browser,
            stop_when_stdin_closes=stop_when_stdin_closes,
        )
    )


def register(app: typer.Typer) -> None:
    """Add ``affidavit console``."""
    app.command("console")(console)
