"""Captured candidates: claims taken from an agent's session, quarantined until a person accepts.

A candidate is a vault record of kind ``candidate`` in the ``capture`` namespace, never of kind
``memory``: recall indexes memories only, so ``search``, ``recent``, ``memory_search`` and
``memory_get`` cannot return a candidate, whatever the caller's grants (quarantine by
construction, not by a filter someone could forget). ``affidavit review`` lists them; accepting
one stores it through the ordinary store path (claim rules, duplicates) into a real namespace
and forgets the candidate; dropping forgets it.

What a run keeps is what a person may see in ``review`` and the console, so two rules hold
before a candidate is written (ADR 0176): a sentence that holds a password, token or key (the
one detector the proxy's audit log uses, :mod:`affidavit.core.secret_text`) is dropped and
counted, never stored; and a sentence the *assistant* wrote (which a prompt-injected model can
author) is kept as :data:`ASSISTANT_SAID`, never as a decision, preference or correction of the
user's, with "said by the assistant" in its source. Candidates captured by an older release are
shown and accepted with any secret masked.

With the vault's ``auto_store`` setting on (off by default, ADR 0183), a claim the *user*
stated plainly (:func:`~affidavit.intake.sentences.plainly_stated`: a fact, preference or
decision with no hedge or condition) is stored directly, through the ordinary store path, into
the caller's own namespace and tagged :data:`AUTO_STORED`, so the console's digest
(:mod:`.digest`) can show each day what went in unseen. Everything else still waits: the
assistant's words, corrections, hedged sentences, and any claim the store refuses or finds in
conflict.

Each transcript is read from where the last run stopped: the byte offsets live in a sealed
vault setting (a transcript path says which projects a user works on), written after the
candidates, and a sentence already waiting or already remembered word for word is not added
again, so a run interrupted between the two writes repeats nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.clock import utc_iso
from affidavit.core.errors import AffidavitError, NotFoundError
from affidavit.core.secret_text import holds_secret, scrub
from affidavit.core.wording import counted
from affidavit.intake.sentences import Extracted, extract, plainly_stated
from affidavit.intake.transcript import read_from
from affidavit.vault import NewItem, VaultItem

if TYPE_CHECKING:
    from affidavit.recall import Evidence, Memory, StoreOutcome

CANDIDATE = "candidate"
MEMORY = "memory"
CAPTURE_NAMESPACE = "capture"
OFFSETS_SETTING = "capture_offsets"
USER = "user"
ASSISTANT = "assistant"
AUTO_STORED = "auto-stored"
"""The tag of every memory capture stored without review (auto_store on)."""
ASSISTANT_SAID = "said-by-assistant"
"""The category of every candidate the assistant wrote, whatever the sentence claims: its words
are not the user's decision, preference or correction."""


@dataclass(frozen=True)
class Candidate:
    """One captured claim waiting for review, and who said it (``user`` or ``assistant``).

    A claim proposed with proof (a verified call of ``proxy run --remember``) keeps its
    ``evidence`` items (their wire form) and the ``namespace`` it was proposed for, so
    accepting it stores the memory there with that proof, checked again then.
    """

    id: str
    text: str
    category: str
    source: str
    captured_at: str
    speaker: str = USER
    namespace: str = ""
    evidence: tuple[Mapping[str, str], ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The one wire shape (``review --json``); ``namespace`` and ``evidence`` only when
        the candidate was proposed with them."""
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "category": self.category,
            "speaker": self.speaker,
            "source": self.source,
            "captured_at": self.captured_at,
        }
        if self.namespace:
            out["namespace"] = self.namespace
        if self.evidence:
            out["evidence"] = [dict(item) for item in self.evidence]
        return out


@dataclass(frozen=True)
class CaptureReport:
    """What one hook run did with one transcript."""

    transcript: str
    messages: int
    captured: int
    already_known: int
    unreadable_lines: int
    secrets_dropped: int = 0
    stored: int = 0
    """Claims stored directly (auto_store on), not counted in ``captured``."""
    not_stored: str = ""
    """Why claims meant for direct storage wait in review instead (the store refused them)."""

    def line(self) -> str:
        """The one line the hook prints."""
        bad = f", {self.unreadable_lines} unreadable lines skipped" if self.unreadable_lines else ""
        secret = (
            f", {self.secrets_dropped} holding a password, token or key dropped"
            if self.secrets_dropped
            else ""
        )
        stored = (
            f"{counted(self.stored, 'memory', 'memories')} stored directly (auto_store), "
            if self.stored
            else ""
        )
        refused = f"; not stored directly: {self.not_stored}" if self.not_stored else ""
        return (
            f"affidavit: {stored}{self.captured} candidate memories captured from "
            f"{self.messages} new messages ({self.already_known} already waiting or remembered)"
            f"{secret}{bad}{refused}; `affidavit review` to accept them"
        )


def _key(text: str) -> str:
    """A sentence as compared with what is already waiting or remembered: case and spacing
    ignored (the store's own duplicate rule still runs on accept)."""
    return " ".join(text.split()).casefold()


def _candidate(item: VaultItem) -> Candidate:
    """A candidate as shown: any secret masked, the assistant's words labelled as such (also
    for candidates an older release captured with the sentence's own kind)."""
    d = item.data
    tags = d.get("tags") or ["fact"]
    speaker = ASSISTANT if ASSISTANT in tags else USER
    category = ASSISTANT_SAID if speaker == ASSISTANT else str(tags[0])
    source = str(d["source"])
    if speaker == ASSISTANT and ASSISTANT_SAID not in tags:
        source = _said_by_assistant(source)
    return Candidate(
        item.id,
        scrub(str(d["text"])),
        category,
        source,
        str(d.get("captured_at", "")),
        speaker,
        str(d.get("namespace") or ""),
        tuple(d.get("evidence") or ()),
    )


def _said_by_assistant(source: str) -> str:
    return f"{source}, said by the assistant (not you)"


def candidates(memory: Memory) -> list[Candidate]:
    """Every candidate waiting for review, oldest first."""
    memory.vault.refresh()
    return [_candidate(it) for it in memory.vault.items(CANDIDATE, CAPTURE_NAMESPACE)]


def _known(memory: Memory) -> set[str]:
    """What is already waiting or remembered, as :func:`_key` compares it."""
    known = {_key(c.text) for c in candidates(memory)}
    return known | {_key(str(it.data.get("text", ""))) for it in memory.vault.items(MEMORY)}


def propose(
    memory: Memory,
    text: str,
    source: str,
    *,
    category: str,
    namespace: str | None = None,
    evidence: Sequence[Evidence] = (),
) -> bool:
    """Queue one claim for review, with the proof it rests on and where it should go; False
    (nothing written) when it is already waiting or remembered. Evidence is checked when the
    candidate is accepted, as any store checks it."""
    memory.access.require_write(CAPTURE_NAMESPACE)
    memory.vault.refresh()
    if _key(text) in _known(memory):
        return False
    now = utc_iso(timespec="seconds")
    item = _candidate_item(text, source, now, now, [category])
    if namespace:
        item.data["namespace"] = namespace
    if evidence:
        item.data["evidence"] = [e.as_dict() for e in evidence]
    memory.vault.put_many([item])
    return True


def capture_transcript(memory: Memory, transcript: Path) -> CaptureReport:
    """Store the new claims of ``transcript`` (since the last run): as candidates, or the
    user's plain ones directly when the vault's ``auto_store`` setting is on.

    Written in this order, so a run interrupted anywhere repeats nothing: the direct memories
    (one transaction), the candidates (one), then the transcript's new offset.
    """
    from affidavit.recall import AUTO_STORE_SETTING

    vault = memory.vault
    memory.access.require_write(CAPTURE_NAMESPACE)
    vault.refresh()
    auto = vault.get_setting(AUTO_STORE_SETTING, False) is True
    key = str(transcript.resolve())
    offsets: dict[str, Any] = dict(vault.get_setting(OFFSETS_SETTING, {}) or {})
    start = offsets.get(key, 0)
    chunk = read_from(transcript, start if isinstance(start, int) else 0)
    waiting = _known(memory)
    now = utc_iso(timespec="seconds")
    direct: list[tuple[Extracted, str, str]] = []  # (claim, source, said when)
    new: list[NewItem] = []
    repeated = secrets = 0
    for said in chunk.messages:
        when = said.timestamp or now
        for claim in extract(said.text, memory.max_chars):
            if holds_secret(claim.text):
                secrets += 1  # never written, so never shown
                continue
            if _key(claim.text) in waiting:
                repeated += 1
                continue
            waiting.add(_key(claim.text))
            source = f"{key} at {when}"
            if said.role == ASSISTANT:
                tags = [ASSISTANT_SAID, ASSISTANT]
                new.append(_candidate_item(claim.text, _said_by_assistant(source), when, now, tags))
            elif auto and plainly_stated(claim):
                direct.append((claim, source, when))
            else:
                new.append(_users_candidate(claim, source, when, now))
    direct_run = _store_directly(memory, direct, now)
    new.extend(direct_run.held)
    if new:
        vault.put_many(new)
    if chunk.offset != start:
        vault.set_setting(OFFSETS_SETTING, {**offsets, key: chunk.offset})
    return CaptureReport(
        key,
        len(chunk.messages),
        len(new),
        repeated + direct_run.already_known,
        chunk.unreadable_lines,
        secrets,
        direct_run.stored,
        direct_run.refused,
    )


def _candidate_item(text: str, source: str, when: str, now: str, tags: list[str]) -> NewItem:
    """The one shape of a candidate record (capture's, and :func:`propose`'s)."""
    data: dict[str, Any] = {
        "text": text,
        "source": source,
        "tags": tags,
        "discovered": when[:10],
        "captured_at": now,
    }
    return NewItem(data, CANDIDATE, CAPTURE_NAMESPACE)


def _users_candidate(claim: Extracted, source: str, when: str, now: str) -> NewItem:
    """A sentence the user said, waiting for review under the kind it was kept as."""
    return _candidate_item(claim.text, source, when, now, [claim.category.value, USER])


@dataclass(frozen=True)
class _DirectRun:
    """What storing the user's plain claims did: how many were stored, how many the store
    found already remembered, why none could be (the store's refusal), and the candidates to
    queue instead."""

    stored: int = 0
    already_known: int = 0
    refused: str = ""
    held: tuple[NewItem, ...] = ()


def _store_directly(
    memory: Memory, direct: list[tuple[Extracted, str, str]], now: str
) -> _DirectRun:
    """Store the user's plain claims as memories in the caller's own namespace, by the store's
    usual rule (a duplicate is not written again). A conflict, or the whole batch if the store
    refused it (e.g. the caller may not write its own namespace), waits for a person.
    """
    if not direct:
        return _DirectRun()
    from affidavit.recall import Claim

    def held(picked: list[tuple[Extracted, str, str]]) -> tuple[NewItem, ...]:
        return tuple(_users_candidate(c, src, w, now) for c, src, w in picked)

    try:
        claims: list[Claim] = [
            Claim(
                c.text,
                f"{src}, stated by you (stored without review)",
                tags=(c.category.value, USER, AUTO_STORED),
                discovered=when[:10],
            )
            for c, src, when in direct
        ]
        outcomes = memory.store_many(claims)
    except AffidavitError as exc:
        return _DirectRun(refused=exc.message, held=held(direct))
    stored = sum(1 for o in outcomes if o["status"] == "stored")
    conflicted = [d for d, o in zip(direct, outcomes, strict=True) if o["id"] is None]
    return _DirectRun(stored, len(direct) - stored - len(conflicted), "", held(conflicted))


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

    It goes to ``namespace``, else where it was proposed for, else the caller's own. Its
    evidence goes with it and is checked now (a proof that stopped holding refuses the
    store); an edited wording is not what was proven, so it is stored without evidence. A
    store that finds the memory already there (a duplicate) also clears the candidate; an
    edit the claim rules refuse raises before anything changes.
    """
    from affidavit.recall import Claim, parse_evidence

    item = _waiting(memory, candidate_id)
    shown = _candidate(item)  # a secret an older release captured is stored masked
    outcome = memory.store(
        Claim(
            shown.text if text is None else text,
            shown.source,
            tags=(shown.category,),
            discovered=item.data.get("discovered"),
            namespace=namespace or shown.namespace or None,
            evidence=parse_evidence(shown.evidence) if text is None else (),
        )
    )
    if outcome["id"] is not None:
        memory.forget(candidate_id)
    return outcome


def drop(memory: Memory, candidate_id: str) -> None:
    """Forget a candidate without storing it."""
    memory.forget(_waiting(memory, candidate_id).id)
