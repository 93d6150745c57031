"""Captured candidates: claims taken from an agent's session, quarantined until a person accepts.

A candidate is a vault record of kind ``candidate`` in the ``capture`` namespace, never of kind
``memory``: recall indexes memories only, so ``search``, ``recent``, ``memory_search`` and
``memory_get`` cannot return a candidate, whatever the caller's grants (quarantine by
construction, not by a filter someone could forget). ``affidavit review`` lists them; accepting
one stores it through the ordinary store path (claim rules, duplicates) into a real namespace
and forgets the candidate; dropping forgets it.

Each transcript is read from where the last run stopped: the byte offsets live in a sealed
vault setting (a transcript path says which projects a user works on), written after the
candidates, and a sentence already waiting or already remembered word for word is not added
again, so a run interrupted between the two writes repeats nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.clock import utc_iso
from affidavit.core.errors import NotFoundError
from affidavit.intake.sentences import extract
from affidavit.intake.transcript import read_from
from affidavit.vault import NewItem, VaultItem

if TYPE_CHECKING:
    from affidavit.recall import Memory, StoreOutcome

CANDIDATE = "candidate"
MEMORY = "memory"
CAPTURE_NAMESPACE = "capture"
OFFSETS_SETTING = "capture_offsets"


@dataclass(frozen=True)
class Candidate:
    """One captured claim waiting for review."""

    id: str
    text: str
    category: str
    source: str
    captured_at: str

    def as_json(self) -> dict[str, str]:
        """The one wire shape (``review --json``)."""
        return {
            "id": self.id,
            "text": self.text,
            "category": self.category,
            "source": self.source,
            "captured_at": self.captured_at,
        }


@dataclass(frozen=True)
class CaptureReport:
    """What one hook run did with one transcript."""

    transcript: str
    messages: int
    captured: int
    already_known: int
    unreadable_lines: int

    def line(self) -> str:
        """The one line the hook prints."""
        bad = f", {self.unreadable_lines} unreadable lines skipped" if self.unreadable_lines else ""
        return (
            f"affidavit: {self.captured} candidate memories captured from {self.messages} "
            f"new messages ({self.already_known} already waiting or remembered){bad}; "
            "`affidavit review` to accept them"
        )


def _key(text: str) -> str:
    """A sentence as compared with what is already waiting or remembered: case and spacing
    ignored (the store's own duplicate rule still runs on accept)."""
    return " ".join(text.split()).casefold()


def _candidate(item: VaultItem) -> Candidate:
    d = item.data
    tags = d.get("tags") or ["fact"]
    return Candidate(
        item.id, str(d["text"]), str(tags[0]), str(d["source"]), str(d.get("captured_at", ""))
    )


def candidates(memory: Memory) -> list[Candidate]:
    """Every candidate waiting for review, oldest first."""
    memory.vault.refresh()
    return [_candidate(it) for it in memory.vault.items(CANDIDATE, CAPTURE_NAMESPACE)]


def capture_transcript(memory: Memory, transcript: Path) -> CaptureReport:
    """Store the new claims of ``transcript`` (since the last run) as candidates."""
    vault = memory.vault
    memory.access.require_write(CAPTURE_NAMESPACE)
    vault.refresh()
    key = str(transcript.resolve())
    offsets: dict[str, Any] = dict(vault.get_setting(OFFSETS_SETTING, {}) or {})
    start = offsets.get(key, 0)
    chunk = read_from(transcript, start if isinstance(start, int) else 0)
    waiting = {_key(c.text) for c in candidates(memory)}
    waiting |= {_key(str(it.data.get("text", ""))) for it in vault.items(MEMORY)}
    now = utc_iso(timespec="seconds")
    new: list[NewItem] = []
    repeated = 0
    for said in chunk.messages:
        when = said.timestamp or now
        for claim in extract(said.text, memory.max_chars):
            if _key(claim.text) in waiting:
                repeated += 1
                continue
            waiting.add(_key(claim.text))
            data = {
                "text": claim.text,
                "source": f"{key} at {when}",
                "tags": [claim.category.value, said.role],
                "discovered": when[:10],
                "captured_at": now,
            }
            new.append(NewItem(data, CANDIDATE, CAPTURE_NAMESPACE))
    if new:
        vault.put_many(new)
    if chunk.offset != start:
        vault.set_setting(OFFSETS_SETTING, {**offsets, key: chunk.offset})
    return CaptureReport(key, len(chunk.messages), len(new), repeated, chunk.unreadable_lines)


def _waiting(memory: Memory, candidate_id: str) -> VaultItem:
    memory.vault.refresh()
    try:
        item = memory.access.writable(candidate_id)
    except NotFoundError:
        item = None
    if item is None or item.kind != CANDIDATE:
        raise NotFoundError(
            f"no candidate memory {candidate_id}", "`affidavit review` lists the waiting ones"
        )
    return item


def candidate(memory: Memory, candidate_id: str) -> Candidate:
    """The candidate ``candidate_id`` (NotFoundError if none is waiting under that id)."""
    return _candidate(_waiting(memory, candidate_id))


def accept(
    memory: Memory, candidate_id: str, *, text: str | None = None, namespace: str | None = None
) -> StoreOutcome:
    """Store a candidate (or ``text``, its edited wording) as a memory, then forget it.

    A store that finds the memory already there (a duplicate) also clears the candidate; an
    edit the claim rules refuse raises before anything changes.
    """
    from affidavit.recall import Claim

    item = _waiting(memory, candidate_id)
    tags: Sequence[str] = item.data.get("tags") or ()
    outcome = memory.store(
        Claim(
            item.data["text"] if text is None else text,
            item.data["source"],
            tags=tuple(t for t in tags if t not in ("user", "assistant")),
            discovered=item.data.get("discovered"),
            namespace=namespace,
        )
    )
    if outcome["id"] is not None:
        memory.forget(candidate_id)
    return outcome


def drop(memory: Memory, candidate_id: str) -> None:
    """Forget a candidate without storing it."""
    memory.forget(_waiting(memory, candidate_id).id)
