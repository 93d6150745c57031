"""Memories in: capture from an agent's session, and importers from other tools.

The vault starts empty unless something fills it. This package fills it two ways, both
through :mod:`affidavit.recall`'s store path (claim rules, duplicates, one transaction):

- **capture** (:mod:`.capture`): ``affidavit hook run claude-code`` reads the new lines of a
  Claude Code transcript (:mod:`.transcript`), keeps the sentences that state a decision,
  preference, correction or fact (:mod:`.sentences`, deterministic) and stores them as
  *candidates*, quarantined until ``affidavit review`` accepts them (or, with the vault's
  ``auto_store`` setting on, stores the user's plainly stated claims directly and lists them
  in a daily digest, :mod:`.digest`);
- **importers** (:mod:`.importers`): Markdown notes, Claude memory files, ChatGPT and Claude
  exports, a Compartment plaintext export, each read into a :class:`Plan` and stored as one
  batch.

Public API (every name is loaded on first use)::

    from affidavit.intake import capture_transcript, candidates, accept, drop
    capture_transcript(memory, path) -> CaptureReport   (.line(): the hook's one line)
    candidates(memory) -> [Candidate]     accept(memory, id, text=None, namespace=None)
    candidate(memory, id) -> Candidate    (NotFoundError unless it is waiting)
    drop(memory, id)                      CANDIDATE, CAPTURE_NAMESPACE, ASSISTANT_SAID
    digest(memory, days=7) -> [DigestDay(day, memories)]   stored without review (auto_store)
    read_plan(Format, path, max_chars) -> Plan(format, notes: [Note], skipped: [Skip])
    store_plan(memory, plan, namespace=None, progress=None) -> Stored
    extract(text, max_chars) -> [Extracted(text, category: Category)]
    CallMemories(namespace, log, open_memory, say).put(CallClaim(text, source, receipt))
        verified tool calls remembered off the proxy's path (``proxy run --remember``):
        remember_call(memory, namespace, claim) stores it (auto_store) or queues it for review
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.intake.capture import (
        ASSISTANT_SAID,
        AUTO_STORED,
        CANDIDATE,
        CAPTURE_NAMESPACE,
        Candidate,
        CaptureReport,
        accept,
        candidate,
        candidates,
        capture_transcript,
        drop,
    )
    from affidavit.intake.digest import DigestDay, digest
    from affidavit.intake.formats import Format
    from affidavit.intake.importers import Note, Plan, Skip, Stored, read_plan, store_plan
    from affidavit.intake.sentences import Category, Extracted, extract
    from affidavit.intake.verified_calls import (
        VERIFIED_CALL,
        CallClaim,
        CallMemories,
        remember_call,
    )

__all__ = [
    "ASSISTANT_SAID",
    "AUTO_STORED",
    "CANDIDATE",
    "CAPTURE_NAMESPACE",
    "VERIFIED_CALL",
    "CallClaim",
    "CallMemories",
    "Candidate",
    "CaptureReport",
    "Category",
    "DigestDay",
    "Extracted",
    "Format",
    "Note",
    "Plan",
    "Skip",
    "Stored",
    "accept",
    "candidate",
    "candidates",
    "capture_transcript",
    "digest",
    "drop",
    "extract",
    "read_plan",
    "remember_call",
    "store_plan",
]
__getattr__, __dir__ = lazy_exports(globals())
