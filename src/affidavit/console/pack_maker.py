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
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from affidavit.console.context import Console, Section, notice
from affidavit.console.forms import local_path, read_form, text, upload
from affidavit.console.html import Markup, tag
from affidavit.console.pack_draft import AUTO, Draft, Signing, read_sources, zip_pack
from affidavit.console.pack_maker_pages import (
    SLUG,
    build_card,
    built,
    editor,
    load_card,
    loaded_bar,
    messages,
    records,
    threads,
)
from affidavit.core.errors import AffidavitError, UsageError

MAX_JSON = 1024 * 1024
INTRO = tag(
    "p",
    "Quote your conversations in records; every quote is checked verbatim as you write, and the "
    "pack is built and verified by the same code as `affidavit pack build`.",
    class_="lead",
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
        heading = [tag("h1", "Pack maker"), INTRO]
        sources = draft.sources
        if sources is None:
            page = [heading, extra, load_card()]
            return console.page("Pack maker", page, active=SLUG, status=status)
        thread = thread if 0 <= thread < len(sources.threads) else 0
        body = tag(
            "div",
            threads(sources, thread),
            messages(sources, thread),
            editor(draft),
            class_="maker",
        )
        return console.page(
            "Pack maker",
            [heading, extra, loaded_bar(sources), body, build_card()],
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
                from affidavit.exports import read_file

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
                "records_html": str(records(draft)),
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
        page = [tag("h1", "Pack built"), built(result, _slug(title))]
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
