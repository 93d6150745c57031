"""How the memory section draws a memory, a search hit and why it matched, a history, and
the locked vault. Pure rendering: values in (recall's typed values), markup out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from affidavit.console.html import Child, Markup, join, rooted, tag
from affidavit.console.widgets import card, field, post_form, select, table
from affidavit.recall import MemoryKind

SLUG = "memory"
TABS = (
    ("", "Search"),
    ("graph", "Relations"),
    ("overview", "Overview"),
    ("import", "Import"),
    ("review", "Review"),
)


def tabs(active: str) -> Markup:
    """The section's own tabs."""
    links = [
        tag("a", label, href=f"/{SLUG}/{path}", class_="active" if path == active else None)
        for path, label in TABS
    ]
    return tag("nav", links, class_="tabs")


def memory_link(memory_id: str, text: Child | None = None) -> Markup:
    """A link to a memory's page."""
    return tag("a", text if text is not None else memory_id, href=f"/{SLUG}/m/{memory_id}")


def evidence_chip(view: Mapping[str, Any]) -> Markup:
    """Whether a memory's evidence holds now: proven, stale (the reasons on hover) or
    unproven (it has none)."""
    evidence = view.get("evidence")
    status = evidence["status"] if evidence else "unproven"
    reasons = "; ".join(evidence.get("reasons", [])) if evidence else ""
    return tag(
        "span",
        status,
        class_=f"chip evidence-status {status}",
        data_evidence=status,
        title=reasons or None,
    )


def facts(view: Mapping[str, Any]) -> Markup:
    """Evidence status, source, dates, kind, namespace and tags of a memory, as one line of
    chips."""
    chips: list[Child] = [
        evidence_chip(view),
        tag("span", view.get("kind", "fact"), class_="chip kind"),
        tag("span", "ns ", tag("b", view["namespace"]), class_="chip ns"),
        [tag("span", "#", t, class_="chip tag") for t in view.get("tags", [])],
        tag("span", "source: ", view.get("source") or "—", class_="meta source"),
        tag("span", "saved ", view["saved_at"][:10], class_="meta", title=view["saved_at"]),
        tag("span", "learned ", view["discovered"], class_="meta")
        if view.get("discovered")
        else None,
        tag("span", "expires ", view["expires"], class_="meta") if view.get("expires") else None,
        tag("span", "affirmed ", view["affirmed"][:10], class_="meta")
        if view.get("affirmed")
        else None,
    ]
    return tag("div", chips, class_="facts-line")


def why_matched(hit: Mapping[str, Any]) -> Markup:
    """The channels that found a hit and the parts its score is made of."""
    parts = hit["parts"]
    channels = [tag("span", name, class_=f"chip channel {name}") for name in hit["channels"]]
    terms = [
        ("semantic", parts.semantic, f"meaning: cosine {parts.cosine:.2f}"),
        ("literal", parts.literal, "the question's words"),
        ("exact", parts.exact, "an id or name written in the question"),
        ("context", parts.context, "its conversation's neighbours"),
    ]
    shown = [
        tag("li", tag("b", name), f" {value:.3f}", tag("span", f" ({why})", class_="muted"))
        for name, value, why in terms
        if value > 0
    ]
    factors = [f"prior ×{parts.prior:.2f}"]
    if parts.date != 1:
        factors.append(f"date ×{parts.date:.2f}")
    if parts.page < 0.9995:
        factors.append(f"repeats the page ×{parts.page:.2f}")
    return tag(
        "div",
        tag("span", "why: ", class_="muted"),
        channels,
        tag("ul", shown, class_="parts"),
        tag("span", " · ".join(factors), f" = {hit['score']:.3f}", class_="muted small"),
        class_="why",
    )


def hit_item(hit: Mapping[str, Any]) -> Markup:
    """One search result."""
    return tag(
        "li",
        tag("div", memory_link(hit["id"], hit["text"]), class_="text"),
        tag("div", hit["warning"], class_="notice warn small") if hit.get("warning") else None,
        facts(hit),
        why_matched(hit),
        class_="hit",
        data_id=hit["id"],
        data_score=f"{hit['score']:.4f}",
    )


def results(page: Mapping[str, Any], query: str) -> Markup:
    """A search's answer: the hits, or why there are none."""
    hits = page["results"]
    mode = "meaning and words" if page["semantic"] else "words only (no embedding model)"
    head = tag(
        "p",
        f"{len(hits)} memor{'y' if len(hits) == 1 else 'ies'} for ",
        tag("b", query),
        f" · searched by {mode}",
        class_="muted small",
    )
    body: Child = (
        tag("ol", [hit_item(hit) for hit in hits], class_="hits")
        if hits
        else tag("p", "Nothing in the vault holds up for this question.", class_="muted")
    )
    return tag(
        "div",
        head,
        body,
        tag("p", page["notice"], class_="muted small notice-line"),
        id="results",
        data_query=query,
    )


def search_form(values: Mapping[str, str], namespaces: Sequence[str]) -> Markup:
    """The question and its filters (a GET form: the address holds the search)."""
    everything = [("", "all")]
    return tag(
        "form",
        tag(
            "div",
            tag(
                "label",
                "Question",
                tag(
                    "input",
                    type="search",
                    name="q",
                    value=values.get("q") or None,
                    placeholder="what do you want to recall?",
                    autofocus=True,
                ),
                class_="grow",
            ),
            tag("button", "Search", type="submit", class_="primary"),
            class_="row",
        ),
        tag(
            "div",
            select(
                "Namespace",
                "namespace",
                everything + [(n, n) for n in namespaces],
                values.get("namespace", ""),
            ),
            select(
                "Kind",
                "kind",
                [("", "all"), *((kind.value, kind.value) for kind in MemoryKind)],
                values.get("kind", ""),
            ),
            field("Tag", "tag", "any", values.get("tag") or None),
            tag(
                "label",
                "Saved since",
                tag("input", type="date", name="since", value=values.get("since") or None),
            ),
            tag(
                "label",
                "Saved until",
                tag("input", type="date", name="until", value=values.get("until") or None),
            ),
            class_="filters",
        ),
        method="get",
        action=f"/{SLUG}/",
        id="search-form",
        data_results=rooted(f"/{SLUG}/results"),
    )


def memory_block(view: Mapping[str, Any], *, heading: bool = False) -> Markup:
    """A memory's text and facts (``heading``: as the page's title)."""
    text = tag("h1", view["text"]) if heading else tag("div", memory_link(view["id"], view["text"]))
    state = None
    if view.get("superseded_by"):
        state = tag(
            "div",
            "Superseded by ",
            memory_link(view["superseded_by"]),
            class_="notice warn small",
            id="superseded-notice",
        )
    return join(
        text,
        tag("div", view["warning"], class_="notice warn small") if view.get("warning") else None,
        state,
        facts(view),
        tag("p", tag("span", view["id"], class_="mono"), class_="muted small"),
    )


def memory_list(views: Sequence[Mapping[str, Any]], empty: str, list_id: str) -> Markup:
    """Memories as a short list, or ``empty``."""
    if not views:
        return tag("p", empty, class_="muted small", id=list_id)
    return tag("ul", [tag("li", memory_block(v)) for v in views], class_="memlist", id=list_id)


def history_card(history: Mapping[str, Any]) -> Markup:
    """Corrections both ways, conflicts, and the writes the audit chain recorded."""
    rows = [
        (tag("span", f"#{e['n']}", class_="mono"), e["at"], tag("b", e["what"]), e["op"])
        for e in history["events"]
    ]
    return card(
        tag("h2", "History"),
        tag("h3", "Supersedes (older versions it corrects)"),
        memory_list(history["supersedes"], "It corrects no earlier memory.", "supersedes"),
        tag("h3", "Superseded by (newer corrections)", class_="spaced"),
        memory_list(history["superseded_by"], "Nothing has superseded it.", "superseded-by"),
        tag("h3", "Conflicts (live opinions a store would be refused over)", class_="spaced"),
        memory_list(history["conflicts"], "No live opinion conflicts with it.", "conflicts"),
        tag("h3", "Writes in the audit chain (stored, re-affirmed, superseded)", class_="spaced"),
        table(("entry", "time", "what", "op"), rows, id="events"),
        id="history",
    )


def relations_table(relations: Sequence[Mapping[str, Any]], empty: str) -> Markup:
    """Edges as a table: subject, predicate, object, validity, source memory."""
    if not relations:
        return tag("p", empty, class_="muted small")
    rows = [
        (
            graph_link(r["subject"]),
            tag("b", r["predicate"]),
            graph_link(r["object"]),
            validity(r),
            memory_link(r["src_id"], "source") if r.get("src_id") else "—",
        )
        for r in relations
    ]
    return table(("subject", "predicate", "object", "valid", "from"), rows, class_="relations")


def graph_link(entity: str) -> Markup:
    """A link to the relation graph around ``entity``."""
    from urllib.parse import quote

    return tag("a", entity, href=f"/{SLUG}/graph?entity={quote(entity)}")


def validity(relation: Mapping[str, Any]) -> str:
    """A relation's validity window, for people."""
    start, end = relation.get("valid_from"), relation.get("valid_to")
    if not start and not end:
        return "always"
    return f"{start or '…'} → {end or 'now'}"


def unlock_card(status: Mapping[str, Any] | None, error: Markup | None = None) -> Markup:
    """The locked vault: what can be said without its key, and the passphrase field."""
    if status is None:
        known = tag(
            "p",
            "No memory vault was found (create one with `affidavit init`).",
            class_="muted",
        )
    else:
        known = tag(
            "dl",
            [
                join(tag("dt", name), tag("dd", str(status.get(key, ""))))
                for name, key in (
                    ("vault", "path"),
                    ("state", "state"),
                    ("format", "format"),
                    ("size on disk", "size_bytes"),
                )
            ],
            class_="facts",
        )
    form = post_form(
        f"/{SLUG}/unlock",
        "Unlock",
        tag(
            "label",
            "Passphrase",
            tag(
                "input",
                type="password",
                name="passphrase",
                autocomplete="current-password",
                required=True,
            ),
        ),
        id="unlock-form",
    )
    return card(
        tag("h2", "The memory vault is locked"),
        tag(
            "p",
            "Its records are sealed; only what the file itself says is shown. Unlock it here "
            "(the passphrase is sent in the form's body, never in the address, and is not "
            "kept), or run `affidavit unlock` and reload.",
            class_="muted small",
        ),
        error,
        known,
        form if status is not None else None,
        id="locked",
    )
