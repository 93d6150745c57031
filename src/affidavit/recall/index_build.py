"""The RAM index of a vault's memories: built from the sealed vectors, or restored from the
image a sealed snapshot keeps.

Why a module of its own: every process that searches builds this index once, and a memory
server does it at every start. Built from scratch it stems and inserts every memory's text
into the keyword index and widens every vector (~0.25 s of CPU at 10,000 memories, mostly
Python per memory); restored from a snapshot's image (:func:`image`, sealed by the vault
with everything else, :mod:`affidavit.vault.snapshot`) the keyword index is one
``deserialize`` and the vectors one copy of the vault's own float16 bytes.

A restored index is never trusted to match the vault: the image names the ``(id, seq)`` of
every memory it holds, and :func:`restore` keeps exactly those whose version the vault
still holds as searchable, drops the rest (forgotten, shredded, superseded, changed since)
and indexes the memories the image lacks. Every entry's fields come from the vault's record,
never from the image. So a stale image costs time, never a wrong answer.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from affidavit.recall.installed_packs import is_pack_namespace
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import Entry, RecallIndex
from affidavit.recall.ranking.channels import KeywordIndex
from affidavit.vault import VaultItem

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Windows = npt.NDArray[np.floating]

MEMORY = "memory"
#: The name of the index's section in the vault's snapshot.
SECTION = "recall.index"
#: Bumped when the image's layout or the keyword index's tokenizing changes: an image of
#: another version is not used (the index is built from the records instead).
IMAGE_VERSION = 1
_LEN = struct.Struct(">I")


def entry_of(item: VaultItem) -> Entry:
    """What ranking holds of one memory record."""
    d = item.data
    return Entry(
        id=item.id,
        text=str(d.get("text", "")),
        seq=item.seq,
        namespace=item.namespace,
        tags=frozenset(d.get("tags", [])),
        saved_at=item.saved_at,
        discovered=d.get("discovered"),
        importance=float(d.get("importance", 0.5)),
        kind=MemoryKind.of(d.get("kind")),
        affirmed=d.get("affirmed"),
        authored=not d.get("imported", False),
        thread=d.get("thread"),
        turn=d.get("turn"),
        reply_to=d.get("reply_to"),
    )


def searchable(item: VaultItem) -> bool:
    """Whether a record belongs in the index: a memory nothing superseded."""
    return item.kind == MEMORY and not item.data.get("superseded_by")


def windows_of(items: Sequence[VaultItem]) -> list[Windows | None]:
    """Each record's embedding windows (float16 rows, as sealed), ``None`` without any.

    One join and one ``frombuffer`` for all of them, then a view per record: a numpy call
    per record cost more than the vectors themselves at unlock.
    """
    import numpy as np

    row = DIM * 2
    usable = [bool(it.vector) and len(it.vector or b"") % row == 0 for it in items]
    joined = b"".join(it.vector or b"" for it, ok in zip(items, usable, strict=True) if ok)
    matrix = np.frombuffer(joined, dtype="<f2").reshape(-1, DIM)
    out: list[Windows | None] = []
    at = 0
    for it, ok in zip(items, usable, strict=True):
        if not ok:
            out.append(None)
            continue
        n = len(it.vector or b"") // row
        out.append(matrix[at : at + n])
        at += n
    return out


def inherit(
    index: RecallIndex, items: Sequence[VaultItem], lookup: Callable[[str], VaultItem | None]
) -> None:
    """Give each correction among ``items`` the sealed windows of every memory down its chain
    of corrections (``lookup`` reads a record by id, ``None`` when it is gone), so it answers
    what they answered (:mod:`affidavit.recall.ranking.corrections`)."""
    import numpy as np

    inherited = []
    for item in items:
        chain: dict[str, VaultItem] = {}
        todo = [str(i) for i in item.data.get("supersedes") or ()]
        while todo:
            old = lookup(todo.pop())
            if old is not None and old.id not in chain and old.id != item.id:
                chain[old.id] = old
                todo += [str(i) for i in old.data.get("supersedes") or ()]
        windows = [w for w in windows_of(list(chain.values())) if w is not None]
        block = np.concatenate(windows) if windows else np.zeros((0, DIM), dtype=np.float32)
        inherited.append((item.id, chain.keys(), block))  # none left: what it had goes
    index.inherit_many(inherited)


def build(items: Sequence[VaultItem], with_vectors: bool) -> RecallIndex:
    """A new index of the searchable ``items`` (``with_vectors``: their sealed windows too,
    and a correction the windows of what it corrected)."""
    chosen = [it for it in items if searchable(it)]
    windows = windows_of(chosen) if with_vectors else [None] * len(chosen)
    index = RecallIndex()
    index.add_many([(entry_of(it), w) for it, w in zip(chosen, windows, strict=True)])
    if with_vectors:
        _inherit_all(index, items, chosen)
    return index


def _inherit_all(index: RecallIndex, items: Sequence[VaultItem], chosen: list[VaultItem]) -> None:
    corrections = [it for it in chosen if it.data.get("supersedes")]
    if corrections:
        by_id = {it.id: it for it in items}
        inherit(index, corrections, by_id.get)


def image(index: RecallIndex, with_vectors: bool) -> bytes:
    """The index as bytes for the vault's snapshot: which version of which memory sits in
    which slot, and the keyword index itself (installed packs' records are left out: they
    come from their own verified folders)."""
    slots: list[list[Any]] = []
    packs: list[list[Any]] = []
    for e in index.entries():
        (packs if is_pack_namespace(e.namespace) else slots).append([e.slot, e.id, e.seq])
    keyword = index.keyword
    if packs:  # a copy without them (the live index keeps serving)
        keyword = KeywordIndex(keyword.image(), len(keyword))
        keyword.remove_many(slot for slot, _, _ in packs)
    head = orjson.dumps(
        {"version": IMAGE_VERSION, "vectors": with_vectors, "count": len(keyword), "slots": slots}
    )
    return _LEN.pack(len(head)) + head + keyword.image()


def restore(blob: bytes, items: Sequence[VaultItem], with_vectors: bool) -> RecallIndex | None:
    """The index of the searchable ``items``, from an :func:`image` (``None`` when the image
    is of another version, or was made with or without vectors unlike now)."""
    head = _header(blob)
    if head is None or head["vectors"] != with_vectors:
        return None
    chosen = [it for it in items if searchable(it)]
    current = {(it.id, it.seq) for it in chosen}
    slot_of: dict[str, int] = {}
    stale: list[int] = []
    for slot, rid, seq in head["slots"]:
        if (rid, seq) in current:
            slot_of[rid] = slot
        else:
            stale.append(slot)
    (size,) = _LEN.unpack_from(blob)
    keyword = KeywordIndex(blob[_LEN.size + size :], head["count"])
    keyword.remove_many(stale)
    windows = windows_of(chosen) if with_vectors else [None] * len(chosen)
    kept: list[tuple[Entry, Windows | None]] = []
    new: list[tuple[Entry, Windows | None]] = []
    for it, w in zip(chosen, windows, strict=True):
        entry = entry_of(it)
        slot = slot_of.get(it.id)
        if slot is None:
            new.append((entry, w))
        else:
            entry.slot = slot
            kept.append((entry, w))
    kept.sort(key=lambda pair: pair[0].slot)
    index = RecallIndex(keyword)
    index.add_many(kept, indexed=True)
    index.add_many(new)
    if with_vectors:
        _inherit_all(index, items, chosen)
    return index


def _header(blob: bytes) -> dict[str, Any] | None:
    """The image's header when it is one this release reads, else ``None``."""
    try:
        (size,) = _LEN.unpack_from(blob)
        head = orjson.loads(blob[_LEN.size : _LEN.size + size])
    except (struct.error, orjson.JSONDecodeError):
        return None
    if not isinstance(head, dict) or head.get("version") != IMAGE_VERSION:
        return None
    return head
