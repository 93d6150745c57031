"""Memories over the vault: store, search, forget and link what an agent should remember.

:mod:`affidavit.vault` seals records and knows nothing of what they mean; this package gives
them their meaning: a memory is one claim with a source and dates (:mod:`.claims`), a store
decides whether it is new (:mod:`.decide`), recall ranks memories for a question
(:mod:`.ranking`), relations link entities (:mod:`.graph`), and each caller sees and writes
the namespaces its grants allow (:mod:`affidavit.access`).

Public API (every name is loaded on first use)::

    from affidavit.recall import Claim, Memory, SearchPage, search_json

    Memory(vault, *, embedder=<the shared model>, caller="user")   the facade: store,
        store_many, search, get_memory, get_relation, history, recent, forget, link,
        relations, unlink, expire, namespaces, status, import_rows (see :mod:`.memory`)
    Claim, Link, EdgeQuery  what store / store_many, link and relations take: frozen values,
                            checked when made (InputError), at the edge that read the input
    PackCitation, ToolReceipt (an Evidence), parse_evidence(raw) -> items, EvidenceStatus
                            evidence on a memory (a Claim's ``evidence``), judged at every
                            read (:mod:`.evidence`, docs/evidence.md)
    trust_log(vault, path), untrust_log(vault, path), registered_logs(vault)   the proxy
                            audit logs whose receipts the vault trusts besides the default
                            log, default_receipt_log() (sealed setting evidence.receipt_logs,
                            ADR 0224)
    CitationFinding, ReceiptFinding   what Memory.evidence_findings(id) returns: each item
                            judged now with the record text or the recorded call that shows it
    AUTO_STORE_SETTING      the sealed setting that stores unreviewed claims directly
    WrongKindError          a NotFoundError: the id names a memory, not a relation (or back)
    check_claim(text, max_chars) -> str   the one-claim rule a store applies (InputError)
    embed_missing(vault, items, progress=None) -> items   windows for rows without a vector
    availability() -> dict  whether semantic recall can run here (no model loaded)
    shared_embedder() -> Embedder | None   the process-wide sentence model
    prefer_shared()                          serve: one model per user (model_service)
    run_selftest() -> dict  recall end to end on a private temporary vault
    MemoryHistory, HistoryEvent   what Memory.history returns (:mod:`.history`)

    The values reads and writes return (TypedDicts: JSON is the point, :mod:`.views`):
    MemoryView, MemoryHit, SearchPage, RelationView, LinkOutcome, RelationPage,
    StoreOutcome + StoreStatus, RecallStatus; NOTICE; AUTO_STORE_SETTING (capture, --remember)
    wire          the JSON each of them is published as (MemoryJSON, SearchJSON, StoreJSON,
                  StatusJSON, ...), shared by the CLI's --json, the memory MCP server and
                  the console; the memory server's output schemas are generated from it
    views         the one serializer per value: memory_json, search_json, memories_json,
                  memory_got_json, relation_json, relation_got_json, link_json,
                  relations_json, store_json, store_many_json, status_json,
                  locked_status_json
    MemoryKind    fact | opinion (StrEnum; the CLI's --kind choices)
    ScoreParts    a hit's ``parts``: why it matched (channels' shares, priors, age, page);
                  kept off the wire, which carries score and channels

    bench         the retrieval benchmark runner behind ``affidavit bench retrieval``
    installed_packs   signed packs installed into the vault (``pack install``): install,
                  uninstall, installed, PackInstall; searched read-only as ``pack:<name>``
    maintenance   reindex (re-embed on a model change), retag, atomize (split_claims), and
                  SETTINGS, the sealed settings a user may list, get and set
    pack_source(memory, namespace) -> PackSource   a namespace's memories as the messages
                  and records ``pack build --from-vault`` builds from (each quotes itself)
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.recall import bench, installed_packs, maintenance, views, wire
    from affidavit.recall.claims import Claim, check_claim
    from affidavit.recall.embedder import availability, prefer_shared, shared_embedder
    from affidavit.recall.errors import WrongKindError
    from affidavit.recall.evidence import (
        Evidence,
        EvidenceStatus,
        PackCitation,
        ToolReceipt,
        parse_evidence,
    )
    from affidavit.recall.evidence_findings import CitationFinding, ReceiptFinding
    from affidavit.recall.graph import EdgeQuery, Link
    from affidavit.recall.history import HistoryEvent, MemoryHistory
    from affidavit.recall.kinds import MemoryKind
    from affidavit.recall.memory import AUTO_STORE_SETTING, Memory, embed_missing
    from affidavit.recall.pack_source import pack_source
    from affidavit.recall.ranking import ScoreParts
    from affidavit.recall.receipt_logs import (
        default_receipt_log,
        registered_logs,
        trust_log,
        untrust_log,
    )
    from affidavit.recall.selftest import run_selftest
    from affidavit.recall.views import (
        NOTICE,
        LinkOutcome,
        MemoryHit,
        MemoryView,
        RecallStatus,
        RelationPage,
        RelationView,
        SearchPage,
        StoreOutcome,
    )
    from affidavit.recall.wire import StoreStatus

__all__ = [
    "AUTO_STORE_SETTING",
    "NOTICE",
    "CitationFinding",
    "Claim",
    "EdgeQuery",
    "Evidence",
    "EvidenceStatus",
    "HistoryEvent",
    "Link",
    "LinkOutcome",
    "Memory",
    "MemoryHistory",
    "MemoryHit",
    "MemoryKind",
    "MemoryView",
    "PackCitation",
    "RecallStatus",
    "ReceiptFinding",
    "RelationPage",
    "RelationView",
    "ScoreParts",
    "SearchPage",
    "StoreOutcome",
    "StoreStatus",
    "ToolReceipt",
    "WrongKindError",
    "availability",
    "bench",
    "check_claim",
    "default_receipt_log",
    "embed_missing",
    "installed_packs",
    "maintenance",
    "pack_source",
    "parse_evidence",
    "prefer_shared",
    "registered_logs",
    "run_selftest",
    "shared_embedder",
    "trust_log",
    "untrust_log",
    "views",
    "wire",
]
__getattr__, __dir__ = lazy_exports(globals())
