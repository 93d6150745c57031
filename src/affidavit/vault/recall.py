"""Recall over a vault: the ``Memory`` facade the CLI and the MCP server call.

Public API (plain dicts in and out, so an MCP tool result is ``json.dumps`` of the return)::

    from affidavit.vault.recall import Memory
    m = Memory(vault, caller="user")       # or Memory.open(path=None): Vault.open + index
    m.store(text=..., source=..., namespace=..., tags=[...], discovered="YYYY-MM-DD",
            expires="2026-09-03" | "14d" | "2w" | "3m" | "1y", importance=0.8,
            kind="fact" | "opinion", supersedes=None | [] | [ids], quarantined=False)
        -> {"id", "status": "stored" | "duplicate" | "reaffirmed" | "conflict",
            "conflicts": [memory...] (status conflict), "superseded": [ids]}
    m.store_many([{...}, ...]) -> [result, ...]   every item validated before any is stored
    m.search(query, namespaces=None, tags=None, saved_since=None, saved_until=None,
             discovered_since=None, discovered_until=None, top_k=None)
        -> {"results": [memory + score + channels], "semantic": bool, "notice": str}
    m.get(id) -> memory (superseded ones too, with "superseded_by")
    m.recent(limit=10, namespace=None) -> [memory, ...] newest first
    m.forget(id, shred=False) -> {"id", "forgotten": True, "shredded": bool}
    m.link(subject, predicate, object, src_id=None, valid_from=None, valid_to=None,
           namespace="default") -> relation
    m.relations(entity=None, subject=None, predicate=None, object=None, as_of=None,
                namespace=None, limit=50) -> {"relations": [...], "truncated", "total"}
    m.unlink(id) -> {"id", "unlinked": True}
    m.expire() -> {"expired": [ids]}       (also runs by itself after every write)
    m.status() -> vault status + {"semantic", "model", "indexed", "vector_index"}
    m.import_rows(rows, progress=None) -> int   verbatim rows (no authoring limits), one
                                                transaction for the whole batch

Every write checks the caller's grants (:class:`affidavit.vault.acl.Access`): ``rw`` on the
namespace written and on every record changed (superseded, forgotten, unlinked); a record the
caller cannot see is answered like an unknown id. The CLI is caller ``user``; each MCP server
is the caller it was started as.

Why a facade: the vault stores sealed records and knows nothing of ranking; the indexes
know nothing of the vault. ``Memory`` keeps the RAM index in step with the vault through
the vault's change listener (own writes and other processes' writes alike), calls
``Vault.refresh()`` before each read so another agent's store is visible to the next query,
and embeds once at store time: the vector is sealed with the record, so unlocking never
re-embeds. Reads write nothing; expired memories are hidden from reads at once and
forgotten by the sweep on the next write.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.clock import utc_iso
from affidavit.core.errors import InputError, NotFoundError, PolicyError
from affidavit.vault import acl, graph, lifecycle, ranking
from affidavit.vault import memory as model
from affidavit.vault.api import new_id
from affidavit.vault.duplicates import same_wording, says_the_same
from affidavit.vault.embedder import (
    Embedder,
    describe,
    shared_embedder,
    trim_heap,
    vector_from_bytes,
    vector_to_bytes,
)
from affidavit.vault.index import query_terms
from affidavit.vault.items import Change, NewItem, VaultItem
from affidavit.vault.ranking import Entry, Filters, RecallIndex
from affidavit.vault.validate import check_structure

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from affidavit.vault.api import Vault

MEMORY = "memory"
MAX_CHARS_SETTING = "max_memory_chars"
#: Rows embedded per step of an import: a progress tick, and a bounded peak of windows.
EMBED_CHUNK = 256
_AUTO: Any = object()


def _entry(item: VaultItem) -> Entry:
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
        kind=str(d.get("kind", "fact")),
        affirmed=d.get("affirmed"),
        ages=not d.get("imported", False),
        thread=d.get("thread"),
        turn=d.get("turn"),
        reply_to=d.get("reply_to"),
    )


def _searchable(item: VaultItem) -> bool:
    return item.kind == MEMORY and not item.data.get("superseded_by")


def _words(text: str) -> set[str]:
    return {t for t in query_terms(text) if t not in ranking.FUNCTION_WORDS}


def _place(claim: model.Claim) -> tuple[str, str, str | None, int | None]:
    """Where a claim can have a duplicate: namespace, kind, and its thread and turn if any."""
    return (claim.namespace, claim.kind, claim.structure.get("thread"), claim.structure.get("turn"))


def _jaccard(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


class Memory:
    """Recall, lifecycle and graph over one open vault (thread-safe)."""

    def __init__(
        self, vault: Vault, *, embedder: Embedder | None = _AUTO, caller: str = acl.DEFAULT_CALLER
    ) -> None:
        self.vault = vault
        self.access = acl.Access(vault, caller)
        self._embedder = None if embedder is _AUTO else embedder
        self._embedder_ready = embedder is not _AUTO
        self._index: RecallIndex | None = None
        self._lock = threading.RLock()
        self._changes: deque[Change] = deque()
        self._expiring = {
            it.id: str(it.data["expires"]) for it in vault.items(MEMORY) if it.data.get("expires")
        }
        vault.add_listener(self._on_change)

    @property
    def embedder(self) -> Embedder | None:
        """The sentence model, loaded on first need (graph and listing commands never pay)."""
        if not self._embedder_ready:
            self._embedder = shared_embedder()
            self._embedder_ready = True
        return self._embedder

    @property
    def index(self) -> RecallIndex:
        """The RAM index, built from the vault's sealed vectors on first need (no re-embedding)."""
        with self._lock:
            if self._index is None:
                index = RecallIndex()
                index.add_many(
                    [
                        (_entry(it), self._windows_of(it))
                        for it in self.vault.items(MEMORY)
                        if _searchable(it)
                    ]
                )
                self._index = index
                trim_heap()
            return self._index

    @classmethod
    def open(cls, path: Path | None = None) -> Memory:
        """Open the vault (AFFIDAVIT_VAULT / default; unlock rules of ``Vault.open``)."""
        from affidavit.vault import Vault

        return cls(Vault.open(path))

    # -- keeping the index in step ---------------------------------------------------------

    def _windows_of(self, item: VaultItem) -> npt.NDArray[np.float32] | None:
        if self.embedder is None or not item.vector:
            return None
        return vector_from_bytes(item.vector)

    def _on_change(self, change: Change) -> None:
        # Called under the vault's lock, possibly from a thread that does not hold ours:
        # only queue here (deque.append is atomic); _drain applies under our lock. Taking our
        # lock here could deadlock against a thread holding it and waiting for the vault's.
        self._changes.append(change)

    def _drain(self) -> None:
        """Apply queued vault changes to the expiry map and, if built, the RAM index."""
        while self._changes:
            change = self._changes.popleft()
            self._expiring.pop(change.id, None)
            item = change.item
            live = change.op == "put" and item is not None and item.kind == MEMORY
            if live and item is not None and item.data.get("expires"):
                self._expiring[item.id] = str(item.data["expires"])
            if self._index is None:
                continue  # built later from the vault, which already holds this change
            self._index.remove(change.id)
            if live and item is not None and _searchable(item):
                self._index.add(_entry(item), self._windows_of(item))

    def _sync(self) -> None:
        """Pick up other processes' writes (and our own queued changes) before a read."""
        self.vault.refresh()
        self._drain()

    def _hidden(self) -> frozenset[str]:
        today = lifecycle.today_utc().isoformat()
        return frozenset(i for i, day in self._expiring.items() if day < today)

    def _max_chars(self) -> int:
        value = self.vault.get_setting(MAX_CHARS_SETTING, model.DEFAULT_MAX_CHARS)
        return int(value) if isinstance(value, int) and value > 0 else model.DEFAULT_MAX_CHARS

    def _view(self, item: VaultItem) -> dict[str, Any]:
        return model.view(item.id, item.namespace, item.saved_at, item.data)

    # -- storing ---------------------------------------------------------------------------

    def store(self, **fields: Any) -> dict[str, Any]:
        """Store one memory (see the module docstring for fields and results)."""
        return self.store_many([fields])[0]

    def store_many(self, batch: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Store a batch: all validated first, new memories sealed in one transaction."""
        if not isinstance(batch, Sequence) or not batch:
            raise InputError("a batch to store needs at least one memory")
        with self._lock, self.index.vector.foreground():
            self._sync()
            limit = self._max_chars()
            claims = []
            for i, fields in enumerate(batch):
                where = f"item {i}: " if len(batch) > 1 else ""
                if not isinstance(fields, Mapping):
                    raise InputError(f"{where}a memory must be an object")
                claims.append(model.build_claim(fields, max_chars=limit, where=where))
            replaced: dict[str, int] = {}  # superseded id -> the item that replaces it
            for i, claim in enumerate(claims):
                where = f"item {i}: " if len(claims) > 1 else ""
                self._require_write(claim.namespace, where)
                self._check_supersedes(claim, where)
                for old in claim.supersedes or ():
                    if replaced.setdefault(old, i) != i:
                        raise InputError(
                            f"{where}{old} is superseded by item {replaced[old]} already",
                            "let one memory of the batch replace it",
                        )
            vectors = self._embed([c.text for c in claims])
            results: list[dict[str, Any] | None] = [None] * len(claims)
            new: list[tuple[int, NewItem]] = []
            now = utc_iso(timespec="seconds")
            repeats: dict[int, int] = {}  # item -> earlier new item of the batch it repeats
            for i, claim in enumerate(claims):
                qv = vectors[i][0] if vectors is not None else None
                decided = self._decide(claim, qv, now)
                if decided is not None:
                    results[i] = decided
                    continue
                earlier = next(
                    (j for j, _ in new if self._same_claim(claims[j], claim, vectors, j, i)), None
                )
                if earlier is not None:
                    repeats[i] = earlier
                    continue
                vector = vector_to_bytes(vectors[i]) if vectors is not None else None
                # A correction knows its id before the write, so the record it replaces is
                # marked in the same transaction (a crash never leaves both live).
                rid = new_id() if claim.supersedes else None
                new.append((i, NewItem(claim.data(now), MEMORY, claim.namespace, vector, id=rid)))
            amend = {
                old: {"superseded_by": item.id}
                for i, item in new
                for old in claims[i].supersedes or ()
            }
            stored = self.vault.put_many([it for _, it in new], amend=amend) if new else []
            for (i, _), item in zip(new, stored, strict=True):
                superseded = list(claims[i].supersedes or ())
                results[i] = {"id": item.id, "status": "stored", "superseded": superseded}
            for i, j in repeats.items():
                first = results[j]
                assert first is not None
                results[i] = {"id": first["id"], "status": "duplicate", "superseded": []}
            self._drain()
            self._sweep()
            self._drain()
            return [r for r in results if r is not None]

    @staticmethod
    def _same_claim(
        a: model.Claim, b: model.Claim, vectors: Sequence[Any] | None, ia: int, ib: int
    ) -> bool:
        """Whether two claims of one batch say the same thing (the store-time rule)."""
        if _place(a) != _place(b):
            return False
        if a.kind == "opinion":
            return same_wording(a.text, b.text)
        if vectors is None:
            close = _jaccard(a.text, b.text) >= ranking.DUPLICATE_JACCARD
        else:
            close = float((vectors[ia] @ vectors[ib][0]).max()) >= ranking.DUPLICATE_COSINE
        return says_the_same(a.text, b.text, close=close)

    def _embed(self, texts: list[str]) -> list[npt.NDArray[np.float32]] | None:
        return self.embedder.embed_windows(texts) if self.embedder is not None else None

    def _require_write(self, namespace: str, where: str) -> None:
        try:
            self.access.require_write(namespace)
        except PolicyError as exc:
            raise PolicyError(where + exc.message, exc.hint) from None

    def _check_supersedes(self, claim: model.Claim, where: str) -> None:
        """Each superseded id: a live memory the caller may see and write, not replaced yet.

        A correction takes the old memory out of recall, so it needs the same right as
        forgetting it: ``rw`` on the old memory's namespace, whichever namespace the
        correction itself goes to.
        """
        for old in claim.supersedes or ():
            try:
                item = self.access.readable(old)
            except NotFoundError as exc:
                raise InputError(
                    f"{where}supersedes {old}: {exc.message}", "pass ids of live memories"
                ) from None
            if item.kind != MEMORY:
                raise InputError(f"{where}supersedes {old}: that record is not a memory")
            self._require_write(item.namespace, where)
            if item.data.get("superseded_by"):
                raise InputError(
                    f"{where}{old} is already superseded by {item.data['superseded_by']}",
                    "supersede the newer memory instead",
                )

    def _nearest(self, claim: model.Claim, qv: Any) -> list[tuple[float, VaultItem]]:
        """Live memories in the claim's place among its SIMILAR_POOL nearest.

        The place is the namespace, the kind and, for a turn of a conversation, its thread
        and turn: two turns that say "Yes." are two turns, not one memory. Each with its
        similarity: the best-window cosine, or without a model the overlap of informative
        words (Jaccard); most similar first.
        """
        if qv is not None:
            scored = self.index.vector.search(qv, ranking.SIMILAR_POOL)
        else:
            scored = {
                slot: _jaccard(claim.text, entry.text)
                for slot, entry in self.index.lexical_candidates(claim.text, ranking.SIMILAR_POOL)
            }
        found: list[tuple[float, VaultItem]] = []
        for slot, sim in scored.items():
            entry = self.index.entry_at(slot)
            if entry is None:
                continue
            if (entry.namespace, entry.kind, entry.thread, entry.turn) == _place(claim):
                found.append((sim, self.vault.get(entry.id)))
        found.sort(key=lambda pair: -pair[0])
        return found

    def _decide(self, claim: model.Claim, qv: Any, now: str) -> dict[str, Any] | None:
        """Duplicate, re-affirmation or opinion conflict; ``None`` means store it."""
        semantic = qv is not None
        near = [
            (sim, item)
            for sim, item in self._nearest(claim, qv)
            if item.id not in (claim.supersedes or ())
        ]
        if claim.kind == "opinion":
            # An embedding barely tells "tabs over spaces" from "spaces over tabs": only a
            # word-for-word restatement re-affirms; anything else similar is a conflict.
            same = [item for _, item in near if same_wording(item.data["text"], claim.text)]
            if same:
                self.vault.update(same[0].id, {**same[0].data, "affirmed": now})
                return {"id": same[0].id, "status": "reaffirmed", "superseded": []}
        else:
            bar = ranking.DUPLICATE_COSINE if semantic else ranking.DUPLICATE_JACCARD
            same = [
                item
                for sim, item in near
                if says_the_same(item.data["text"], claim.text, close=sim >= bar)
            ]
            if same:
                return {"id": same[0].id, "status": "duplicate", "superseded": []}
        if claim.kind == "opinion" and claim.supersedes is None:
            bar = ranking.OPINION_CONFLICT_COSINE if semantic else ranking.OPINION_CONFLICT_JACCARD
            rivals = [item for sim, item in near if sim >= bar]
            if rivals:
                return {
                    "id": None,
                    "status": "conflict",
                    "conflicts": [self._view(r) for r in rivals],
                    "hint": "resend with supersedes=[ids] to replace them, or supersedes=[] "
                    "to keep both",
                    "superseded": [],
                }
        return None

    def import_rows(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        namespace: str = "default",
        source: str = "import",
        progress: Callable[[str, int, int], None] | None = None,
    ) -> int:
        """Store verbatim rows (imports skip authoring limits).

        A row is ``{"id", "text", "date"?, "thread"?, "turn"?, "reply_to"?}``: a conversation
        imported with its ``thread`` (and turn order, and who replies to whom) gets the
        conversation rules of ranking; rows without one are standalone memories. All or
        nothing: every row is checked and embedded first, then the batch is sealed and
        committed in one transaction (one fsync, not one per row or chunk), so a crash or a
        bad row leaves the vault as it was. ``progress(phase, done, total)`` reports the
        ``"embedding"`` and then the ``"sealing"`` phase.
        """
        structures = []
        for i, row in enumerate(rows):
            if not isinstance(row.get("text"), str) or not row["text"].strip():
                raise InputError(f"row {i}: text must be a non-empty string")
            structures.append(check_structure(dict(row), f"row {i}: "))
        embedding = (lambda done, total: progress("embedding", done, total)) if progress else None
        with self._lock:
            texts = [str(r["text"]) for r in rows]
            embedder = self.embedder
            vectors = window_bytes(embedder, texts, embedding) if embedder is not None else None
            items = []
            for i, row in enumerate(rows):
                data: dict[str, Any] = {
                    "text": row["text"],
                    "source": source,
                    "kind": "fact",
                    "imported": True,
                    **structures[i],
                }
                if row.get("date"):
                    data["discovered"] = str(row["date"])[:10]
                vector = vectors[i] if vectors is not None else None
                items.append(NewItem(data, MEMORY, namespace, vector, id=row.get("id")))
            sealing = (lambda done, total: progress("sealing", done, total)) if progress else None
            self.vault.put_many(items, progress=sealing)
            self._drain()
        return len(items)

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        namespaces: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        kind: str | None = None,
        saved_since: str | None = None,
        saved_until: str | None = None,
        discovered_since: str | None = None,
        discovered_until: str | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """Ranked memories for a question; nothing when the vault knows nothing about it."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("search needs a question", "e.g. affidavit search 'deploy steps'")
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise InputError("top_k must be a positive whole number (or absent for adaptive)")
        filters = Filters(
            namespaces=frozenset(namespaces) if namespaces else None,
            tags=frozenset(t.lower() for t in tags) if tags else None,
            kind=_kind(kind),
            saved_since=_bound(saved_since, "saved_since"),
            saved_until=_bound(saved_until, "saved_until"),
            discovered_since=_bound(discovered_since, "discovered_since"),
            discovered_until=_bound(discovered_until, "discovered_until"),
        )
        embedding = self.embedder.embed_query_soon(query) if self.embedder is not None else None
        with self._lock, self.index.vector.foreground():
            self._sync()
            hits = self.index.search(
                query,
                embedding.result if embedding is not None else None,
                filters=filters,
                top_k=top_k,
                exclude=self._hidden(),
            )
            results = []
            for hit in hits:
                out = self._view(self.vault.get(hit.id))
                out["score"] = round(hit.score, 4)
                out["channels"] = hit.channels
                results.append(out)
        semantic = embedding is not None
        return {"results": results, "semantic": semantic, "notice": model.RESULT_NOTICE}

    def get(self, item_id: str) -> dict[str, Any]:
        """One memory or relation by id (superseded memories included)."""
        with self._lock:
            self._sync()
            item = self.access.readable(item_id)
            if item.kind == graph.RELATION:
                return graph.edge_view(item)
            if item.kind != MEMORY:
                raise NotFoundError(f"{item_id} is not a memory")
            if item.id in self._hidden():
                raise NotFoundError(f"memory {item_id} expired on {item.data.get('expires')}")
            return self._view(item)

    def recent(self, limit: int = 10, namespace: str | None = None) -> list[dict[str, Any]]:
        """The newest live memories, newest first (superseded and expired left out)."""
        if limit < 1:
            raise InputError("limit must be at least 1")
        with self._lock:
            self._sync()
            hidden = self._hidden()
            items = [
                it
                for it in self.vault.items(MEMORY, namespace)
                if _searchable(it) and it.id not in hidden
            ]
            items.sort(key=lambda it: (it.saved_at, it.seq), reverse=True)
            return [self._view(it) for it in items[:limit]]

    # -- forgetting and expiry ---------------------------------------------------------------

    def forget(self, item_id: str, *, shred: bool = False) -> dict[str, Any]:
        """Forget a record the caller may write (``shred``: destroy its key and ciphertext).

        Shredding a record that is already forgotten needs write access everywhere: its
        namespace is sealed away with its content.
        """
        with self._lock:
            self._sync()
            try:
                self.access.writable(item_id)
            except NotFoundError:
                if not (shred and self.access.writes_everywhere()):
                    raise
            self.vault.forget(item_id, shred=shred)
            return {"id": item_id, "forgotten": True, "shredded": shred}

    def _sweep(self) -> list[str]:
        gone = sorted(self._hidden())
        for item_id in gone:
            self.vault.forget(item_id)
        return gone

    def expire(self) -> dict[str, Any]:
        """Forget every memory whose expiry day has passed; the ids that went."""
        with self._lock:
            self._sync()
            return {"expired": self._sweep()}

    # -- graph ----------------------------------------------------------------------------------

    def link(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        src_id: str | None = None,
        valid_from: Any = None,
        valid_to: Any = None,
        namespace: str = "default",
    ) -> dict[str, Any]:
        """Record subject -predicate-> object (idempotent: the same edge returns its id)."""
        data = graph.edge_data(
            subject, predicate, object, src_id=src_id, valid_from=valid_from, valid_to=valid_to
        )
        with self._lock:
            self._sync()
            self.access.require_write(namespace)
            if src_id is not None:
                self.get(src_id)
            existing = graph.same_edge(self.vault.items(graph.RELATION), namespace, data)
            if existing is not None:
                return {**graph.edge_view(existing), "created": False}
            item = self.vault.put(NewItem(data, graph.RELATION, namespace))
            self._sweep()
            return {**graph.edge_view(item), "created": True}

    def relations(self, **query: Any) -> dict[str, Any]:
        """Edges by entity/subject/predicate/object/as_of/namespace, with limit+truncated."""
        q = graph.EdgeQuery(**query)
        with self._lock:
            self._sync()
            return graph.query(self.vault.items(graph.RELATION), q)

    def unlink(self, item_id: str) -> dict[str, Any]:
        """Delete one edge by id."""
        with self._lock:
            self._sync()
            graph.require_edge(self.access.writable(item_id))
            self.vault.forget(item_id)
            return {"id": item_id, "unlinked": True}

    # -- status ---------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The vault's status plus what recall can do right now."""
        with self._lock:
            self._sync()
            out = self.vault.status()
            out.update(
                describe()
                if self.embedder is not None
                else {
                    "semantic": False,
                    "model": None,
                    "reason": "semantic recall is off: no embedding model loaded",
                }
            )
            out["indexed"] = len(self.index)
            out["vector_index"] = self.index.vector.mode
            return out


def embed_missing(
    vault: Vault, items: Sequence[NewItem], progress: Callable[[int, int], None] | None = None
) -> list[NewItem]:
    """Give new memory rows that arrive without a vector (a hand-written export) their windows.

    An export carries each memory's sealed vector; rows from elsewhere often do not, and
    without one a memory is found by its words only. Rows whose id the vault already holds
    are left as they are, so re-importing stays idempotent. With no model the rows stay as
    they are (keyword recall still finds them; ``status`` says semantic recall is off).
    """
    from dataclasses import replace

    def new(item: NewItem) -> bool:
        try:
            vault.get(str(item.id))
        except NotFoundError:
            return True
        return False

    todo = [
        i
        for i, it in enumerate(items)
        if it.kind == MEMORY
        and it.vector is None
        and isinstance(it.data.get("text"), str)
        and new(it)
    ]
    embedder = shared_embedder() if todo else None  # an export with vectors loads no model
    if embedder is None:
        return list(items)
    out = list(items)
    vectors = window_bytes(embedder, [str(items[i].data["text"]) for i in todo], progress)
    for i, vector in zip(todo, vectors, strict=True):
        out[i] = replace(items[i], vector=vector)
    return out


def window_bytes(
    embedder: Embedder, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> list[bytes]:
    """Each text's window vectors as sealed bytes, :data:`EMBED_CHUNK` texts per step (one
    progress tick each, and a bounded peak of float32 windows)."""
    out: list[bytes] = []
    for start in range(0, len(texts), EMBED_CHUNK):
        windows = embedder.embed_windows(list(texts[start : start + EMBED_CHUNK]))
        out += [vector_to_bytes(w) for w in windows]
        if progress is not None:
            progress(len(out), len(texts))
    return out


def _bound(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be a date (YYYY-MM-DD)")
    return lifecycle.parse_date(value, name) if len(value) <= 10 else value


def _kind(value: str | None) -> str | None:
    if value is not None and value not in model.KINDS:
        raise InputError(f"kind must be one of {', '.join(model.KINDS)}, not {value!r}")
    return value
