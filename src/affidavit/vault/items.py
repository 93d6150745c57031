"""The value types of the vault API: what goes in, what comes out, what changed."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import Any

import orjson

from affidavit.core.errors import NotFoundError


class VaultItem:
    """One live record as held in RAM after unlock (immutable).

    ``id`` is random (never derived from content); ``seq`` is the vault-wide sequence number
    of this version; ``saved_at`` is when the record was first stored (UTC, ISO 8601);
    ``data`` is the JSON the caller stored (a memory has at least ``text`` and ``source``);
    ``vector`` is the embedding, sealed together with ``data``.

    A record opened from the vault's sealed snapshot keeps ``data`` as its JSON bytes until
    something reads it (:meth:`encoded`): decoding every record's JSON at every start cost
    more than everything else the snapshot needs per record (issue 27), and most records are
    never read in a server's first seconds. :meth:`field` answers one top-level key without
    decoding a record whose JSON cannot hold it.
    """

    __slots__ = ("_data", "_json", "id", "kind", "namespace", "saved_at", "seq", "vector")
    id: str
    kind: str
    namespace: str
    seq: int
    saved_at: str
    vector: bytes | None
    _data: dict[str, Any] | None
    _json: bytes | None

    def __init__(
        self,
        id: str,
        kind: str,
        namespace: str,
        seq: int,
        saved_at: str,
        data: dict[str, Any],
        vector: bytes | None = None,
    ) -> None:
        _fill(self, id, kind, namespace, seq, saved_at, vector, data, None)

    @classmethod
    def encoded(
        cls,
        columns: Sequence[Sequence[Any]],
        data: bytes,
        data_sizes: Sequence[int],
        vectors: bytes,
        vector_sizes: Sequence[int],
    ) -> list[VaultItem]:
        """Items from columns (ids, kinds, namespaces, seqs, saved_at), each one's ``data``
        decoded from its JSON (``data_sizes[i]`` bytes of ``data``, in order) when first
        read, and its vector ``vector_sizes[i]`` bytes of ``vectors``. ValueError when the
        columns differ in length or the sizes do not add up to the bytes."""
        new = object.__new__
        set_id, set_kind, set_ns, set_seq, set_at, set_vector, set_data, set_json = _SETTERS
        out: list[VaultItem] = []
        at_data = at_vector = 0
        ids, kinds, namespaces, seqs, saved_at = columns
        for rid, kind, namespace, seq, saved, data_size, vector_size in zip(
            ids, kinds, namespaces, seqs, saved_at, data_sizes, vector_sizes, strict=True
        ):
            item = new(cls)
            set_id(item, rid)
            set_kind(item, kind)
            set_ns(item, namespace)
            set_seq(item, seq)
            set_at(item, saved)
            end_vector = at_vector + vector_size
            set_vector(item, vectors[at_vector:end_vector] if vector_size else None)
            set_data(item, None)
            end_data = at_data + data_size
            set_json(item, data[at_data:end_data])
            at_data, at_vector = end_data, end_vector
            out.append(item)
        if at_data != len(data) or at_vector != len(vectors):
            raise ValueError("the sizes do not add up to the records' bytes")
        return out

    @property
    def data(self) -> dict[str, Any]:
        """The record's JSON object (decoded on first read)."""
        data = self._data
        if data is None:
            data = orjson.loads(self._json or b"{}")
            _set_data(self, data)
            _set_json(self, None)
        return data

    def field(self, key: str) -> Any:
        """``data.get(key)``, without decoding a record whose JSON does not name ``key``
        (orjson writes a key's ASCII as it is, so a key it holds is in the bytes verbatim)."""
        raw = self._json
        if raw is not None and _quoted(key) not in raw:
            return None
        return self.data.get(key)

    def data_json(self) -> bytes:
        """``data`` as JSON bytes (the bytes it was decoded from, when not decoded yet)."""
        return self._json if self._json is not None else orjson.dumps(self.data)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[object, ...]:
        return (self.id, self.kind, self.namespace, self.seq, self.saved_at, self.data, self.vector)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VaultItem):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # data is a dict: as unhashable as before

    def __repr__(self) -> str:
        return (
            f"VaultItem(id={self.id!r}, kind={self.kind!r}, namespace={self.namespace!r}, "
            f"seq={self.seq!r}, saved_at={self.saved_at!r}, data={self.data!r}, "
            f"vector={self.vector!r})"
        )

    def as_dict(self) -> dict[str, Any]:
        """The item as JSON (vector left out; export adds it encoded)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "namespace": self.namespace,
            "seq": self.seq,
            "saved_at": self.saved_at,
            "data": self.data,
        }


# The slots' own setters: an item is frozen, and these are how it is filled once (a snapshot
# makes one per record at every start, so they are looked up here, not per call).
_FILLED = ("id", "kind", "namespace", "seq", "saved_at", "vector", "_data", "_json")
_SETTERS = [getattr(VaultItem, name).__set__ for name in _FILLED]
_set_data, _set_json = _SETTERS[6], _SETTERS[7]


@functools.lru_cache(maxsize=64)
def _quoted(key: str) -> bytes:
    return orjson.dumps(key)


def _fill(item: VaultItem, *values: object) -> None:
    for setter, value in zip(_SETTERS, values, strict=True):
        setter(item, value)


@dataclass(frozen=True, slots=True)
class NewItem:
    """A record to store. ``saved_at`` is set only by import; ``id`` by import, or by a
    caller that must name the record in the same write (a correction), else generated."""

    data: dict[str, Any]
    kind: str = "memory"
    namespace: str = "default"
    vector: bytes | None = None
    id: str | None = None
    saved_at: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One change picked up from the log: ``put`` (new or new version), ``forget``, ``shred``.

    ``item`` is the new version for ``put`` and None otherwise.
    """

    op: str
    id: str
    seq: int
    item: VaultItem | None


def unknown_record(item_id: str) -> NotFoundError:
    """The one answer for an id the vault does not hold.

    Also the answer for a record a caller may not see (:class:`affidavit.access.Access`), so
    the two cannot be told apart: the same words, byte for byte.
    """
    return NotFoundError(
        f"no record {item_id} in this vault", "check the id: search and recent list memory ids"
    )
