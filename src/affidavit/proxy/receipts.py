"""How a verdict shows up in what the host receives.

A receipt line (stderr, and the text ``--receipts`` appends), the error result that replaces a
contradicted success (the evidence, then the backend's untrusted words), and the proxy's own
tool errors (policy denials, pin refusals). The receipt itself always travels in
``_meta["affidavit/receipt"]`` so a program can read it without parsing text.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from affidavit.core.secret_text import scrub
from affidavit.proxy.verifiers.base import Evidence, Receipt, Verdict

logger = logging.getLogger(__name__)

RECEIPT_META = "affidavit/receipt"
REPLAYED_META = "affidavit/replayed"


def receipt_line(receipt: Receipt) -> str:
    """The one-line human form of a receipt (stderr, and the text added by ``--receipts``)."""
    head = (
        f"[affidavit receipt] {receipt.verdict.value.upper()} · {receipt.verifier}: {receipt.claim}"
    )
    if receipt.evidence:
        return head + " — " + "; ".join(e.observed for e in receipt.evidence)
    return head


def log_receipt(receipt: Receipt) -> None:
    """Report a verifier's receipt on the diagnostics log (scrubbed: a claim may quote a
    secret); calls no verifier judged are not reported."""
    if receipt.verifier != "none":
        logger.info("%s", scrub(receipt_line(receipt)))


def unchecked(verifier: str, claim: str, why: str) -> Receipt:
    return Receipt(Verdict.UNCHECKED, verifier, claim, (Evidence(why, "affidavit proxy"),))


def tool_error(text: str, receipt: Receipt | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if receipt is not None:
        result["_meta"] = {RECEIPT_META: receipt.as_dict()}
    return result


def _original_text(result: Mapping[str, Any]) -> str:
    parts = [
        str(item.get("text", ""))
        for item in result.get("content") or []
        if isinstance(item, Mapping) and item.get("type") == "text"
    ]
    text = " ".join(parts).strip()
    return text if len(text) <= 500 else text[:500] + "…"


def contradicted_result(result: Mapping[str, Any], receipt: Receipt) -> dict[str, Any]:
    """The error result that replaces a claimed success that verification contradicted."""
    evidence = "; ".join(f"{e.observed} ({e.where}, {e.when})" for e in receipt.evidence)
    text = (
        f"affidavit: the backend reported success, but verification contradicted it. "
        f"Claim: {receipt.claim}. Evidence: {evidence or 'none recorded'}."
    )
    original = _original_text(result)
    if original:
        text += f" The backend's (untrusted) reply was: {original}"
    return tool_error(text, receipt)


def with_receipt(result: Mapping[str, Any], receipt: Receipt) -> dict[str, Any]:
    """``result`` with the receipt appended as text and in ``_meta`` (``--receipts``)."""
    updated = dict(result)
    content = list(updated.get("content") or [])
    content.append({"type": "text", "text": receipt_line(receipt)})
    updated["content"] = content
    meta = dict(updated.get("_meta") or {})
    meta[RECEIPT_META] = receipt.as_dict()
    updated["_meta"] = meta
    return updated
