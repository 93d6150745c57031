"""The memory section's Review page: the candidates ``affidavit hook run`` captured, each to
accept (as it is, or reworded, into a chosen namespace) or drop; and, when the vault's
``auto_store`` setting is on, the daily digest of what capture stored without asking
(:func:`affidavit.intake.digest`), each memory linked to its page to correct or forget it.

The page calls what ``affidavit review accept`` and ``review drop`` call
(:func:`affidavit.intake.accept`, :func:`affidavit.intake.drop`), so a candidate accepted here
goes through the same claim rules and duplicate check and leaves quarantine the same way. Like
every change in the section, the first POST only shows what would happen; the second, sent
from that confirmation, does it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from affidavit.console.context import notice
from affidavit.console.forms import read_form, text
from affidavit.console.html import Child, Markup, tag
from affidavit.console.memory_pages import SLUG, memory_link
from affidavit.console.widgets import card, confirm_form
from affidavit.core.errors import AffidavitError, UsageError

if TYPE_CHECKING:
    from affidavit.intake import Candidate, DigestDay
    from affidavit.recall import Memory

Page = Callable[..., HTMLResponse]
Guarded = Callable[[str, Callable[["Memory"], Response]], Awaitable[Response]]
TAB = "review"
BASE = f"/{SLUG}/{TAB}"
ACTIONS = {
    "accept": (
        "Accept",
        "It is stored as a memory (the claim rules and the duplicate check of any store) and "
        "leaves the review list.",
    ),
    "drop": ("Drop", "It is forgotten without being stored."),
}


def review_link(waiting: int) -> Markup:
    """The overview's pointer to the Review page, with how many candidates wait there."""
    count = f"{waiting} captured candidate{'' if waiting == 1 else 's'} waiting for review"
    return card(
        tag("h2", "Captured candidates"),
        tag("p", tag("a", count, href=BASE, id="review-link", data_waiting=waiting)),
        tag(
            "p",
            "Claims `affidavit hook run` took from an agent's session; search never returns "
            "them until they are accepted.",
            class_="muted small",
        ),
        id="review-summary",
    )


def _about(c: Candidate) -> Markup:
    """A candidate's kind, source and capture time, as one line of chips."""
    return tag(
        "div",
        tag("span", c.category, class_="chip kind"),
        tag("span", "source: ", c.source, class_="meta source"),
        tag("span", "captured ", c.captured_at or "—", class_="meta"),
        tag("span", "with proof, checked again on accept", class_="meta") if c.evidence else None,
        class_="facts-line",
    )


def _item(c: Candidate, namespace: str) -> Markup:
    """One candidate and its form: the text and namespace to accept it with (the one it was
    proposed for, else ``namespace``, the caller's own, unless changed), and its two buttons
    (Drop posts the same form to the drop address, which reads neither field)."""
    form = tag(
        "form",
        tag("label", "Text to store", tag("textarea", c.text, name="text")),
        tag(
            "div",
            tag(
                "label",
                "Namespace",
                tag("input", type="text", name="namespace", value=c.namespace or namespace),
            ),
            tag("button", "Accept…", type="submit", class_="primary accept"),
            tag(
                "button",
                "Drop…",
                type="submit",
                formaction=f"{BASE}/{c.id}/drop",
                class_="danger drop",
            ),
            class_="row review-actions",
        ),
        method="post",
        action=f"{BASE}/{c.id}/accept",
        class_="stack",
    )
    return tag(
        "li",
        tag("blockquote", c.text, class_="text"),
        _about(c),
        tag("p", tag("span", c.id, class_="mono"), class_="muted small"),
        form,
        class_="hit candidate",
        data_id=c.id,
    )


def review_card(waiting: Sequence[Candidate], namespace: str) -> Markup:
    """Every candidate waiting, oldest first, or that there is none; each accepted into
    ``namespace`` (the caller's own) unless the form says otherwise."""
    body: Child = (
        tag("ul", [_item(c, namespace) for c in waiting], class_="hits", id="candidates")
        if waiting
        else tag("p", "No candidates waiting.", class_="muted", id="candidates")
    )
    return card(
        tag("h2", f"Captured candidates ({len(waiting)})"),
        tag(
            "p",
            "Accept stores one as a memory (edit its wording and pick its namespace first if you "
            "like), as `affidavit review accept ID [--edit TEXT] [--namespace NS]` does; drop "
            "forgets it. Each asks for confirmation first.",
            class_="muted small",
        ),
        body,
        id="review",
    )


def digest_card(days: Sequence[DigestDay], auto_store: bool) -> Markup | None:
    """What capture stored without review, day by day (newest first); None when auto_store
    is off and nothing was stored that way recently."""
    if not days and not auto_store:
        return None
    body: Child = (
        [
            tag(
                "section",
                tag("h3", day.day, " — ", f"{len(day.memories)} stored"),
                tag(
                    "ul",
                    [
                        tag(
                            "li",
                            memory_link(m["id"], m["text"]),
                            tag("span", " superseded", class_="chip warn")
                            if m.get("superseded_by")
                            else None,
                            tag("span", " ", m["source"], class_="meta source"),
                            class_="digest-memory",
                            data_id=m["id"],
                        )
                        for m in day.memories
                    ],
                ),
                class_="digest-day",
                data_day=day.day,
            )
            for day in days
        ]
        if days
        else tag("p", "Nothing stored without review in the last 7 days.", class_="muted")
    )
    return card(
        tag("h2", "Stored without review (last 7 days)"),
        tag(
            "p",
            "With the `auto_store` setting "
            + ("on" if auto_store else "off (it was on earlier)")
            + ", capture stores the facts, preferences and decisions you state plainly; the "
            "assistant's words, corrections and hedged sentences still wait above. Open one to "
            "correct or forget it.",
            class_="muted small",
        ),
        body,
        id="digest",
    )


def _confirmation(c: Candidate, action: str, fields: dict[str, str]) -> Markup:
    """What the second POST will do, with the fields it will send again."""
    label, consequence = ACTIONS[action]
    edited = action == "accept" and fields["text"] != c.text
    return card(
        tag("h2", f"{label} this candidate?"),
        tag("blockquote", c.text),
        _about(c),
        tag("p", "Stored with your wording:", class_="muted") if edited else None,
        tag("blockquote", fields["text"], class_="proposed") if edited else None,
        tag("p", "Into namespace ", tag("b", fields["namespace"])) if action == "accept" else None,
        notice("warn", consequence),
        confirm_form(
            f"{BASE}/{c.id}/{action}",
            label,
            BASE,
            fields if action == "accept" else {},
            danger=action != "accept",
        ),
        id="confirm",
    )


def _accepted(memory: Memory, c: Candidate, fields: dict[str, str]) -> Markup:
    """Accept ``c`` as the CLI does; what happened, as a notice."""
    from affidavit.intake import accept
    from affidavit.recall import views

    wording = None if fields["text"] == c.text else fields["text"]
    outcome = accept(memory, c.id, text=wording, namespace=fields["namespace"])
    said = views.store_json(outcome)
    if outcome["id"] is None:
        return notice("warn", f"Not stored ({said['status']}): {said['reason']}.")
    return notice(
        "ok",
        f"Accepted ({said['status']}): ",
        memory_link(outcome["id"]),
        f" in {outcome['namespace']}.",
    )


def review_routes(page: Page, guarded: Guarded) -> list[Route]:
    """The Review page and its two changes, in the section's frame (``page``) and behind its
    locked-vault handling (``guarded``)."""

    def listing(memory: Memory, *above: Child, status: int = 200) -> HTMLResponse:
        from affidavit.intake import candidates, digest
        from affidavit.recall import AUTO_STORE_SETTING

        waiting = review_card(candidates(memory), memory.namespace)
        auto = memory.vault.get_setting(AUTO_STORE_SETTING, False) is True
        stored = digest_card(digest(memory), auto)
        return page("Review", TAB, *above, waiting, stored, status=status)

    async def show(request: Request) -> Response:
        return await guarded(TAB, listing)

    async def act(request: Request) -> Response:
        candidate_id = request.path_params["candidate_id"]
        action = request.path_params["action"]
        if action not in ACTIONS:
            return Response("not found", status_code=404, media_type="text/plain")
        form = await read_form(request, max_files=0)
        fields = {
            "text": text(form, "text"),
            "namespace": text(form, "namespace"),
        }

        def work(memory: Memory) -> Response:
            from affidavit.intake import candidate, drop

            fields["namespace"] = fields["namespace"] or memory.namespace
            c = candidate(memory, candidate_id)
            if action == "accept" and not fields["text"]:
                raise UsageError("the text to store is empty", "write the memory, or drop it")
            if text(form, "confirm") != "yes":
                return page(f"{ACTIONS[action][0]}?", TAB, _confirmation(c, action, fields))
            if action == "drop":
                drop(memory, c.id)
                return listing(memory, notice("ok", f"Dropped candidate {c.id}."))
            try:
                done = _accepted(memory, c, fields)
            except AffidavitError as exc:  # refused by the claim rules: still waiting
                return listing(memory, notice("error", str(exc)), status=400)
            return listing(memory, done)

        return await guarded(TAB, work)

    return [
        Route(f"/{TAB}", show),
        Route(f"/{TAB}/{{candidate_id}}/{{action}}", act, methods=["POST"]),
    ]
