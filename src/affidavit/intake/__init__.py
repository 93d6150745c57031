"""Memories in: capture from an agent's session, and importers from other tools.

The vault starts empty unless something fills it. This package fills it two ways, both
through :mod:`affidavit.recall`'s store path (claim rules, duplicates, one transaction):

- **capture** (:mod:`.capture`): ``affidavit hook run claude-code`` reads the new lines of a
  Claude Code transcript (:mod:`.transcript`), keeps the sentences that state a decision,
  preference, correction or fact (:mod:`.sentences`, deterministic) and stores them as
  *candidates*, quarantined until ``affidavit review`` accepts them;
- **importers** (:mod:`.importers`): Markdown notes, Claude memory files, ChatGPT and Claude
  exports, a Compartment plaintext export, each read into a :class:`Plan` and stored as one
  batch.

Public API (every name is loaded on first use)::

    from affidavit.intake import capture_transcript, candidates, accept, drop
    capture_transcript(memory, path) -> CaptureReport   (.line(): the hook's one line)
    candidates(memory) -> [Candidate]     accept(memory, id, text=None, namespace=None)
    candidate(memory, id) -> Candidate    (NotFoundError unless it is waiting)
    drop(memory, id)                      CANDIDATE, CAPTURE_NAMESPACE, ASSISTANT_SAID
    read_plan(Format, path, max_chars) -> Plan(format, notes: [Note], skipped: [Skip])
    store_plan(memory, plan, namespace=None, progress=None) -> Stored
    extract(text, max_chars) -> [Extracted(text, category: Category)]
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.intake.capture import (
        ASSISTANT_SAID,
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
    from affidavit.intake.formats import Format
    from affidavit.intake.importers import Note, Plan, Skip, Stored, read_plan, store_plan
    from affidavit.intake.sentences import Category, Extracted, extract

__all__ = [
    "ASSISTANT_SAID",
    "CANDIDATE",
    "CAPTURE_NAMESPACE",
    "Candidate",
    "CaptureReport",
    "Category",
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
    "drop",
    "extract",
    "read_plan",
    "store_plan",
]
__getattr__, __dir__ = lazy_exports(globals())
