"""``affidavit console [--port N] [--no-browser] [--audit-log FILE]``: the local web console.

Only the options are read here; everything else is :mod:`affidavit.console`. Starting the
console is a measured target (first page within 1 s), and typer, rich and pydantic alone cost
about half of that, so :func:`fast_settings` also recognises a plain ``console`` command line
for the fast path (:mod:`affidavit.cli.fastpath`); anything it does not recognise (``--help``,
a typo, a bad port) goes to typer, which owns the help text and the errors. Like
:mod:`affidavit.cli.pack_verify`, this module imports typer only inside :func:`register`.
"""

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

    from affidavit.console import ConsoleSettings

_BOOLEANS = {"--no-browser": "no_browser", "--stop-when-stdin-closes": "stop_when_stdin_closes"}
_VALUES = ("--port", "--audit-log")


def settings(
    port: int | None, no_browser: bool, audit_log: Path | None, stop_when_stdin_closes: bool
) -> "ConsoleSettings":
    """The console's settings from its options (the log defaults to the proxy's)."""
    from affidavit.console import ConsoleSettings
    from affidavit.proxy.audit import default_log_path

    return ConsoleSettings(
        audit_log=(audit_log or default_log_path()).expanduser().absolute(),
        port=port,
        open_browser=not no_browser,
        stop_when_stdin_closes=stop_when_stdin_closes,
    )


def fast_settings(argv: list[str]) -> "ConsoleSettings | None":
    """The settings when argv is plainly ``[--assert-offline] console [known options]``."""
    args = argv[1:] if argv[:1] == ["--assert-offline"] else list(argv)
    if args[:1] != ["console"]:
        return None
    flags: dict[str, bool] = dict.fromkeys(_BOOLEANS.values(), False)
    values: dict[str, str] = {}
    rest = args[1:]
    while rest:
        option, *rest = rest
        name, eq, value = option.partition("=")
        if name in _BOOLEANS and not eq:
            flags[_BOOLEANS[name]] = True
            continue
        if name not in _VALUES or name in values:
            return None
        if not eq:
            if not rest:
                return None
            value, *rest = rest
        values[name] = value
    port = values.get("--port")
    if port is not None and not (port.isascii() and port.isdigit()):
        return None
    audit_log = values.get("--audit-log")
    return settings(
        int(port) if port is not None else None,
        flags["no_browser"],
        Path(audit_log) if audit_log is not None else None,
        flags["stop_when_stdin_closes"],
    )


def run(chosen: "ConsoleSettings") -> None:
    """Serve the console until Ctrl-C."""
    from affidavit.console import serve

    serve(chosen)


def register(app: "typer.Typer") -> None:
    """Add ``affidavit console``."""
    from typing import Annotated

    import typer

    @app.command("console")
    def console(
        port: Annotated[
            int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one).")
        ] = None,
        no_browser: Annotated[
            bool, typer.Option("--no-browser", help="Print the link; do not open a browser.")
        ] = False,
        audit_log: Annotated[
            Path | None,
            typer.Option(help="The proxy audit log to watch (default: the proxy's own)."),
        ] = None,
        stop_when_stdin_closes: Annotated[
            bool, typer.Option("--stop-when-stdin-closes", hidden=True)
        ] = False,
    ) -> None:
        """Open the local web console: make and check packs, watch the proxy's verdicts live.

        It listens on 127.0.0.1 only and answers only a browser holding this launch's token
        (in the link it prints).
        """
        run(settings(port, no_browser, audit_log, stop_when_stdin_closes))
