"""Entry point of the ``affidavit`` command (the console script and ``python -m affidavit``).

:func:`main` runs the command tree of :mod:`affidavit.cli.app` and is the one place that turns a
failure into what a user sees: :func:`exit_code_for` prints one line on stderr and picks the
exit code (an :class:`~affidavit.core.errors.AffidavitError` carries its own; a click usage
mistake is 2; a bug is 70, with the traceback only under ``AFFIDAVIT_DEBUG=1``).
"""

from __future__ import annotations

import os
import sys

import click

from affidavit.cli.output import error
from affidavit.core import offline
from affidavit.core.errors import AffidavitError

INTERRUPTED = 130
INTERNAL = 70
OFFLINE = 10


def main(argv: list[str] | None = None) -> None:
    """Run the command line; never let a traceback reach a user for a failure they can fix."""
    offline.install_if_requested()
    from affidavit.cli.app import root

    try:
        result = root.main(args=argv, prog_name="affidavit", standalone_mode=False)
    except Exception as exc:
        sys.exit(exit_code_for(exc))
    except KeyboardInterrupt:
        error("interrupted")
        sys.exit(INTERRUPTED)
    sys.exit(result if isinstance(result, int) else 0)


def exit_code_for(exc: Exception) -> int:
    """Say what went wrong in one line on stderr (help, for a bare group) and return the exit
    code."""
    if isinstance(exc, AffidavitError):
        error(str(exc))
        return exc.exit_code
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        exc.show()  # a group run without a command: its help, and a usage exit code
        return exc.exit_code
    if isinstance(exc, click.ClickException):
        error(_usage_line(exc))
        return exc.exit_code
    if isinstance(exc, click.Abort):  # click's wrapper of an interrupted prompt
        error("aborted")
        return INTERRUPTED
    if isinstance(exc, offline.OfflineViolation):
        error(str(exc))
        return OFFLINE
    if os.environ.get("AFFIDAVIT_DEBUG") == "1":
        import traceback

        traceback.print_exception(exc)
    error(
        f"internal error ({type(exc).__name__}: {exc}); "
        "rerun with AFFIDAVIT_DEBUG=1 for details and report it"
    )
    return INTERNAL


def _usage_line(exc: click.ClickException) -> str:
    """Click's message and where the usage is shown, or the hint for text taken for an option."""
    ctx = getattr(exc, "ctx", None)
    dashed = _text_taken_for_an_option(exc)
    if dashed is not None:
        return dashed
    message = exc.format_message().replace("\n", " ").removesuffix(".")
    if ctx is None:
        return message
    return f"{message}; see `{ctx.command_path} --help`"


def _text_taken_for_an_option(exc: click.ClickException) -> str | None:
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
