"""Server-side HTML without a template engine: every page is built from :func:`tag` calls.

Text is escaped unless it is :class:`Markup` (something :func:`tag` built), so content from an
export, a pack or an audit log can never become markup: escaping is the default, not a step a
page might forget. Attribute names are Python names: ``class_`` is ``class`` and
``data_message_id`` is ``data-message-id``; ``True`` writes a bare attribute, ``None`` and
``False`` leave it out.

Pages write their links from the console's root (``/memory/``), but the console is served
under a secret path of each launch (``/<secret>/memory/``, ADR 0171): :func:`rooted` puts a
path under the root of the request being answered (:data:`URL_ROOT`, set by the guard), and
:func:`tag` does so by itself for ``href``, ``src``, ``action`` and ``formaction``. A path in
a ``data-`` attribute or in JSON, which cannot be told from text, is passed through
:func:`rooted` where it is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from html import escape

VOID = frozenset(("br", "hr", "img", "input", "link", "meta"))
URL_ATTRIBUTES = frozenset(("href", "src", "action", "formaction"))
URL_ROOT: ContextVar[str] = ContextVar("affidavit_console_url_root", default="")
"""The path the console is served under in the request being answered (``/<secret>``);
empty outside a request (the launch file) and for a request outside the root."""


def rooted(url: str) -> str:
    """``url`` under the console's root when it is a path on the console (``/...``)."""
    if url.startswith("/") and not url.startswith("//"):
        return URL_ROOT.get() + url
    return url


class Markup(str):
    """HTML that is already safe: inserted as it is."""

    __slots__ = ()


Child = Markup | str | int | float | None | Iterable["Child"]


def render(child: Child) -> str:
    """``child`` as HTML: Markup as is, text escaped, iterables joined, None as nothing."""
    if child is None or child is False:
        return ""
    if isinstance(child, Markup):
        return child
    if isinstance(child, str | int | float):
        return escape(str(child), quote=False)
    return "".join(render(item) for item in child)


def _attributes(attrs: dict[str, object]) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = rooted(str(value)) if name in URL_ATTRIBUTES else str(value)
        parts.append(f" {name}" if value is True else f' {name}="{escape(text)}"')
    return "".join(parts)


def tag(element: str, /, *children: Child, **attrs: object) -> Markup:
    """``<element attrs>children</element>`` (a void element such as ``input`` has none)."""
    opening = f"<{element}{_attributes(attrs)}>"
    if element in VOID:
        return Markup(opening)
    return Markup(f"{opening}{render(children)}</{element}>")


def join(*children: Child) -> Markup:
    """Several children as one piece of markup."""
    return Markup(render(children))


def document(
    title: str,
    header: Child,
    main: Child,
    scripts: Iterable[str] = (),
    refresh: str | None = None,
) -> Markup:
    """A whole page: the shared stylesheet, a header, the main content and page scripts
    (``refresh``: an address to go on to at once)."""
    head = tag(
        "head",
        tag("meta", charset="utf-8"),
        tag("meta", http_equiv="refresh", content=f"0;url={refresh}") if refresh else None,
        tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
        tag("meta", name="referrer", content="same-origin"),
        tag("title", f"{title} · affidavit console"),
        tag("link", rel="stylesheet", href="/static/console.css"),
        tag("link", rel="icon", href="/static/favicon.svg", type="image/svg+xml"),
        [tag("script", src=f"/static/{name}", defer=True) for name in scripts],
    )
    body = tag("body", header, tag("main", main))
    return Markup("<!doctype html>\n" + tag("html", head, body, lang="en"))
