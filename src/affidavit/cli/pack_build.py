"""``affidavit pack build``: make a pack from messages and the records to remember.

The messages come from a ``messages.jsonl`` (``--messages``) or a chat export
(``--from-chatgpt`` / ``--from-claude``), which becomes the numbered messages the records cite;
``affidavit pack messages`` prints those numbered messages so records can be written by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.output import stderr, stdout
from affidavit.cli.params import PATH
from affidavit.core.errors import UsageError

if TYPE_CHECKING:
    from affidavit.packs import Sources


def _sources(messages: Path | None, chatgpt: Path | None, claude: Path | None) -> Sources:
    """The source messages from the one source given."""
    given = [
        (flag, path)
        for flag, path in (
            ("--messages", messages),
            ("--from-chatgpt", chatgpt),
            ("--from-claude", claude),
        )
        if path is not None
    ]
    if len(given) != 1:
        raise UsageError(
            "give exactly one of --messages, --from-chatgpt and --from-claude",
            "name the file the records quote",
        )
    from affidavit.packs import read_sources, sources_from_export

    flag, path = given[0]
    if flag == "--messages":
        return read_sources(path)
    from affidavit.exports import CHATGPT, CLAUDE, read_export

    return sources_from_export(read_export(path, CHATGPT if flag == "--from-chatgpt" else CLAUDE))


_EXPORT_HELP = "(conversations.json or its .zip)"


@click.command("build")
@click.option(
    "--records", type=PATH, required=True, help="Records to remember, each citing quotes."
)
@click.option("--out", type=PATH, required=True, help="New pack directory; must not exist yet.")
@click.option("--title", required=True, help="Title for MEMORY.md and README.md.")
@click.option("--messages", type=PATH, help="Source messages, one JSON object per line.")
@click.option(
    "--from-chatgpt", type=PATH, help=f"Or a ChatGPT export {_EXPORT_HELP} as the messages."
)
@click.option(
    "--from-claude", type=PATH, help=f"Or a Claude export {_EXPORT_HELP} as the messages."
)
@click.option("--description", help="Text for the pack README.")
def build(
    records: Path,
    out: Path,
    title: str,
    messages: Path | None,
    from_chatgpt: Path | None,
    from_claude: Path | None,
    description: str | None,
) -> None:
    """Build a pack with every quote checked verbatim.

    The messages come from one of --messages, --from-chatgpt or --from-claude. Offsets and
    hashes are computed and the result verified; on any failure nothing is written.
    """
    from affidavit.packs import build_pack_from, check_request, read_input

    with stderr.status("building and verifying the pack..."):
        check_request(out, title)  # a bad title or an existing target before any reading
        sources = _sources(messages, from_chatgpt, from_claude)
        built = build_pack_from(sources, records.name, read_input(records), out, title, description)
    stdout.print(f"built {built.path} ({built.record_count} records)", markup=False)
    for name, digest in built.file_hashes.items():
        stdout.print(f"  {digest}  {name}", markup=False)
    stdout.print(
        "next: sign it with `affidavit pack sign --pack DIR --key KEY --expires 90d --out NEW`",
        markup=False,
    )


@click.command("messages")
@click.option("--from-chatgpt", type=PATH, help=f"A ChatGPT export {_EXPORT_HELP}.")
@click.option("--from-claude", type=PATH, help=f"A Claude export {_EXPORT_HELP}.")
def messages(from_chatgpt: Path | None, from_claude: Path | None) -> None:
    """Print an export as the numbered messages records cite.

    One JSON object per line; a record quotes a message by its message_id.
    """
    import sys

    sources = _sources(None, from_chatgpt, from_claude)
    sys.stdout.buffer.write(sources.raw)
    sys.stdout.flush()
