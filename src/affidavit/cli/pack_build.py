"""``affidavit pack build``: make a pack from messages and the records to remember."""

from __future__ import annotations

from pathlib import Path

import click

from affidavit.cli.output import stderr, stdout
from affidavit.cli.params import PATH


@click.command("build")
@click.option(
    "--messages", type=PATH, required=True, help="Source messages, one JSON object per line."
)
@click.option(
    "--records", type=PATH, required=True, help="Records to remember, each citing quotes."
)
@click.option("--out", type=PATH, required=True, help="New pack directory; must not exist yet.")
@click.option("--title", required=True, help="Title for MEMORY.md and README.md.")
@click.option("--description", help="Text for the pack README.")
def build(messages: Path, records: Path, out: Path, title: str, description: str | None) -> None:
    """Build a pack with every quote checked verbatim.

    Offsets and hashes are computed and the result verified; on any failure nothing is written.
    """
    from affidavit.packs.build import build_pack

    with stderr.status("building and verifying the pack..."):
        built = build_pack(messages, records, out, title, description)
    stdout.print(f"built {built.path} ({built.record_count} records)", markup=False)
    for name, digest in built.file_hashes.items():
        stdout.print(f"  {digest}  {name}", markup=False)
    stdout.print(
        "next: sign it with `affidavit pack sign --pack DIR --key KEY --expires 90d --out NEW`",
        markup=False,
    )
