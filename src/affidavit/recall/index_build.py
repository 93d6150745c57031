"""The RAM index of a vault's memories: built from the sealed vectors, or restored from the
image a sealed snapshot keeps.

Why a module of its own: every process that searches builds this index once, and a memory
server does it at every start. Built from scratch it stems and inserts every memory's text
into the keyword index and widens every vector (~0.25 s of CPU at 10,000 memories, mostly
Python per memory); restored from a snapshot's image (:func:`image`, sealed by the vault
with everything else, :mod:`affidavit.vault.snapshot`) the keyword index is one
``deserialize``, the per-memory columns a few array reads (no object per memory, ADR 0229)
and the vectors one copy of the vault's own float16 bytes.

A restored index is never trusted to match the vault: the image names the ``(id, seq)`` of
every memory it holds, and :func:`restore` keeps exactly those whose version the vault
still holds, drops the rest (forgotten, shredded, superseded, changed since) and indexes
the memories the image lacks. A kept memory's entry is made from the vault's record when
ranking first reads it, and its vector comes from the record too; the image adds only what
:func:`entry_of` derived from that same version (importance, opinion or not, a turn of a
thread or not), so a stale image costs time, never a wrong answer.
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
from affidavit.recall.ranking.entries import Columns
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
IMAGE_VERSION = 2
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
    return item.kind == MEMORY and not item.field("superseded_by")


def stacked(items: Sequence[VaultItem]) -> tuple[list[int], list[int], Windows]:
    """The records' embedding windows as one float16 block (rows as sealed): which of
    ``items`` have any, how many rows each, and the rows. One join and one ``frombuffer``
    for all of them: a numpy call per record cost more than the vectors themselves."""
    import numpy as np

    row = DIM * 2
    which: list[int] = []
    counts: list[int] = []
    parts: list[bytes] = []
    for i, it in enumerate(items):
        vector = it.vector
        if vector and len(vector) % row == 0:
            which.append(i)
            counts.append(len(vector) // row)
            parts.append(vector)
    return which, counts, np.frombuffer(b"".join(parts), dtype="<f2").reshape(-1, DIM)


def windows_of(items: Sequence[VaultItem]) -> list[Windows | None]:
    """Each record's embedding windows (a view of :func:`stacked`), ``None`` without any."""
    which, counts, block = stacked(items)
    out: list[Windows | None] = [None] * len(items)
    at = 0
    for i, n in zip(which, counts, strict=True):
        out[i] = block[at : at + n]
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
    """The index as bytes for the vault's snapshot: each memory's columns in slot order
    (which version of which memory sits in which slot, and what ranking reads of every
    memory) and the keyword index itself. Installed packs' records are left out: they come
    from their own verified folders."""
    columns = index.columns(lambda entry: not is_pack_namespace(entry.namespace))
    keyword = index.keyword
    if len(columns.ids) < len(index):  # a copy without the packs' (the live index keeps serving)
        keyword = KeywordIndex(keyword.image(), len(keyword))
        kept = set(columns.slots.tolist())
        keyword.remove_many(s for s in index.by_slot if s not in kept)
    head = orjson.dumps(
        {
            "version": IMAGE_VERSION,
            "vectors": with_vectors,
            "count": len(keyword),
            "ids": columns.ids,
        }
    )
    arrays = [
        columns.slots.astype("<i8").tobytes(),
        columns.seqs.astype("<i8").tobytes(),
        columns.importance.astype("<f8").tobytes(),
        columns.opinion.astype(bool).tobytes(),
        columns.threaded.astype(bool).tobytes(),
    ]
    return b"".join([_LEN.pack(len(head)), head, *arrays, keyword.image()])


def restore(blob: bytes, items: Sequence[VaultItem], with_vectors: bool) -> RecallIndex | None:
    """The index of the searchable ``items``, from an :func:`image` (``None`` when the image
    is of another version, or was made with or without vectors unlike now).

    A memory of the image is kept only when the vault holds that very version of it
    (``(id, seq)``: a seq names one write, and a record's data never changes under it, so
    it is still searchable); its entry is made from the vault's record when ranking first
    reads it. The rest of the image is dropped, and whatever the image lacks is indexed
    from its record."""
    parsed = _parse(blob)
    if parsed is None or parsed[0]["vectors"] != with_vectors:
        return None
    head, columns, keyword_image = parsed
    current = {it.id: it for it in items}
    rows: list[int] = []
    records: list[VaultItem] = []
    for row, (rid, seq) in enumerate(zip(columns.ids, columns.seqs.tolist(), strict=True)):
        it = current.get(rid)
        if it is not None and it.seq == seq:
            del current[rid]
            rows.append(row)
            records.append(it)
    import numpy as np

    kept = columns.rows(np.asarray(rows, dtype=np.int64))
    keyword = KeywordIndex(keyword_image, head["count"])
    keyword.remove_many(sorted(set(columns.slots.tolist()) - set(kept.slots.tolist())))
    index = RecallIndex(keyword)
    index.adopt(kept, records, entry_of)
    if with_vectors:
        which, counts, block = stacked(records)
        index.vector.add_block(kept.slots[which].tolist(), counts, block)
    new = [it for it in current.values() if searchable(it)]
    windows = windows_of(new) if with_vectors else [None] * len(new)
    index.add_many([(entry_of(it), w) for it, w in zip(new, windows, strict=True)])
    if with_vectors:
        _inherit_all(index, items, records + new)
    return index


def _parse(blob: bytes) -> tuple[dict[str, Any], Columns, bytes] | None:
    """An image's header, columns and keyword index when it is one this release reads."""
    import numpy as np

    try:
        (size,) = _LEN.unpack_from(blob)
        head = orjson.loads(blob[_LEN.size : _LEN.size + size])
    except (struct.error, orjson.JSONDecodeError):
        return None
    if not isinstance(head, dict) or head.get("version") != IMAGE_VERSION:
        return None
    n = len(head["ids"])
    at = _LEN.size + size
    arrays = []
    for dtype, width in (("<i8", 8), ("<i8", 8), ("<f8", 8), (bool, 1), (bool, 1)):
        if at + n * width > len(blob):
            return None
        arrays.append(np.frombuffer(blob, dtype=dtype, count=n, offset=at))
        at += n * width
    slots, seqs, importance, opinion, threaded = arrays
    columns = Columns(list(head["ids"]), slots, seqs, importance, opinion, threaded)
    return head, columns, blob[at:]
