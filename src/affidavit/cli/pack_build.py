"""``affidavit pack build``: make a pack from messages and the records to remember.

The messages come from a ``messages.jsonl`` (``--messages``) or a chat export
(``--from-chatgpt`` / ``--from-claude``), which becomes the numbered messages the records cite;
``affidavit pack messages`` prints those numbered messages so records can be written by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.output import print_json, stderr, stdout, warn
from affidavit.cli.params import EXISTING, PATH, json_option
from affidavit.core.errors import UsageError
from affidavit.core.wording import counted

if TYPE_CHECKING:
    from affidavit.packs import BuiltPack, Sources


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
@click.option("--records", type=EXISTING, help="Records to remember, each citing quotes.")
@click.option("--out", type=PATH, required=True, help="New pack directory; must not exist yet.")
@click.option("--title", required=True, help="Title for MEMORY.md and README.md.")
@click.option("--messages", type=EXISTING, help="Source messages, one JSON object per line.")
@click.option(
    "--from-chatgpt", type=EXISTING, help=f"Or a ChatGPT export {_EXPORT_HELP} as the messages."
)
@click.option(
    "--from-claude", type=EXISTING, help=f"Or a Claude export {_EXPORT_HELP} as the messages."
)
@click.option("--description", help="Text for the pack README.")
@click.option(
    "--from-vault",
    is_flag=True,
    help="Or build from the memories of --namespace: each is its own message and quote.",
)
@click.option("--namespace", help="With --from-vault: the namespace whose memories to pack.")
@json_option
def build(
    records: Path | None,
    out: Path,
    title: str,
    messages: Path | None,
    from_chatgpt: Path | None,
    from_claude: Path | None,
    description: str | None,
    from_vault: bool,
    namespace: str | None,
    as_json: bool,
) -> None:
    """Build a pack with every quote checked verbatim.

    The messages come from one of --messages, --from-chatgpt or --from-claude, and the
    records from --records; or both from the vault (--from-vault --namespace NS: every live,
    unquarantined memory there, quoting its own text). Offsets and hashes are computed and
    the result verified; on any failure nothing is written.
    """
    from affidavit.packs import build_pack_from, check_request, read_input

    with stderr.status("building and verifying the pack..."):
        check_request(out, title)  # a bad title or an existing target before any reading
        if from_vault:
            if records or messages or from_chatgpt or from_claude or not namespace:
                raise UsageError(
                    "--from-vault takes --namespace and no --records or messages",
                    "e.g. affidavit pack build --from-vault --namespace team --out DIR --title T",
                )
            built = _from_vault(namespace, out, title, description)
        else:
            if records is None or namespace is not None:
                raise UsageError(
                    "give --records (and the messages), or --from-vault --namespace NS",
                    "see `affidavit pack build --help`",
                )
            sources = _sources(messages, from_chatgpt, from_claude)
            raw = read_input(records)
            built = build_pack_from(sources, records.name, raw, out, title, description)
    if as_json:
        files = dict(built.file_hashes)
        print_json({"path": str(built.path), "records": built.record_count, "files": files})
        return
    stdout.print(f"built {built.path} ({counted(built.record_count, 'record')})", markup=False)
    for name, digest in built.file_hashes.items():
        stdout.print(f"  {digest}  {name}", markup=False)
    stdout.print(
        "next: sign it with `affidavit pack sign --pack DIR --key KEY --expires 90d --out NEW`",
        markup=False,
    )


def _from_vault(namespace: str, out: Path, title: str, description: str | None) -> BuiltPack:
    """Build from the vault's memories (:func:`affidavit.recall.pack_source`)."""
    from affidavit.cli.opening import open_memory
    from affidavit.packs import build_pack_from, sources_from_jsonl
    from affidavit.recall import pack_source

    with open_memory() as m:
        source = pack_source(m, namespace)
    for memory_id, reason in source.skipped:
        warn(f"left out {memory_id}: {reason}")
    for memory_id, reason in source.unproven:
        warn(f"packed {memory_id} without proof: {reason}")
    sources = sources_from_jsonl(f"vault namespace {namespace}", source.messages)
    return build_pack_from(
        sources, "vault", source.records, out, title, description, metadata=source.proofs
    )


@click.command("messages")
@click.option("--from-chatgpt", type=EXISTING, help=f"A ChatGPT export {_EXPORT_HELP}.")
@click.option("--from-claude", type=EXISTING, help=f"A Claude export {_EXPORT_HELP}.")
def messages(from_chatgpt: Path | None, from_claude: Path | None) -> None:
    """Print an export as the numbered messages records cite.

    One JSON object per line; a record quotes a message by its message_id.
    """
    import sys

    sources = _sources(None, from_chatgpt, from_claude)
    sys.stdout.buffer.write(sources.raw)
    sys.stdout.flush()
