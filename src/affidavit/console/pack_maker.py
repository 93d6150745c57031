"""The pack maker: load conversations, quote them in records, build (and sign) a pack.

The page shows the loaded conversations; clicking a sentence (or selecting words) adds a
quote to the record being written, and every change is checked at once by the builder's own
code (see :mod:`affidavit.console.pack_draft`), so a quote that is not verbatim is refused
with the message ``pack build`` would give. The pack is then built, and signed with
ssh-keygen if asked, into a folder on this machine or for download as a zip.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text, upload
from affidavit.console.html import Markup, join, tag
from affidavit.console.pack_draft import AUTO, Built, Draft, Signing, read_sources, zip_pack
from affidavit.core.errors import AffidavitError, UsageError

if TYPE_CHECKING:
    from affidavit.packs.sources import Sources

SLUG = "pack-maker"
MAX_JSON = 1024 * 1024
_SENTENCE = re.compile(r"\S.*?(?:[.!?…]+[\"'”’)\]]*(?=\s|$)|(?=\n)|$)", re.S)
_ROLE_OF_SPEAKER = {"user": "user", "assistant": "agent"}


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


def _load_card(error: Markup | None = None) -> Markup:
    formats = [
        (AUTO, "Detect (ChatGPT or Claude export; .jsonl = messages)"),
        ("chatgpt", "ChatGPT export (conversations.json or the .zip)"),
        ("claude", "Claude export (conversations.json or the .zip)"),
        ("messages", "messages.jsonl (as pack build --messages reads)"),
    ]
    return tag(
        "section",
        tag("h2", "Load conversations"),
        error,
        tag(
            "form",
            tag(
                "label",
                "Export file",
                tag("input", type="file", name="source_file", accept=".json,.zip,.jsonl"),
            ),
            tag("p", "or", class_="or"),
            tag(
                "label",
                "File on this machine",
                tag(
                    "input",
                    type="text",
                    name="source_path",
                    placeholder="/path/to/conversations.json",
                ),
            ),
            tag(
                "label",
                "Format",
                tag(
                    "select",
                    [tag("option", label, value=value) for value, label in formats],
                    name="format",
                ),
            ),
            tag("button", "Load", type="submit", class_="primary"),
            method="post",
            action=f"/{SLUG}/load",
            enctype="multipart/form-data",
            class_="stack",
        ),
        class_="card",
    )


def _threads(sources: Sources, current: int) -> Markup:
    return tag(
        "ul",
        [
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
        ],
        class_="threads",
    )


def _messages(sources: Sources, current: int) -> Markup:
    thread = sources.threads[current]
    articles = []
    for message_id in thread.message_ids:
        message = sources.messages[message_id]
        role = _ROLE_OF_SPEAKER.get(message.speaker, "user")
        articles.append(
            tag(
                "article",
                tag(
                    "div",
                    tag("span", f"#{message_id}", class_="id"),
                    tag("span", message.speaker),
                    tag("span", message.date),
                    class_="meta",
                ),
                tag(
                    "div",
                    sentences(message.text),
                    class_="text",
                    data_message_id=message_id,
                    data_role=role,
                ),
                class_=f"message {'user' if role == 'user' else 'agent'}",
            )
        )
    return tag(
        "section",
        tag("h2", thread.title),
        tag(
            "p",
            "Click a sentence, or select words, to quote it in the record.",
            class_="muted small",
        ),
        tag("div", articles, class_="messages"),
        class_="card",
    )


def _records(draft: Draft) -> Markup:
    if not draft.records:
        return tag("p", "No records yet.", class_="muted small")
    items = []
    for index, record in enumerate(draft.records):
        cites = ", ".join(f"#{q.get('message_id')}" for q in record.get("quotes", []))
        items.append(
            tag(
                "div",
                tag(
                    "div",
                    tag("span", record.get("record_id"), class_="mono"),
                    " ",
                    tag("span", record.get("topic"), class_="topic"),
                ),
                tag(
                    "div",
                    record.get("statement")
                    or " ".join(q.get("quote", "") for q in record.get("quotes", [])),
                    class_="small",
                ),
                tag(
                    "div",
                    tag("span", f"{record.get('category')} · cites {cites}", class_="cites grow"),
                    tag(
                        "form",
                        tag("button", "Remove", type="submit", class_="small"),
                        method="post",
                        action=f"/{SLUG}/records/{index}/delete",
                    ),
                    class_="row",
                ),
                class_="record",
            )
        )
    return join(items)


def _editor(draft: Draft) -> Markup:
    def field(label: str, name: str, placeholder: str = "", value: str = "") -> Markup:
        return tag(
            "label",
            label,
            tag("input", type="text", name=name, placeholder=placeholder, value=value or None),
        )

    return tag(
        "section",
        tag("h2", "Record"),
        tag(
            "form",
            field("Record id", "record_id", value=draft.next_record_id()),
            tag(
                "label",
                "Role",
                tag(
                    "select",
                    tag("option", "user", value="user"),
                    tag("option", "agent", value="agent"),
                    name="role",
                ),
            ),
            field("Topic", "topic", "what it is about"),
            field("Category", "category", "e.g. preferences"),
            tag(
                "label",
                "Statement",
                tag(
                    "textarea",
                    name="statement",
                    placeholder="optional: defaults to the quotes joined",
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
                "button",
                "Add record",
                type="submit",
                id="add-record",
                class_="primary",
                disabled=True,
            ),
            id="record-form",
            class_="stack",
            data_check=f"/{SLUG}/check",
            data_add=f"/{SLUG}/records",
        ),
        tag("h3", "Records in this pack"),
        tag("div", _records(draft), id="records", class_="records"),
        class_="card",
    )


def _build_card() -> Markup:
    def field(label: str, name: str, placeholder: str = "", value: str | None = None) -> Markup:
        return tag(
            "label",
            label,
            tag("input", type="text", name=name, placeholder=placeholder, value=value),
        )

    return tag(
        "section",
        tag("h2", "Build the pack"),
        tag(
            "form",
            tag(
                "div",
                tag("div", field("Title", "title", "e.g. Tool library notes"), class_="grow"),
                tag("div", field("Description", "description", "optional"), class_="grow"),
                class_="row",
            ),
            tag(
                "fieldset",
                tag("legend", "Where"),
                tag(
                    "label",
                    tag("input", type="radio", name="destination", value="zip", checked=True),
                    "Download as a zip",
                    class_="check",
                ),
                tag(
                    "label",
                    tag("input", type="radio", name="destination", value="folder"),
                    "Write to a new folder on this machine:",
                    class_="check",
                ),
                field("Folder (must not exist yet)", "folder", "/path/to/new-pack"),
            ),
            tag(
                "fieldset",
                tag("legend", "Signature (optional, with ssh-keygen)"),
                tag(
                    "label",
                    tag("input", type="checkbox", name="sign", value="1"),
                    "Sign the pack",
                    class_="check",
                ),
                field(
                    "Ed25519 private key (KEY.pub next to it; a .pub uses ssh-agent)",
                    "key",
                    "~/.ssh/pack-signing",
                ),
                tag(
                    "div",
                    tag("div", field("Expires", "expires", "90d", "90d"), class_="grow"),
                    tag("div", field("Sequence", "sequence", "optional, e.g. 1"), class_="grow"),
                    class_="row",
                ),
                tag(
                    "p",
                    "The key's passphrase, if it has one, is asked by ssh-keygen in the terminal that "
                    "runs the console (or use ssh-agent); it is never typed into this page.",
                    class_="muted small",
                ),
            ),
            tag("button", "Build pack", type="submit", class_="primary"),
            method="post",
            action=f"/{SLUG}/build",
            class_="stack",
            id="build-form",
        ),
        class_="card",
    )


def _built(result: Built, name: str) -> Markup:
    built, signed = result.built, result.signed
    facts = [
        join(tag("dt", "records"), tag("dd", built.record_count)),
        join(
            tag("dt", "folder"),
            tag("dd", "(download below)" if result.in_workspace else str(result.path)),
        ),
        *(join(tag("dt", file), tag("dd", digest)) for file, digest in built.file_hashes.items()),
    ]
    verify = f"affidavit pack verify {'DIR' if result.in_workspace else result.path}"
    if signed is not None:
        facts += [
            join(
                tag("dt", "signed"),
                tag("dd", f"created {signed.meta.created_utc}, expires {signed.meta.expires_utc}"),
            ),
            join(tag("dt", "signer fingerprint"), tag("dd", signed.fingerprint)),
            join(tag("dt", "trusted keys line"), tag("dd", signed.allowed_signers_line)),
        ]
        verify += f" {signed.pin_line} --strict"
    download = (
        tag(
            "p",
            tag(
                "a",
                f"Download {name}.zip",
                href=f"/{SLUG}/download/{result.id}",
                class_="button",
                download=f"{name}.zip",
            ),
        )
        if result.in_workspace
        else None
    )
    return tag(
        "section",
        notice(
            "ok",
            tag("strong", "Built"),
            f" — {built.record_count} records, verified" + (" and signed" if signed else ""),
        ),
        tag("dl", facts, class_="facts"),
        download,
        tag("p", "Check it as a host would:", class_="muted small"),
        tag("pre", verify),
        tag("p", tag("a", "Back to the pack maker", href=f"/{SLUG}/")),
        class_="card",
        id="built",
    )


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:60] or "pack"


async def _json(request: Request) -> dict[str, Any]:
    body = await request.body()
    if len(body) > MAX_JSON:
        raise UsageError("the record is too large", "quote less text")
    try:
        data = json.loads(body)
    except ValueError:
        raise UsageError("the record is not JSON") from None
    record = data.get("record") if isinstance(data, dict) else None
    if not isinstance(record, dict):
        raise UsageError("no record was sent")
    return record


def section(console: Console) -> Section:
    """The pack maker."""
    draft = Draft()

    def show(*extra: Markup, thread: int = 0, status: int = 200) -> HTMLResponse:
        heading = [
            tag("h1", "Pack maker"),
            tag(
                "p",
                "Quote your conversations in records; every quote is checked verbatim as you write, "
                "and the pack is built and verified by the same code as `affidavit pack build`.",
                class_="lead",
            ),
        ]
        sources = draft.sources
        if sources is None:
            return console.page(
                "Pack maker", [heading, extra, _load_card()], active=SLUG, status=status
            )
        thread = thread if 0 <= thread < len(sources.threads) else 0
        loaded = tag(
            "div",
            tag(
                "span",
                tag("strong", sources.label),
                f" — {len(sources.threads)} conversations, {len(sources.messages)} messages",
                class_="grow",
            ),
            tag(
                "form",
                tag("button", "Load other conversations", type="submit"),
                method="post",
                action=f"/{SLUG}/clear",
            ),
            class_="row card",
        )
        body = tag(
            "div",
            tag("aside", tag("h3", "Conversations"), _threads(sources, thread), class_="card"),
            _messages(sources, thread)
            if sources.threads
            else tag("section", "No messages.", class_="card"),
            tag("aside", _editor(draft)),
            class_="maker",
        )
        return console.page(
            "Pack maker",
            [heading, extra, loaded, body, _build_card()],
            active=SLUG,
            scripts=["pack_maker.js"],
            status=status,
        )

    async def index(request: Request) -> HTMLResponse:
        try:
            thread = int(request.query_params.get("thread", "0"))
        except ValueError:
            thread = 0
        return show(thread=thread)

    async def load(request: Request) -> Response:
        try:
            form = await read_form(request)
            file, path = upload(form, "source_file"), text(form, "source_path")
            if (file is None) == (not path):
                raise UsageError("give either a file to upload or a path, not both or neither")
            if file is not None:
                name, raw = file.filename or "upload", await file.read()
            else:
                from affidavit.exports.places import read_file

                local = local_path("the file", path)
                name, raw = local.name, await run_in_threadpool(read_file, local)
            sources = await run_in_threadpool(read_sources, name, raw, text(form, "format") or AUTO)
        except AffidavitError as exc:
            return show(notice("error", str(exc)), status=400)
        draft.load(sources)
        return RedirectResponse(f"/{SLUG}/", status_code=303)

    async def clear(request: Request) -> Response:
        draft.clear()
        return RedirectResponse(f"/{SLUG}/", status_code=303)

    async def check(request: Request) -> JSONResponse:
        try:
            record = draft.check(await _json(request))
        except AffidavitError as exc:
            return JSONResponse({"ok": False, "error": str(exc)})
        return JSONResponse({"ok": True, "record": record})

    async def add(request: Request) -> JSONResponse:
        try:
            record = draft.add(await _json(request))
        except AffidavitError as exc:
            return JSONResponse({"ok": False, "error": str(exc)})
        return JSONResponse(
            {
                "ok": True,
                "record": record,
                "records_html": str(_records(draft)),
                "next_id": draft.next_record_id(),
            }
        )

    async def remove(request: Request) -> Response:
        try:
            draft.remove(int(request.path_params["index"]))
        except (AffidavitError, ValueError) as exc:
            return show(notice("error", str(exc)), status=404)
        return RedirectResponse(f"/{SLUG}/", status_code=303)

    async def build(request: Request) -> Response:
        try:
            form = await read_form(request, max_files=0)
            title = text(form, "title")
            folder = None
            if text(form, "destination") == "folder":
                folder = local_path("the folder", text(form, "folder"))
            signing = None
            if text(form, "sign"):
                if not text(form, "key"):
                    raise UsageError(
                        "signing needs a key", "name the Ed25519 private key (or its .pub)"
                    )
                key = local_path("the key", text(form, "key"))
                signing = Signing.parse(key, text(form, "expires"), text(form, "sequence"))
            scratch = console.scratch("build-")
            result = await run_in_threadpool(
                draft.build, scratch, title, text(form, "description") or None, folder, signing
            )
        except AffidavitError as exc:
            return show(notice("error", str(exc)), status=400)
        page = [tag("h1", "Pack built"), _built(result, _slug(title))]
        return console.page("Pack built", page, active=SLUG)

    async def download(request: Request) -> Response:
        result = draft.builds.get(request.path_params["build"])
        if result is None or not result.in_workspace:
            return show(
                notice("error", "that build is not here any more; build the pack again"), status=404
            )
        name = _slug(result.title)
        data = await run_in_threadpool(zip_pack, result.path, name)
        return Response(
            data,
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{name}.zip"'},
        )

    return Section(
        slug=SLUG,
        title="Pack maker",
        summary="Load a ChatGPT or Claude export, quote it in records, build and sign a pack.",
        routes=[
            Route("/", index),
            Route("/load", load, methods=["POST"]),
            Route("/clear", clear, methods=["POST"]),
            Route("/check", check, methods=["POST"]),
            Route("/records", add, methods=["POST"]),
            Route("/records/{index:int}/delete", remove, methods=["POST"]),
            Route("/build", build, methods=["POST"]),
            Route("/download/{build}", download),
        ],
    )
