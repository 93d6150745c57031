"""Memories over the vault: store, search, forget and link what an agent should remember.

:mod:`affidavit.vault` seals records and knows nothing of what they mean; this package gives
them their meaning: a memory is one claim with a source and dates (:mod:`.claims`), a store
decides whether it is new (:mod:`.decide`), recall ranks memories for a question
(:mod:`.ranking`), relations link entities (:mod:`.graph`), and each caller sees and writes
the namespaces its grants allow (:mod:`.access`).

Public API (every name is loaded on first use)::

    from affidavit.recall import Memory, SearchPage, search_json

    Memory(vault, *, embedder=<the shared model>, caller="user")   the facade: store,
        store_many, search, get_memory, get_relation, recent, forget, link, relations,
        unlink, expire, status, import_rows (see :mod:`.memory`)
    WrongKindError          a NotFoundError: the id names a memory, not a relation (or back)
    embed_missing(vault, items, progress=None) -> items   windows for rows without a vector
    availability() -> dict  whether semantic recall can run here (no model loaded)
    shared_embedder() -> Embedder | None   the process-wide sentence model
    prefer_shared()                          serve: one model per user (model_service)
    run_selftest() -> dict  recall end to end on a private temporary vault

    The values reads and writes return (TypedDicts: JSON is the point), and the one wire
    shape of each, shared by the CLI's --json and the memory MCP server (:mod:`.views`):
    MemoryView, MemoryHit, SearchPage, RelationView, LinkOutcome, RelationPage,
    StoreOutcome + StoreStatus, Forgotten, Unlinked, Expired, RecallStatus;
    memory_json, relation_json, search_json, memories_json, store_json; NOTICE

    access        callers, namespaces and grants: check_name, default_namespace, Grants,
                  Access, grant, unlock_tool_enabled, set_unlock_tool, DEFAULT_CALLER
    bench         the retrieval benchmark runner behind ``affidavit bench retrieval``
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.recall import access, bench
    from affidavit.recall.access import WrongKindError
    from affidavit.recall.embedder import availability, prefer_shared, shared_embedder
    from affidavit.recall.memory import Memory, embed_missing
    from affidavit.recall.selftest import run_selftest
    from affidavit.recall.views import (
        NOTICE,
        Expired,
        Forgotten,
        LinkOutcome,
        MemoryHit,
        MemoryView,
        RecallStatus,
        RelationPage,
        RelationView,
        SearchPage,
        StoreOutcome,
        StoreStatus,
        Unlinked,
        memories_json,
        memory_json,
        relation_json,
        search_json,
        store_json,
    )

__all__ = [
    "NOTICE",
    "Expired",
    "Forgotten",
    "LinkOutcome",
    "Memory",
    "MemoryHit",
    "MemoryView",
    "RecallStatus",
    "RelationPage",
    "RelationView",
    "SearchPage",
    "StoreOutcome",
    "StoreStatus",
    "Unlinked",
    "WrongKindError",
    "access",
    "availability",
    "bench",
    "embed_missing",
    "memories_json",
    "memory_json",
    "prefer_shared",
    "relation_json",
    "run_selftest",
    "search_json",
    "shared_embedder",
    "store_json",
]
__getattr__, __dir__ = lazy_exports(globals())
