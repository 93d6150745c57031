"""Entry point of the ``affidavit`` command.

:func:`main` turns every :class:`~affidavit.core.errors.AffidavitError` into one line on stderr
and its exit code; a bug prints one line too, and the traceback only with ``AFFIDAVIT_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer
from typer import _click as click  # typer vendors click; its exceptions live here

from affidavit import __version__
from affidavit.cli import (
    audit,
    console,
    demo,
    devserver,
    integrate,
    memory_server,
    packs,
    proxy,
    recall,
    vault,
)
from affidavit.cli.output import error
from affidavit.core import offline
from affidavit.core.errors import AffidavitError

app = typer.Typer(
    name="affidavit",
    help="A trust layer for MCP agents: encrypted memory, signed packs, a verifying proxy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"affidavit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    assert_offline: bool = typer.Option(
        False,
        "--assert-offline",
        help="Abort on any network connection that was not configured (loopback is allowed).",
    ),
) -> None:
    """affidavit: act only on what has evidence behind it."""
    if assert_offline:
        offline.install()


for _module in (
    packs,
    vault,
    audit,
    recall,
    memory_server,
    integrate,
    proxy,
    devserver,
    console,
    demo,
):
    _module.register(app)


def _text_taken_for_an_option(exc: click.exceptions.ClickException) -> str | None:
    """The error for text that begins with '-' (``store "-5 degrees ..."``), else None.

    Click reads any word that starts with '-' as an option; for a command that takes text,
    an unknown "option" that resembles no real one is most likely that text, and the way out
    (``--`` before it) is not something a first-time user knows.
    """
    if not isinstance(exc, click.exceptions.NoSuchOption) or exc.possibilities:
        return None
    ctx = exc.ctx
    if ctx is None or not any(p.param_type_name == "argument" for p in ctx.command.params):
        return None
    word, path = exc.option_name, ctx.command_path
    return (
        f"{word} is not an option of `{path}`; if it begins your text, put -- before the "
        f"text so it is not read as an option: {path} [OPTIONS] -- '{word} ...'"
    )


def main(argv: list[str] | None = None) -> None:
    """Run the command line; never let a traceback reach a user for a failure they can fix."""
    offline.install_if_requested()
    try:
        result = app(args=argv, prog_name="affidavit", standalone_mode=False)
    except AffidavitError as exc:
        error(str(exc))
        sys.exit(exc.exit_code)
    except typer.Abort:
        error("aborted")
        sys.exit(130)
    except click.exceptions.ClickException as exc:
        dashed = _text_taken_for_an_option(exc)
        if dashed is None:
            exc.show()
        else:
            error(dashed)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        error("interrupted")
        sys.exit(130)
    except offline.OfflineViolation as exc:
        error(str(exc))
        sys.exit(10)
    except Exception as exc:  # a bug: say so in one line, keep the traceback for debugging
        if os.environ.get("AFFIDAVIT_DEBUG") == "1":
            traceback.print_exc()
        error(
            f"internal error ({type(exc).__name__}: {exc}); "
            "rerun with AFFIDAVIT_DEBUG=1 for details and report it"
        )
        sys.exit(70)
    sys.exit(result if isinstance(result, int) else 0)
