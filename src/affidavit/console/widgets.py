"""The few building blocks every console page uses: cards, fields and forms."""

from __future__ import annotations

from collections.abc import Sequence

from affidavit.console.html import Child, Markup, tag


def card(*children: Child, **attrs: object) -> Markup:
    """A white panel."""
    return tag("section", *children, class_="card", **attrs)


def field(label: str, name: str, placeholder: str = "", value: str | None = None) -> Markup:
    """A labelled one-line text input."""
    return tag(
        "label", label, tag("input", type="text", name=name, placeholder=placeholder, value=value)
    )


def choice(
    label: str, name: str, value: str = "1", *, radio: bool = False, on: bool = False
) -> Markup:
    """A labelled checkbox (or radio button)."""
    kind = "radio" if radio else "checkbox"
    box = tag("input", type=kind, name=name, value=value, checked=on)
    return tag("label", box, label, class_="check")


def select(label: str, name: str, options: Sequence[tuple[str, str]], chosen: str = "") -> Markup:
    """A labelled drop-down of ``(value, text)`` options."""
    items = [tag("option", text, value=value, selected=value == chosen) for value, text in options]
    return tag("label", label, tag("select", items, name=name))


def post_form(
    action: str, button: str, *children: Child, upload: bool = False, **attrs: object
) -> Markup:
    """A form that POSTs ``children`` to ``action`` and ends in its primary button."""
    return tag(
        "form",
        *children,
        tag("button", button, type="submit", class_="primary"),
        method="post",
        action=action,
        enctype="multipart/form-data" if upload else None,
        **{"class_": "stack", **attrs},
    )


def button_form(action: str, button: str, form_id: str, *, danger: bool = False) -> Markup:
    """A lone button that POSTs nothing but itself to ``action`` (red when ``danger``)."""
    return tag(
        "form",
        tag("button", button, type="submit", class_="danger" if danger else None),
        method="post",
        action=action,
        id=form_id,
    )


def confirm_form(
    action: str, label: str, cancel: str, fields: dict[str, str], *, danger: bool
) -> Markup:
    """The second step of a destructive action: POSTs ``fields`` again to ``action`` with
    ``confirm=yes``; "Yes, <label> it" (red when ``danger``) or a Cancel link to ``cancel``.

    Every confirm page of the console posts the same shape, so the routes check one field.
    """
    hidden = [tag("input", type="hidden", name=name, value=value) for name, value in fields.items()]
    return tag(
        "form",
        hidden,
        tag("input", type="hidden", name="confirm", value="yes"),
        tag(
            "div",
            tag(
                "button",
                f"Yes, {label.lower()} it",
                type="submit",
                class_="primary danger" if danger else "primary",
            ),
            tag("a", "Cancel", href=cancel),
            class_="row",
        ),
        method="post",
        action=action,
        id="confirm-form",
    )


def table(columns: Sequence[str], rows: Sequence[Sequence[Child]], **attrs: object) -> Markup:
    """A table with a header row of ``columns``."""
    head = tag("thead", tag("tr", [tag("th", column) for column in columns]))
    body = tag("tbody", [tag("tr", [tag("td", cell) for cell in row]) for row in rows])
    return tag("table", head, body, **attrs)
