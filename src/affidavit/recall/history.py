"""A memory's history: what it replaced, what replaced it, what it conflicts with, and every
write the audit chain recorded for it.

A correction names what it supersedes and the superseded memory points back
(``superseded_by``), so both chains are walked from the memory itself. Conflicts are not
stored (a conflicting store writes nothing): for an opinion they are computed the way a store
decides them (:func:`affidavit.recall.decide.decide`), so the page lists exactly the live
opinions that storing this one again would be refused over. Re-affirmations and other
changes come from the vault's audit chain, whose entries name the record, the operation and
the time (never the content): the first write stores it, each later ``update`` re-affirms an
opinion or marks it superseded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

from affidavit.core.errors import InputError, NotFoundError
from affidavit.recall.claims import Claim
from affidavit.recall.decide import decide, nearest
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.views import MemoryView
from affidavit.recall.wire import StoreStatus

if TYPE_CHECKING:
    from affidavit.recall.ranking import RecallIndex
    from affidavit.vault import AuditEntry, VaultItem

#: How far a chain of corrections is followed each way (a page, not an archive).
CHAIN_LIMIT = 50


class HistoryEvent(TypedDict):
    """One write of the memory, from the audit chain."""

    n: int
    op: str
    at: str
    what: str


class MemoryHistory(TypedDict):
    """A memory with its corrections both ways, its live conflicts and its writes."""

    memory: MemoryView
    supersedes: list[MemoryView]
    superseded_by: list[MemoryView]
    conflicts: list[MemoryView]
    events: list[HistoryEvent]


def chain(
    start: VaultItem, step: Callable[[VaultItem], list[str]], read: Callable[[str], VaultItem]
) -> list[VaultItem]:
    """The records reached from ``start`` by ``step`` (ids), breadth first, each once; ids the
    caller cannot read (forgotten, hidden) are left out."""
    seen = {start.id}
    todo = list(step(start))
    found: list[VaultItem] = []
    while todo and len(found) < CHAIN_LIMIT:
        item_id = todo.pop(0)
        if item_id in seen:
            continue
        seen.add(item_id)
        try:
            item = read(item_id)
        except NotFoundError:
            continue
        found.append(item)
        todo.extend(step(item))
    return found


def older(item: VaultItem) -> list[str]:
    """The ids ``item`` superseded."""
    return [str(i) for i in item.data.get("supersedes") or ()]


def newer(item: VaultItem) -> list[str]:
    """The id that superseded ``item``, if any."""
    after = item.data.get("superseded_by")
    return [str(after)] if after else []


def conflicts(
    item: VaultItem, index: RecallIndex, read: Callable[[str], VaultItem], vector: object
) -> list[VaultItem]:
    """The live opinions a store of this opinion would report as conflicts (none for a fact).

    ``vector``: its first embedding window, or None (then word overlap decides, as a store
    without a model does).
    """
    if item.data.get("kind") != MemoryKind.OPINION or item.data.get("superseded_by"):
        return []
    try:  # the opinion as a store would see it (one written elsewhere may break the rules)
        claim = Claim(
            text=str(item.data.get("text", "")),
            source=str(item.data.get("source") or "memory"),
            namespace=item.namespace,
            kind=MemoryKind.OPINION,
            thread=item.data.get("thread"),
            turn=item.data.get("turn"),
        )
    except InputError:
        return []
    near = [
        (sim, other) for sim, other in nearest(index, read, claim, vector) if other.id != item.id
    ]
    decision = decide(claim, near, semantic=vector is not None)
    if decision is None or decision.status is not StoreStatus.CONFLICT:
        return []
    return list(decision.items)


def events(item: VaultItem, entries: list[AuditEntry]) -> list[HistoryEvent]:
    """The audit chain's writes of ``item``, named: stored, re-affirmed, superseded, changed.

    ``entries`` holds the writes of ``item`` and of the memory that superseded it: the mark
    is made in the transaction that stores the correction, so it carries the same time.
    """
    replaced_at = {
        e.body.get("at")
        for e in entries
        if e.body.get("id") != item.id and e.body.get("op") == "create"
    }
    out: list[HistoryEvent] = []
    for entry in entries:
        if entry.body.get("id") != item.id:
            continue
        op, at = str(entry.body.get("op")), str(entry.body.get("at", ""))
        if op == "create":
            what = "stored"
        elif op == "update" and at in replaced_at:
            what = "marked superseded"
        elif op == "update" and item.data.get("kind") == MemoryKind.OPINION:
            what = "re-affirmed"
        else:
            what = op
        out.append({"n": entry.n, "op": op, "at": at, "what": what})
    return out
