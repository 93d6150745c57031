"""``affidavit bundle``: build the Claude Desktop bundle (.mcpb) of the memory server."""

from __future__ import annotations

from pathlib import Path

import click

from affidavit.cli.output import stderr, stdout
from affidavit.cli.params import PATH


@click.command("bundle")
@click.option(
    "--out",
    type=PATH,
    help="Where to write it (default: affidavit-VERSION-PLATFORM-pyXY.mcpb here).",
)
def bundle(out: Path | None) -> None:
    """Build a Claude Desktop bundle (.mcpb) of the memory server.

    The bundle holds affidavit, its dependencies and the embedding model from this
    environment, so it runs offline on this platform and Python version. Open it with
    Claude Desktop; its settings form asks for the vault folder and the caller name.
    """
    from rich.progress import Progress

    from affidavit.integrate import bundle as mcpb

    target = out or Path.cwd() / mcpb.default_name()
    with Progress(console=stderr, transient=True, disable=not stderr.is_terminal) as bar:
        task = bar.add_task("bundling", total=None)
        built = mcpb.build(target, lambda done, of: bar.update(task, completed=done, total=of))
    size = f"{built.size / 1_000_000:.1f} MB"
    stdout.print(
        f"{built.path} ({size}, {built.files} files, {built.platform}, Python {built.python})",
        markup=False,
    )
