"""What every part of the console shares: its settings, a private workspace and the page frame.

A part of the console is a :class:`Section`: a slug (its URL prefix), a title for the nav, a
line for the home page and its routes. The sections are listed in
:data:`affidavit.console.app.SECTIONS`; adding one is one module with a
``section(console)`` function and one line there.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute

from affidavit.console.html import Child, Markup, document, tag
from affidavit.console.settings import ConsoleSettings


@dataclass(frozen=True)
class Section:
    """One part of the console: a nav entry, a card on the home page, and its routes (their
    paths are relative to ``/slug``)."""

    slug: str
    title: str
    summary: str
    routes: Sequence[BaseRoute]


@dataclass
class Console:
    """The state one launch of the console shares between its sections."""

    settings: ConsoleSettings
    workspace: Path
    nav: list[tuple[str, str]] = field(default_factory=list)

    def page(
        self,
        title: str,
        main: Child,
        *,
        active: str | None = None,
        scripts: Iterable[str] = (),
        status: int = 200,
    ) -> HTMLResponse:
        """A whole page in the console's frame, with ``active`` marked in the nav."""
        links = [
            tag("a", label, href=f"/{slug}/", class_="active" if slug == active else None)
            for slug, label in self.nav
        ]
        header = tag(
            "header",
            tag("a", tag("span", "affidavit", class_="mark"), " console", href="/", class_="brand"),
            tag("nav", links),
        )
        return HTMLResponse(document(title, header, main, scripts), status_code=status)

    def scratch(self, prefix: str) -> Path:
        """A new private directory inside the workspace (uploads, builds); removed on exit."""
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.workspace))


def notice(kind: str, *text: Child) -> Markup:
    """A coloured message box: ``kind`` is ``ok``, ``error``, ``warn`` or ``info``."""
    return tag("div", *text, class_=f"notice {kind}", role="alert" if kind == "error" else None)
