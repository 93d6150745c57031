"""The memory tools' argument types, and the results that are the server's own (not recall's).

Each handler of :class:`~affidavit.servers.memory.handlers.MemoryTools` takes one of these
argument types: the JSON a call's ``arguments`` hold once the toolkit has checked them
against the tool's input schema (so the handler may read them as typed). The schemas stay
written by hand in :mod:`.catalogue`, for their bounds, patterns and descriptions;
tests/servers/memory/test_shapes.py holds every schema and its argument type to the same
properties, types and required names. The old spellings of Compartment (ADR 137) are part
of the types: ``record_id`` beside ``id``, ``since`` / ``until`` beside ``saved_since`` /
``saved_until``, unix times beside dates.

Like :mod:`affidavit.recall.wire` these are ``typing_extensions`` TypedDicts, for the schema
generator; handlers import them only for type checking.
"""

from __future__ import annotations

from typing import Literal, Required

from typing_extensions import TypedDict


class NoArguments(TypedDict):
    """A tool that takes no arguments."""


class EvidenceArguments(TypedDict, total=False):
    """One evidence item: a pack citation (pack, signer, record, quote) or a receipt (log,
    entry)."""

    type: Required[Literal["pack", "receipt"]]
    pack: str
    signer: str
    record: str
    quote: str
    log: str
    entry: str


class _ClaimArguments(TypedDict, total=False):
    """What one memory may carry besides its source."""

    text: Required[str]
    namespace: str
    tags: list[str]
    importance: float
    kind: Literal["fact", "opinion"]
    supersedes: list[str]
    discovered: str
    expires: str
    quarantined: bool
    thread: str
    turn: int
    reply_to: str
    evidence: list[EvidenceArguments]


class FactArguments(_ClaimArguments, total=False):
    """One memory of ``memory_store_many`` (its source may come from the batch)."""

    source: str


class StoreArguments(_ClaimArguments):
    """``memory_store``: one memory, its source required."""

    source: str


class StoreManyArguments(TypedDict, total=False):
    """``memory_store_many``: the memories, and what they share unless each says otherwise."""

    facts: Required[list[FactArguments]]
    source: str
    namespace: str
    discovered: str


class SearchArguments(TypedDict, total=False):
    """``memory_search``."""

    query: Required[str]
    namespace: str
    tags: list[str]
    kind: Literal["fact", "opinion"]
    top_k: int
    saved_since: str
    saved_until: str
    discovered_since: str
    discovered_until: str
    since: str | float
    until: str | float
    proven_only: bool


class RecordArguments(TypedDict, total=False):
    """``memory_get``: a memory's ``id`` or its alias ``record_id`` (one of the two)."""

    id: str
    record_id: str


class ForgetArguments(RecordArguments, total=False):
    """``memory_forget``."""

    shred: bool


class RecentArguments(TypedDict, total=False):
    """``memory_recent``."""

    limit: int
    namespace: str
    include_seeded: bool
    order: Literal["newest", "oldest"]


class LinkArguments(TypedDict, total=False):
    """``memory_link``."""

    subject: Required[str]
    predicate: Required[str]
    object: Required[str]
    src_id: str
    valid_from: str | float
    valid_to: str | float
    namespace: str


class RelationsArguments(TypedDict, total=False):
    """``memory_relations``."""

    entity: str
    subject: str
    object: str
    predicate: str
    as_of: str | float
    namespace: str
    limit: int


class UnlinkArguments(TypedDict):
    """``memory_unlink``."""

    relation_id: str


class UnlockArguments(TypedDict):
    """``memory_unlock``."""

    passphrase: str


class LockJSON(TypedDict):
    """What the panic lock did: always locked; every step that failed, said plainly."""

    locked: bool
    failures: list[str]


class UnlockJSON(TypedDict):
    """The vault is open again."""

    locked: bool
