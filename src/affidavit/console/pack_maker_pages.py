"""The pack maker's HTML: the load form, conversations, the record editor, the build form."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from affidavit.console.html import Markup, join, rooted, tag
from affidavit.console.pack_draft import AUTO, Built, Draft
from affidavit.console.widgets import card, choice, field, post_form, select

if TYPE_CHECKING:
    from affidavit.packs import Sources

SLUG = "pack-maker"
_SENTENCE = re.compile(r"\S.*?(?:[.!?…]+[\"'”’)\]]*(?=\s|$)|(?=\n)|$)", re.S)
_ROLE_OF_SPEAKER = {"user": "user", "assistant": "agent"}
_FORMATS = (
    (AUTO, "Detect (ChatGPT or Claude export; .jsonl = messages)"),
    ("chatgpt", "ChatGPT export (conversations.json or the .zip)"),
    ("claude", "Claude export (conversations.json or the .zip)"),
    ("messages", "messages.jsonl (as pack build --messages reads)"),
)


def sentences(text: str) -> Markup:
    """``text`` with each sentence in a clickable span that knows its code-point offset; the
    spans and the text between them concatenate back to exactly ``text``."""
    parts: list[Markup | str] = []
    position = 0
    for match in _SENTENCE.finditer(text):
        parts.append(text[position : match.start()])
        parts.append(tag("span", match.group(), class_="sentence", data_start=match.start()))
        position = match.end()
    parts.append(text[position:])
    return join(parts)


def load_card() -> Markup:
    """Where conversations are loaded from: an upload or a file on this machine."""
    upload = tag("input", type="file", name="source_file", accept=".json,.zip,.jsonl")
    return card(
        tag("h2", "Load conversations"),
        post_form(
            f"/{SLUG}/load",
            "Load",
            tag("label", "Export file", upload),
            tag("p", "or", class_="or"),
            field("File on this machine", "source_path", "/path/to/conversations.json"),
            select("Format", "format", _FORMATS),
            upload=True,
        ),
    )


def loaded_bar(sources: Sources) -> Markup:
    """What is loaded, and the way to load something else."""
    counts = f" — {len(sources.threads)} conversations, {len(sources.messages)} messages"
    other = tag("button", "Load other conversations", type="submit")
    return tag(
        "div",
        tag("span", tag("strong", sources.label), counts, class_="grow"),
        tag("form", other, method="post", action=f"/{SLUG}/clear"),
        class_="row card",
    )


def threads(sources: Sources, current: int) -> Markup:
    """The list of conversations, ``current`` marked."""
    items = [
        tag(
            "li",
            tag(
                "a",
                thread.title,
                " ",
                tag("span", f"({len(thread.message_ids)})", class_="count"),
                href=f"/{SLUG}/?thread={index}",
                class_="active" if index == current else None,
            ),
        )
        for index, thread in enumerate(sources.threads)
    ]
    return tag(
        "aside", tag("h3", "Conversations"), tag("ul", items, class_="threads"), class_="card"
    )


def messages(sources: Sources, current: int) -> Markup:
    """One conversation's messages, each sentence ready to be quoted."""
    if not sources.threads:
        return card("No messages.")
    thread = sources.threads[current]
    articles = []
    for message_id in thread.message_ids:
        message = sources.messages[message_id]
        role = _ROLE_OF_SPEAKER.get(message.speaker, "user")
        meta = tag(
            "div",
            tag("span", f"#{message_id}", class_="id"),
            tag("span", message.speaker),
            tag("span", message.date),
            class_="meta",
        )
        text = tag(
            "div",
            sentences(message.text),
            class_="text",
            data_message_id=message_id,
            data_role=role,
        )
        articles.append(tag("article", meta, text, class_=f"message {role}"))
    return card(
        tag("h2", thread.title),
        tag(
            "p",
            "Click a sentence, or select words, to quote it in the record.",
            class_="muted small",
        ),
        tag("div", articles, class_="messages"),
    )


def records(draft: Draft) -> Markup:
    """The records written so far, each with a way to remove it."""
    if not draft.records:
        return tag("p", "No records yet.", class_="muted small")
    items = []
    for index, record in enumerate(draft.records):
        quotes = record.get("quotes", [])
        cites = ", ".join(f"#{quote.get('message_id')}" for quote in quotes)
        statement = record.get("statement") or " ".join(q.get("quote", "") for q in quotes)
        remove = tag(
            "form",
            tag("button", "Remove", type="submit", class_="small"),
            method="post",
            action=f"/{SLUG}/records/{index}/delete",
        )
        items.append(
            tag(
                "div",
                tag(
                    "div",
                    tag("span", record.get("record_id"), class_="mono"),
                    " ",
                    tag("span", record.get("topic"), class_="topic"),
                ),
                tag("div", statement, class_="small"),
                tag(
                    "div",
                    tag("span", f"{record.get('category')} · cites {cites}", class_="cites grow"),
                    remove,
                    class_="row",
                ),
                class_="record",
            )
        )
    return join(items)


def editor(draft: Draft) -> Markup:
    """The record being written (its quotes are managed by pack_maker.js) and the records."""
    form = tag(
        "form",
        field("Record id", "record_id", value=draft.next_record_id()),
        select("Role", "role", (("user", "user"), ("agent", "agent"))),
        field("Topic", "topic", "what it is about"),
        field("Category", "category", "e.g. preferences"),
        tag(
            "label",
            "Statement",
            tag(
                "textarea", name="statement", placeholder="optional: defaults to the quotes joined"
            ),
        ),
        field("Speaker", "speaker", "optional: from the quoted messages"),
        tag("h3", "Quotes"),
        tag(
            "div",
            tag("p", "No quotes yet: click a sentence.", class_="muted small"),
            id="quotes",
            class_="quotes",
        ),
        tag("div", id="check-result", class_="check-result", aria_live="polite"),
        tag(
            "button", "Add record", type="submit", id="add-record", class_="primary", disabled=True
        ),
        id="record-form",
        class_="stack",
        data_check=rooted(f"/{SLUG}/check"),
        data_add=rooted(f"/{SLUG}/records"),
    )
    return tag(
        "aside",
        card(
            tag("h2", "Record"),
            form,
            tag("h3", "Records in this pack", class_="spaced"),
            tag("div", records(draft), id="records", class_="records"),
        ),
    )


def build_card() -> Markup:
    """Title, destination and signature of the pack to build."""
    return card(
        tag("h2", "Build the pack"),
        post_form(
            f"/{SLUG}/build",
            "Build pack",
            tag(
                "div",
                field("Title", "title", "e.g. Tool library notes"),
                field("Description", "description", "optional"),
                class_="grid2",
            ),
            tag(
                "fieldset",
                tag("legend", "Where"),
                choice("Download as a zip", "destination", "zip", radio=True, on=True),
                choice(
                    "Write to a new folder on this machine", "destination", "folder", radio=True
                ),
                field("Folder (must not exist yet)", "folder", "/path/to/new-pack"),
            ),
            tag(
                "fieldset",
                tag("legend", "Signature (optional, with ssh-keygen)"),
                choice("Sign the pack", "sign"),
                field(
                    "Ed25519 private key (KEY.pub next to it; a .pub uses ssh-agent)",
                    "key",
                    "~/.ssh/pack-signing",
                ),
                tag(
                    "div",
                    field("Expires", "expires", "90d", "90d"),
                    field("Sequence", "sequence", "optional, e.g. 1"),
                    class_="grid2",
                ),
                tag(
                    "p",
                    "The key's passphrase, if it has one, is asked by ssh-keygen in the terminal "
                    "that runs the console (or use ssh-agent); it is never typed into this page.",
                    class_="muted small",
                ),
            ),
            id="build-form",
        ),
    )


def built(result: Built, name: str) -> Markup:
    """What was built: the files' hashes, the signature, how to check it, the download."""
    pack, signed = result.built, result.signed
    facts = [
        ("records", str(pack.record_count)),
        ("folder", "(download below)" if result.in_workspace else str(result.path)),
        *pack.file_hashes.items(),
    ]
    verify = f"affidavit pack verify {'DIR' if result.in_workspace else result.path}"
    if signed is not None:
        facts += [
            ("signed", f"created {signed.meta.created_utc}, expires {signed.meta.expires_utc}"),
            ("signer fingerprint", signed.fingerprint),
            ("trusted keys line", signed.allowed_signers_line),
        ]
        verify += f" {signed.pin_line} --strict"
    download = None
    if result.in_workspace:
        link = tag(
            "a",
            f"Download {name}.zip",
            href=f"/{SLUG}/download/{result.id}",
            download=f"{name}.zip",
        )
        download = tag("p", link)
    done = f" — {pack.record_count} records, verified" + (" and signed" if signed else "")
    return card(
        tag("div", tag("strong", "Built"), done, class_="notice ok"),
        tag(
            "dl",
            [join(tag("dt", label), tag("dd", value)) for label, value in facts],
            class_="facts",
        ),
        download,
        tag("p", "Check it as a host would:", class_="muted small"),
        tag("pre", verify),
        tag("p", tag("a", "Back to the pack maker", href=f"/{SLUG}/")),
        id="built",
    )
