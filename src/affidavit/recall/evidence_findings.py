"""A memory's evidence shown item by item, for a person deciding whether to trust it.

The status a read carries (:mod:`.evidence`) says whether the proof holds; a person wants to
see the proof itself: the signed pack's record with the quote in it, or the call the proxy
recorded (tool, arguments as its audit log keeps them, verdict, what the verifier observed)
and whether that log's chain still verifies. This is the console's evidence panel. Receipts
are read afresh here, through the tool plane's public API only (``check_receipt``,
``verify_log``): nothing is kept between two calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import AffidavitError
from affidavit.core.wording import counted
from affidavit.recall.evidence import Evidence, PackCitation, ToolReceipt
from affidavit.recall.receipt_logs import untrusted_problem

if TYPE_CHECKING:
    from affidavit.recall.installed_packs import PackShelf


@dataclass(frozen=True)
class CitationFinding:
    """A pack citation now: why it proves nothing (empty when it holds) and the record's text
    the quote stands in (its statement when the quote is in none; empty when the pack is out
    of recall or holds no such record)."""

    citation: PackCitation
    problem: str
    text: str


@dataclass(frozen=True)
class ReceiptFinding:
    """A receipt now: why it proves nothing (empty when it holds), the call as the intact log
    records it (None when the log no longer shows it), and the log's chain in words."""

    receipt: ToolReceipt
    problem: str
    call: Mapping[str, Any] | None
    chain_holds: bool
    chain: str


Finding = CitationFinding | ReceiptFinding


def chain_state(log: Path) -> tuple[bool, str]:
    """Whether the audit log at ``log`` verifies link by link, and its state in words."""
    from affidavit.proxy import verify_log

    try:
        report = verify_log(log)
    except AffidavitError as exc:
        return False, exc.message
    except OSError as exc:
        return False, f"the audit log {log} cannot be read ({exc.strerror})"
    if not report.chained:
        return False, f"a {report.format} log: it has no hash chain"
    if report.first_break is not None:
        where = report.first_break
        return False, f"broken at entry {where.index + 1}: {where.reason}"
    return True, f"intact: {counted(report.entries, 'entry', 'entries')}, head {report.head[:16]}…"


def _citation(citation: PackCitation, shelf: PackShelf) -> CitationFinding:
    texts = shelf.cited_texts(citation.pack, citation.record)
    text = next((t for t in texts if citation.quote in t), texts[0] if texts else "")
    problem = shelf.citation_problem(
        citation.pack, citation.signer, citation.record, citation.quote
    )
    return CitationFinding(citation, problem, text)


def _receipt(receipt: ToolReceipt, trusted: frozenset[str]) -> ReceiptFinding:
    """A receipt of a log the vault does not trust shows no call: whoever wrote the log may
    have made the call up (ADR 0224)."""
    from affidavit.proxy import check_receipt

    log = Path(receipt.log)
    holds, chain = chain_state(log)
    untrusted = untrusted_problem(receipt.log, trusted)
    if untrusted:
        return ReceiptFinding(receipt, untrusted, None, holds, chain)
    check = check_receipt(log, receipt.entry)
    return ReceiptFinding(receipt, check.reason, check.entry, holds, chain)


def findings(
    items: Sequence[Evidence], shelf: PackShelf, trusted: frozenset[str]
) -> tuple[Finding, ...]:
    """Each item judged now with what shows it (the shelf synced by the caller; ``trusted``:
    the receipt logs the vault trusts)."""
    return tuple(
        _citation(item, shelf) if isinstance(item, PackCitation) else _receipt(item, trusted)
        for item in items
    )
