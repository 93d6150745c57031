"""``affidavit pack ...``: the evidence plane's commands, one module per command family."""

from __future__ import annotations

import typer

from affidavit.cli import pack_build, pack_serve, pack_sign, pack_verify

pack_app = typer.Typer(
    name="pack",
    help="Build, sign, verify and serve signed memory packs (verified-memory format).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Mount ``pack`` with verify, sign, build and serve."""
    for module in (pack_verify, pack_sign, pack_build, pack_serve):
        module.register(pack_app)
    app.add_typer(pack_app)
