"""A memory's evidence on its page: the status, each item with what shows it, and "re-check
now". Pure rendering, like :mod:`.memory_pages`.

A pack citation shows the pack, its signer and the record's text with the quote marked in it;
a proxy receipt shows the call as the audit log recorded it (tool, redacted arguments, verdict,
what the verifier observed) and whether that log's chain still verifies. Quotes, record texts
and recorded calls are someone else's data: they reach the page only as escaped text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from affidavit.console.context import notice
from affidavit.console.html import Child, Markup, join, tag
from affidavit.console.memory_pages import SLUG, evidence_chip
from affidavit.console.widgets import button_form, card

if TYPE_CHECKING:
    from affidavit.recall import CitationFinding, MemoryView, ReceiptFinding

NO_EVIDENCE = (
    "No evidence: this memory rests only on its source, which says who claimed it, not that it "
    "is true. Evidence is attached when it is stored (docs/evidence.md)."
)


def marked(text: str, quote: str) -> Markup:
    """``text`` with the first occurrence of ``quote`` marked (both escaped)."""
    before, found, after = text.partition(quote)
    if not found:
        return join(text)
    return join(before, tag("mark", found, class_="cited"), after)


def _facts(pairs: Sequence[tuple[str, Child]]) -> Markup:
    return tag(
        "dl", [join(tag("dt", name), tag("dd", value)) for name, value in pairs], class_="facts"
    )


def _problem(problem: str) -> Markup | None:
    return notice("warn", problem) if problem else None


def citation_item(found: CitationFinding) -> Markup:
    """One pack citation: the pack, its signer, the record, the quote marked in its text."""
    cited = found.citation
    shown: Child = (
        tag("blockquote", marked(found.text, cited.quote), class_="record-text")
        if found.text
        else tag("p", "The record cannot be shown: the pack is out of recall.", class_="muted")
    )
    return tag(
        "div",
        tag("h3", "Signed pack citation"),
        _facts(
            [
                ("pack", cited.pack),
                ("signer", cited.signer),
                ("record", cited.record),
                ("quote", cited.quote),
            ]
        ),
        _problem(found.problem),
        shown,
        class_="evidence-item pack",
        data_holds="no" if found.problem else "yes",
    )


def _observed(line: Any) -> Markup:
    if isinstance(line, Mapping):
        where = f" ({line['where']})" if line.get("where") else ""
        return tag("li", str(line.get("observed", "")), tag("span", where, class_="muted"))
    return tag("li", str(line))


def call_facts(call: Mapping[str, Any]) -> Markup:
    """The recorded call: tool, verdict, when, its arguments as recorded, what was observed."""
    verdict = str(call.get("verdict") or "no verdict")
    lines = call.get("evidence") or []
    return join(
        _facts(
            [
                ("tool", str(call.get("tool", ""))),
                ("verdict", tag("span", verdict, class_=f"verdict {verdict}")),
                ("verifier", str(call.get("verifier", "")) or "—"),
                ("recorded", str(call.get("ts") or "—")),
            ]
        ),
        tag("h4", "Arguments, as the audit log records them"),
        tag(
            "pre",
            json.dumps(call.get("arguments", {}), indent=2, ensure_ascii=False, sort_keys=True),
            class_="arguments",
        ),
        tag("h4", "What the verifier observed"),
        tag("ul", [_observed(line) for line in lines], class_="observed")
        if lines
        else tag("p", "No evidence lines were recorded.", class_="muted small"),
    )


def receipt_item(found: ReceiptFinding) -> Markup:
    """One proxy receipt: the log and its chain's state, then the call it recorded."""
    receipt = found.receipt
    chain = tag(
        "span",
        tag("span", class_=f"dot {'ok' if found.chain_holds else 'bad'}"),
        " ",
        found.chain,
        class_="chain",
        data_chain="ok" if found.chain_holds else "broken",
    )
    shown: Child = (
        call_facts(found.call)
        if found.call is not None
        else tag(
            "p",
            "The call is not shown: this log does not hold it as a verified call now.",
            class_="muted",
        )
    )
    return tag(
        "div",
        tag("h3", "Proxy receipt"),
        _facts([("audit log", receipt.log), ("entry", receipt.entry), ("chain", chain)]),
        _problem(found.problem),
        shown,
        class_="evidence-item receipt",
        data_holds="no" if found.problem else "yes",
    )


def evidence_card(
    view: MemoryView,
    findings: Sequence[CitationFinding | ReceiptFinding],
    rechecked: bool = False,
) -> Markup:
    """The evidence panel of a memory's page."""
    from affidavit.recall import CitationFinding

    evidence = view.get("evidence")
    status = evidence["status"] if evidence else "unproven"
    items = [
        citation_item(found) if isinstance(found, CitationFinding) else receipt_item(found)
        for found in findings
    ]
    done = notice("ok" if status == "proven" else "warn", f"Re-checked now: {status}.")
    return card(
        tag("h2", "Evidence ", evidence_chip(view)),
        done if rechecked else None,
        items or tag("p", NO_EVIDENCE, class_="muted small"),
        button_form(f"/{SLUG}/m/{view['id']}/recheck", "Re-check now", "recheck-form")
        if items
        else None,
        id="evidence",
        data_status=status,
    )
