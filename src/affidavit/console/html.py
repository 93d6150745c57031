"""Server-side HTML without a template engine: every page is built from :func:`tag` calls.

Text is escaped unless it is :class:`Markup` (something :func:`tag` built), so content from an
export, a pack or an audit log can never become markup: escaping is the default, not a step a
page might forget. Attribute names are Python names: ``class_`` is ``class`` and
``data_message_id`` is ``data-message-id``; ``True`` writes a bare attribute, ``None`` and
``False`` leave it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

VOID = frozenset(("br", "hr", "img", "input", "link", "meta"))


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
        parts.append(f" {name}" if value is True else f' {name}="{escape(str(value))}"')
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
