"""The console as one Starlette application: the guard, the home page, assets and sections.

Sections are imported by name when the app is made; each imports the plane it shows only
inside its handlers, so starting the console costs Starlette and these small modules only.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable
from importlib import resources
from pathlib import PurePath

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from affidavit.console.context import Console, Section, notice
from affidavit.console.guard import Guard
from affidavit.console.html import tag

SECTIONS = (
    "affidavit.console.memory",
    "affidavit.console.pack_maker",
    "affidavit.console.pack_check",
    "affidavit.console.proxy_calls",
)
"""The console's sections, in nav order: modules with a ``section(console)`` function."""
MAX_BODY = 256 * 1024 * 1024
"""The largest request (an uploaded export); larger files are read from a path instead."""
_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}


def load_sections(console: Console) -> list[Section]:
    """Every section, made for ``console``; fills the console's nav."""
    sections = [importlib.import_module(name).section(console) for name in SECTIONS]
    console.nav = [(section.slug, section.title) for section in sections]
    return sections


def _static_files() -> dict[str, tuple[bytes, str]]:
    """The console's own assets, read once from the package (nothing comes from a CDN)."""
    folder = resources.files("affidavit.console") / "static"
    return {
        item.name: (item.read_bytes(), _TYPES[PurePath(item.name).suffix])
        for item in folder.iterdir()
        if PurePath(item.name).suffix in _TYPES
    }


def _home(console: Console, sections: list[Section]) -> Route:
    def home(request: Request) -> HTMLResponse:
        cards = [
            tag(
                "a",
                tag("h2", section.title),
                tag("p", section.summary),
                href=f"/{section.slug}/",
                class_="card link",
            )
            for section in sections
        ]
        intro = tag(
            "p",
            "Everything here runs on this machine; nothing is fetched from the network.",
            class_="lead",
        )
        return console.page(
            "Home", [tag("h1", "affidavit console"), intro, tag("div", cards, class_="cards")]
        )

    return Route("/", home)


def _static() -> Route:
    files = _static_files()

    def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return Response("not found", status_code=404, media_type="text/plain")
        data, media_type = found
        return Response(data, media_type=media_type)

    return Route("/static/{name}", static)


class ContainErrors:
    """A bug becomes a one-line page and one line on stderr, never a traceback to the user
    (the traceback is printed only with ``AFFIDAVIT_DEBUG=1``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watching(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watching)
        except Exception as exc:
            if os.environ.get("AFFIDAVIT_DEBUG") == "1":
                traceback.print_exc()
            line = f"internal error ({type(exc).__name__}: {exc})"
            print(f"affidavit console: {line}", file=sys.stderr, flush=True)
            if not started and scope["type"] == "http":
                body = notice("error", line, "; rerun with AFFIDAVIT_DEBUG=1 for details.")
                await HTMLResponse(str(body), status_code=500)(scope, receive, send)


def create_app(
    console: Console,
    *,
    address: str,
    port: int,
    root: str,
    token: str,
    on_login: Callable[[], None],
) -> Starlette:
    """The console app behind its guard, served at ``http://address:port/root/``."""
    sections = load_sections(console)
    routes = [
        _home(console, sections),
        _static(),
        *(Mount(f"/{section.slug}", routes=list(section.routes)) for section in sections),
    ]
    middleware = [
        Middleware(Guard, address=address, port=port, root=root, token=token, on_login=on_login),
        Middleware(RequestBodyLimitMiddleware, max_body_size=MAX_BODY),
        Middleware(ContainErrors),
    ]
    return Starlette(routes=routes, middleware=middleware)
