"""``affidavit pack build``: make a pack from messages and the records to remember."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from affidavit.cli.output import stderr, stdout


def build(
    messages: Annotated[Path, typer.Option(help="Source messages, one JSON object per line.")],
    records: Annotated[Path, typer.Option(help="Records to remember, each citing quotes.")],
    out: Annotated[Path, typer.Option(help="New pack directory; must not exist yet.")],
    title: Annotated[str, typer.Option(help="Title for MEMORY.md and README.md.")],
    description: Annotated[str | None, typer.Option(help="Text for the pack README.")] = None,
) -> None:
    """Build a pack: every quote verbatim, offsets and hashes computed, verified, or nothing."""
    from affidavit.packs import build_pack

    with stderr.status("building and verifying the pack..."):
        built = build_pack(messages, records, out, title, description)
    stdout.print(f"built {built.path} ({built.record_count} records)", markup=False)
    for name, digest in built.file_hashes.items():
        stdout.print(f"  {digest}  {name}", markup=False)
    stdout.print(
        "next: sign it with `affidavit pack sign --pack DIR --key KEY --expires 90d --out NEW`",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``pack build``."""
    app.command("build")(build)
