"""``affidavit demo``: the main job of every plane on embedded fictional data, in a temp dir.

Each plane contributes one section (``demo_packs``, ``demo_memory``, ``demo_proxy``): a
function ``run(workdir: Path) -> None`` that prints what it does with rich and raises an
``AffidavitError`` if anything it shows does not hold. Sections run in order, each in its own
subdirectory of one temporary directory that is removed at the end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click


@click.command("demo")
def demo() -> None:
    """Start here: each plane's main job, on fictional data.

    Builds, signs, verifies and serves a pack; stores and recalls memories through the MCP
    server; catches a lying tool with the proxy. Everything runs for real in a temporary
    directory that is removed at the end.
    """
    from affidavit.cli import demo_memory, demo_packs, demo_proxy
    from affidavit.cli.output import stdout

    sections = (
        ("Evidence: a signed memory pack", demo_packs.run),
        ("Memory: an encrypted vault over MCP", demo_memory.run),
        ("Tools: the verifying proxy", demo_proxy.run),
    )
    with tempfile.TemporaryDirectory(prefix="affidavit-demo-") as tmp:
        for index, (title, run) in enumerate(sections, start=1):
            stdout.rule(f"{index}. {title}")
            workdir = Path(tmp) / f"section-{index}"
            workdir.mkdir()
            run(workdir)
    stdout.rule("done")
    stdout.print("Every step above ran for real in a temporary directory, now removed.")
