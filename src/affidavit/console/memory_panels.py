"""The memory section's panels: the changes a memory page offers, namespaces and grants, the
audit chain, locking, and an import's form and progress. Pure rendering, like
:mod:`.memory_pages`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from affidavit.console.context import notice
from affidavit.console.html import Child, Markup, rooted, tag
from affidavit.console.memory_jobs import JobState
from affidavit.console.memory_pages import SLUG
from affidavit.console.widgets import button_form, card, post_form, table

if TYPE_CHECKING:
    from affidavit.recall import MemoryView, wire
    from affidavit.vault import AuditEntry, AuditReport


def actions_card(view: MemoryView) -> Markup:
    """Correct, forget, shred: each a form whose POST first asks for confirmation."""
    base = f"/{SLUG}/m/{view['id']}"
    if view.get("superseded_by"):
        correction: Child = tag(
            "p", "A superseded memory is corrected through its newer version.", class_="muted small"
        )
    else:
        correction = post_form(
            f"{base}/correct",
            "Correct…",
            tag("label", "Corrected text", tag("textarea", view["text"], name="text")),
            tag(
                "label",
                "Source",
                tag(
                    "input",
                    type="text",
                    name="source",
                    placeholder=f"correction of {view['id']} in the console",
                ),
            ),
            id="correct-form",
        )
    buttons = tag(
        "div",
        button_form(f"{base}/forget", "Forget…", "forget-form"),
        button_form(f"{base}/shred", "Shred…", "shred-form", danger=True),
        class_="row",
    )
    return card(
        tag("h2", "Change it"),
        tag("p", "Each change asks for confirmation first.", class_="muted small"),
        correction,
        tag("h3", "Take it out", class_="spaced"),
        buttons,
        id="actions",
    )


def namespaces_card(
    listing: wire.NamespacesJSON, table_of_grants: dict[str, dict[str, str]]
) -> Markup:
    """The namespaces the console's caller may read (memories, relations, access: what
    ``affidavit namespaces`` and memory_list_namespaces show), and every grant set (callers
    without one get the defaults)."""
    counts = table(
        ("namespace", "memories", "relations", "access"),
        [
            (row["name"], row["memories"], row["relations"], row["access"])
            for row in listing["namespaces"]
        ],
        id="namespaces",
    )
    rows = [
        (caller, namespace, tag("span", mode, class_=f"chip mode {mode}"))
        for caller, rules in sorted(table_of_grants.items())
        for namespace, mode in sorted(rules.items())
    ]
    grants = (
        table(("caller", "namespace", "access"), rows, id="grants")
        if rows
        else tag(
            "p",
            "No grants set: you (caller user) read and write everything; each named agent "
            "writes its own namespace and reads the others (`affidavit grant`).",
            class_="muted small",
            id="grants",
        )
    )
    return card(tag("h2", "Namespaces"), counts, tag("h3", "Grants", class_="spaced"), grants)


def audit_card(report: AuditReport, latest: list[AuditEntry]) -> Markup:
    """Whether the vault's audit chain holds, and its latest entries."""
    if report.ok:
        state = tag(
            "div",
            tag("span", class_="dot ok"),
            tag(
                "span",
                f"Chain intact: {report.entries} entries, head {report.head[:16]}…",
                data_chain="ok",
            ),
            class_="chain",
        )
    else:
        state = tag(
            "div",
            tag("span", class_="dot bad"),
            tag("strong", f"Chain broken: {report.problem}", data_chain="broken"),
            class_="chain",
        )
    rows = [
        (
            tag("span", f"#{e.n}", class_="mono"),
            e.body.get("at", ""),
            e.body.get("op", ""),
            tag("span", e.body.get("id", ""), class_="mono small"),
        )
        for e in reversed(latest)
    ]
    return card(
        tag("h2", "Audit chain"),
        state,
        tag("h3", "Latest entries", class_="spaced"),
        table(("entry", "time", "op", "record"), rows, id="audit-entries"),
        id="audit",
    )


def lock_card() -> Markup:
    """Close this console's handle on the vault (the vault stays as it is elsewhere)."""
    return card(
        tag("h2", "Lock"),
        tag(
            "p",
            "Drop this console's keys and plaintext; the page asks for the passphrase again. "
            "Other processes' unlock session is left as it is (`affidavit lock` ends it).",
            class_="muted small",
        ),
        button_form(f"/{SLUG}/lock", "Lock the console", "lock-form"),
    )


def import_card(state: JobState | None = None) -> Markup:
    """The import form, or one import's progress."""
    if state is None:
        return card(
            tag("h2", "Import an export"),
            tag(
                "p",
                "Import a file written by `affidavit export --plaintext`, as `affidavit import "
                "FILE` does: every line checked first, all or nothing, idempotent by id. Rows "
                "without a vector are embedded.",
                class_="muted small",
            ),
            tag(
                "form",
                tag(
                    "label",
                    "Export file on this machine",
                    tag("input", type="text", name="path", placeholder="/path/to/export.jsonl"),
                ),
                tag("button", "Import", type="submit", class_="primary"),
                method="post",
                action=f"/{SLUG}/import",
                class_="row",
                id="import-form",
            ),
        )
    share = state.done / state.total if state.total else 0.0
    outcome: Child = None
    if state.error:
        outcome = notice("error", state.error)
    elif state.result:
        outcome = notice("ok", state.result)
    return card(
        tag("h2", "Importing ", tag("span", state.source, class_="mono")),
        tag("progress", value=state.done, max=max(state.total, 1), id="import-bar"),
        tag(
            "p",
            tag("span", state.phase, id="import-phase"),
            " ",
            tag("span", f"{state.done} / {state.total} ({share:.0%})", id="import-count"),
            class_="muted small",
        ),
        tag("div", outcome, id="import-outcome"),
        id="import",
        data_state=rooted(f"/{SLUG}/import/{state.id}/state"),
        data_finished="1" if state.finished else None,
    )
