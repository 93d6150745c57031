"""The ``affidavit`` entry point, with a fast path for commands that must start quickly.

``pack verify`` is run by hosts and scripts before trusting a pack, and its cold start is a
measured target (0.35 s for 10,000 records); so are ``serve`` (MCP start-up) and ``console``
(first page within 1 s). Typer pulls in rich and pydantic (about 0.2-0.5 s here), so this
entry point runs those commands directly when the command line is plainly one of them, and
hands everything else (including ``--help``) to the typer app unchanged.
Errors are printed exactly as :func:`affidavit.cli.main.main` prints them.
"""

import os
import sys
import traceback

from affidavit.core import offline
from affidavit.core.errors import AffidavitError

_HELP = frozenset(("--help", "-h"))


def _fast_args(argv: list[str]) -> list[str] | None:
    """The ``pack verify`` arguments when argv is that command and no help is asked for."""
    args = list(argv)
    if args[:1] == ["--assert-offline"]:
        offline.install()
        args = args[1:]
    if args[:2] != ["pack", "verify"] or _HELP.intersection(args[2:]):
        return None
    return args[2:]


def _fail(message: str, code: int) -> None:
    from affidavit.cli.output import error

    error(message)
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run ``affidavit``: the fast path when it applies, the full typer app otherwise."""
    offline.install_if_requested()
    argv = sys.argv[1:] if argv is None else argv
    fast = _fast_args(argv)
    from affidavit.servers import memory_main  # `serve`: MCP start-up time is a target too

    serve = memory_main.serve_args(argv) if fast is None else None
    from affidavit.cli import console  # `console`: its first page is a target too

    web = console.fast_settings(argv) if fast is None and serve is None else None
    if fast is None and serve is None and web is None:
        from affidavit.cli.main import main as full_main

        full_main(argv)
        return
    try:
        if serve is not None:
            memory_main.run(serve)
        elif web is not None:
            console.run(web)
        else:
            from affidavit.cli import pack_verify

            pack_verify.run(fast or [])
    except AffidavitError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except offline.OfflineViolation as exc:
        _fail(str(exc), 10)
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("AFFIDAVIT_DEBUG") == "1":
            traceback.print_exc()
        _fail(
            f"internal error ({type(exc).__name__}: {exc}); "
            "rerun with AFFIDAVIT_DEBUG=1 for details and report it",
            70,
        )
    sys.exit(0)
