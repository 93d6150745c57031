"""Recall over a vault: the ``Memory`` facade the CLI and the MCP server call.

Public API (typed JSON values out, :mod:`affidavit.recall.views`)::

    from affidavit.recall import Claim, EdgeQuery, Link, Memory
    m = Memory(vault, caller="user")       # or Memory.open(path=None): Vault.open + index
    m.caller, m.namespace                   who asks, and where it writes by default (its own)
    m.store(Claim(text=..., source=..., namespace=None | "ns", tags=(...), discovered=...,
                  expires=..., importance=0.8, kind="fact" | "opinion",
                  supersedes=None | () | (ids...), quarantined=False))
        -> StoreOutcome {"id", "status": StoreStatus, "namespace", "superseded": [ids],
                         "conflicts": [MemoryView...], "hint" (status conflict only)}
    m.store_many([Claim, ...], progress=None) -> [StoreOutcome, ...]   every claim checked
        before any is stored; progress(phase, done, total) for long batches
    m.max_chars -> int                      the one-claim limit (setting max_memory_chars)
    m.search(query, namespaces=None, tags=None, kind=None, saved_since=None,
             saved_until=None, discovered_since=None, discovered_until=None, top_k=None,
             proven_only=False)
        -> SearchPage {"results": [MemoryHit], "semantic": bool, "notice": str}
        (proven_only: only memories whose evidence is proven now; ranking is unchanged)
    m.get_memory(id) -> MemoryView (superseded ones too, with "superseded_by")
    m.history(id) -> MemoryHistory {"memory", "supersedes", "superseded_by", "conflicts",
                                    "events"}: corrections both ways, live conflicts, writes
    m.get_relation(id) -> RelationView
        (WrongKindError, a NotFoundError, when the id names a record of another kind)
    m.recent(limit=10, namespace=None) -> [MemoryView, ...] newest first
    m.forget(id, shred=False) -> ForgottenJSON {"forgotten": True, "id", "shredded": bool}
    m.link(Link(subject, predicate, object, src_id=None, valid_from=None, valid_to=None,
                namespace=None)) -> LinkOutcome (RelationView + "created")
    m.relations(EdgeQuery(entity=None, subject=None, predicate=None, object=None,
                          as_of=None, namespace=None, limit=50))
        -> RelationPage {"relations", "truncated", "total"}
    m.unlink(id) -> UnlinkedJSON {"removed": True, "relation_id"}
    m.expire() -> ExpiredJSON {"expired": [ids]}   (also runs by itself after every write)
    m.namespaces() -> NamespacesJSON {"caller", "default_namespace", "namespaces": [...]}
    m.status() -> RecallStatus {"caller", "memories", "semantic", "model", "indexed", ...}
    m.packs -> PackShelf   installed signed packs searched beside memories (read-only)
    m.rebuild_index() -> int; m.max_chars: int
    m.import_rows(rows, progress=None) -> int   verbatim rows (no authoring limits), one
                                                transaction for the whole batch

The caller's grants (:mod:`affidavit.access`) are applied here, for every front-end: a write
needs ``rw`` on the namespace written and on every record changed (superseded, forgotten,
unlinked); a record the caller cannot see is answered like an unknown id; ``search``,
``recent``, ``relations``, ``namespaces`` and ``status`` cover only the namespaces it may
read. A claim or link that names no namespace goes to the caller's own (ADR 161). The CLI
and the console are caller ``user`` unless told otherwise; each MCP server is the caller it
was started as.

Why a facade: the vault stores sealed records and knows nothing of ranking; the indexes
know nothing of the vault. ``Memory`` keeps the RAM index in step with the vault through
the vault's change listener (own writes and other processes' writes alike), calls
``Vault.refresh()`` before each read so another agent's store is visible to the next query,
and embeds once at store time: the vector is sealed with the record, so unlocking never
re-embeds. Reads write nothing; expired memories are hidden from reads at once and
forgotten by the sweep on the next write.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from affidavit.access import DEFAULT_CALLER, Access, Mode, default_namespace
from affidavit.core.clock import utc_iso
from affidavit.core.errors import InputError, NotFoundError, PolicyError
from affidavit.core.file_state import FileState
from affidavit.recall import claims, graph, history, index_build, lifecycle
from affidavit.recall.decide import (
    WORDED_FROM,
    BatchRepeats,
    decide,
    nearest,
    worded_duplicate,
    worded_index,
)
from affidavit.recall.embedder import (
    Embedder,
    describe,
    shared_embedder,
    vector_from_bytes,
    vector_to_bytes,
)
from affidavit.recall.errors import WrongKindError
from affidavit.recall.evidence import (
    Evidence,
    EvidenceJudge,
    EvidenceStatus,
    PackCitation,
    parse_evidence,
)
from affidavit.recall.evidence_findings import Finding, findings
from affidavit.recall.history import MemoryHistory
from affidavit.recall.index_build import MEMORY, entry_of, searchable
from affidavit.recall.installed_packs import (
    PackShelf,
    installed,
    is_pack_namespace,
    refuse_write,
)
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.onnx_model import EARLIER_MODELS, MODEL_FILE, MODEL_ID, trim_heap
from affidavit.recall.ranking import Filters, RecallIndex
from affidavit.recall.receipt_logs import trusted_logs
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
    evidence_json,
    memory_view,
    store_stamp,
)
from affidavit.recall.wire import StoreStatus
from affidavit.vault import Change, NewItem, VaultItem, check_structure, new_id

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from affidavit.recall.wire import (
        ExpiredJSON,
        ForgottenJSON,
        NamespaceJSON,
        NamespacesJSON,
        UnlinkedJSON,
    )
    from affidavit.vault import Vault

logger = logging.getLogger(__name__)

MAX_CHARS_SETTING = "max_memory_chars"
#: Off: expired memories are hidden from reads but forgotten only by ``expire``.
AUTO_EXPIRE_SETTING = "auto_expire"
#: On: claims a person never reviews (the user's own plain statements in a captured session,
#: a proxy's verified state changes) are stored directly; off (default): they wait in review.
AUTO_STORE_SETTING = "auto_store"
#: The model the vault's vectors came from (:func:`model_identity`), recorded at first store.
MODEL_SETTING = "embedding_model"
#: Rows embedded per step of an import: a progress tick, and a bounded peak of windows.
EMBED_CHUNK = 256
_AUTO: Any = object()


def model_identity() -> dict[str, str]:
    """The model this installation embeds with: its id and the pinned sha256 of its file."""
    return {"id": MODEL_ID, "sha256": MODEL_FILE.sha256}


def _outcome(
    item_id: str | None, status: StoreStatus, namespace: str, superseded: Sequence[str] = ()
) -> StoreOutcome:
    return {"id": item_id, "status": status, "namespace": namespace, "superseded": [*superseded]}


class Memory:
    """Recall, lifecycle and graph over one open vault (thread-safe)."""

    def __init__(
        self,
        vault: Vault,
        *,
        embedder: Embedder | None = _AUTO,
        caller: str = DEFAULT_CALLER,
    ) -> None:
        self.vault = vault
        self.access = Access(vault, caller)
        self.caller = self.access.caller
        self.namespace = default_namespace(self.caller)
        self._embedder = None if embedder is _AUTO else embedder
        self._embedder_ready = embedder is not _AUTO
        self._index: RecallIndex | None = None
        self._image_unused = False
        self._lock = threading.RLock()
        self._changes: deque[Change] = deque()
        self._expiring: dict[str, str] = {}
        # memories with evidence, and their items: what proven_only judges
        self._evidenced: dict[str, tuple[Evidence, ...]] = {}
        for it in vault.items(MEMORY):
            self._note(it)
        self.packs = PackShelf(vault)
        self.judge = EvidenceJudge()
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
        """The RAM index on first need: restored from the image in the snapshot the vault
        opened from, else built from the vault's sealed vectors (never re-embedding)."""
        with self._lock:
            if self._index is None:
                image = self.vault.take_section(index_build.SECTION)
                if self._catch_up_model():
                    image = None  # the snapshot's image holds the old model's vectors
                items = list(self.vault.items(MEMORY))
                vectors = self.embedder is not None
                restored = index_build.restore(image, items, vectors) if image else None
                self._index = restored or index_build.build(items, vectors)
                # the vault opened from a snapshot whose image was of no use (another
                # release's layout): the next warm-up seals a new one, however current
                self._image_unused = restored is None and self.vault.snapshot_lag is not None
                trim_heap()
            return self._index

    def _catch_up_model(self) -> bool:
        """Re-embed every memory when the vault's vectors came from a model an earlier release
        used (an upgrade changed it); whether it did. Vectors of two models do not compare,
        so searching them with this model's questions would rank by noise; this runs once,
        before the first index, with a progress line on stderr.

        A model this release does not know is a newer one (a team vault shared with a
        member who upgraded first): re-embedding back to ours would make the two releases
        undo each other at every open, so it is left alone and said once.
        """
        recorded = self.vault.get_setting(MODEL_SETTING)
        if self.embedder is None or recorded is None or recorded == model_identity():
            return False
        identity = recorded if isinstance(recorded, dict) else {}
        name = identity.get("id", "?")
        if identity.get("sha256") not in EARLIER_MODELS:
            logger.warning(
                "this vault's vectors come from %s, a model this release does not know (a "
                "newer affidavit?); upgrade affidavit, or run `affidavit memory reindex` to "
                "embed every memory with %s",
                name,
                MODEL_ID,
            )
            return False
        total = sum(1 for _ in self.vault.items(MEMORY))
        logger.warning(
            "the embedding model changed (%s -> %s): re-embedding %d memories, once",
            name,
            MODEL_ID,
            total,
        )
        self.reembed_all(progress=_logged_progress)
        return True

    def reembed_all(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory again with this model, in one transaction (a crash leaves the
        old vectors and the old model's name, so the next open starts over), and record the
        model; how many were embedded. The RAM index is the caller's to rebuild."""
        embedder = self.embedder
        if embedder is None:
            raise InputError("re-embedding needs the embedding model, and none is loaded here")
        items = list(self.vault.items(MEMORY))
        vectors = window_bytes(embedder, [str(it.data.get("text", "")) for it in items], progress)
        self.vault.update_many(
            {it.id: (dict(it.data), vec) for it, vec in zip(items, vectors, strict=True)}
        )
        self.vault.set_setting(MODEL_SETTING, model_identity())
        return len(items)

    def save_snapshot(self, *, lag: int = 0) -> bool:
        """Seal the vault's RAM view with this index's image into the vault's snapshot, so
        the next process opens and indexes the vault from it (ADR 0210), when the snapshot
        is more than ``lag`` writes behind or missing, or its image of the index was of no use
        (another release's layout); whether one was written. The image
        is taken under the lock, the sealing runs outside it (a search need not wait)."""
        with self._lock:
            self._sync()
            index = self.index
            behind = self.vault.snapshot_lag
            renew = self._image_unused
            if behind is not None and behind <= lag and not renew:
                return False
            section = index_build.image(index, self.embedder is not None)
            self._image_unused = False
        return self.vault.save_snapshot({index_build.SECTION: section}, renew=renew)

    def rebuild_index(self) -> int:
        """Drop the RAM index and build it again from the vault (after a re-embed); its size."""
        with self._lock:
            self._index = None
            self.packs = PackShelf(self.vault)
            return len(self.index)

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
            self._evidenced.pop(change.id, None)
            item = change.item
            live = change.op == "put" and item is not None and item.kind == MEMORY
            if live and item is not None:
                self._note(item)
            if self._index is None:
                continue  # built later from the vault, which already holds this change
            heirs = set(self._index.inherited.heirs(change.id))
            self._index.remove(change.id)
            if live and item is not None and searchable(item):
                entry = entry_of(item)
                self._index.add(entry, self._windows_of(item))
                if item.data.get("supersedes"):
                    heirs.add(entry.slot)
            self._reinherit(self._index, heirs)

    def _reinherit(self, index: RecallIndex, slots: set[int]) -> None:
        """Give these corrections what they inherit from the records as they are now (a
        memory one corrected was changed, forgotten or shredded: its meaning goes with it)."""
        if self.embedder is None or not slots:
            return
        entries = [index.entry_at(slot) for slot in slots]
        items = [self._record(e.id) for e in entries if e is not None]
        index_build.inherit(index, [it for it in items if it is not None], self._record)

    def _record(self, item_id: str) -> VaultItem | None:
        try:
            return self.vault.get(item_id)
        except NotFoundError:
            return None

    def _note(self, item: VaultItem) -> None:
        """Keep what reads filter on without opening every record: expiry days, evidence."""
        expires = item.field("expires")  # no decode of a record that holds neither
        if expires:
            self._expiring[item.id] = str(expires)
        evidence = item.field("evidence")
        if evidence:
            self._evidenced[item.id] = parse_evidence(evidence)

    def _proven(self) -> frozenset[str]:
        """The memories whose evidence holds now: each set of items judged once per call,
        each log looked at once (receipts are kept per log state, citations by the synced
        shelf)."""
        self.packs.sync(self.index)
        holds: dict[tuple[Evidence, ...], bool] = {}
        states: dict[str, FileState | None] = {}
        trusted = trusted_logs(self.vault)
        proven = []
        for item_id, items in self._evidenced.items():
            verdict = holds.get(items)
            if verdict is None:
                status = self.judge.judge(items, self.packs, trusted, states).status
                verdict = holds[items] = status is EvidenceStatus.PROVEN
            if verdict:
                proven.append(item_id)
        return frozenset(proven)

    def _sync(self) -> None:
        """Pick up other processes' writes (and our own queued changes) before a read."""
        self.vault.refresh()
        self._drain()

    def _hidden(self) -> frozenset[str]:
        today = lifecycle.today_utc().isoformat()
        return frozenset(i for i, day in self._expiring.items() if day < today)

    @property
    def max_chars(self) -> int:
        """The one-claim limit in characters (setting ``max_memory_chars``): what importers
        check each claim against before they store a batch."""
        return self._max_chars()

    def _max_chars(self) -> int:
        value = self.vault.get_setting(MAX_CHARS_SETTING, claims.DEFAULT_MAX_CHARS)
        return int(value) if isinstance(value, int) and value > 0 else claims.DEFAULT_MAX_CHARS

    def _view(self, item: VaultItem) -> MemoryView:
        view = memory_view(item.id, item.namespace, item.saved_at, item.data)
        sealed = item.data.get("evidence")
        if sealed:
            items = parse_evidence(sealed)
            if any(isinstance(it, PackCitation) for it in items):
                self.packs.sync(self.index)  # stat calls: a pack changed since is seen now
            check = self.judge.judge(items, self.packs, trusted_logs(self.vault))
            view["evidence"] = evidence_json(sealed, check)
        return view

    # -- storing ---------------------------------------------------------------------------

    def store(self, claim: claims.Claim) -> StoreOutcome:
        """Store one memory (see the module docstring for the outcome)."""
        return self.store_many([claim])[0]

    def store_many(
        self,
        batch: Sequence[claims.Claim],
        *,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> list[StoreOutcome]:
        """Store a batch: all checked first, new memories sealed in one transaction.

        A claim without a namespace goes to the caller's own. Errors about one claim of a
        batch start with ``item N: ``. ``progress(phase, done, total)`` reports the
        ``"embedding"``, ``"deciding"`` and ``"sealing"`` phases of a long batch (an import).
        """
        if not batch:
            raise InputError("a batch to store needs at least one memory")
        with self._lock, self.index.vector.foreground():
            self._sync()
            limit = self.max_chars
            proposed: list[claims.Claim] = []
            for i, claim in enumerate(batch):
                with claims.located(f"item {i}: " if len(batch) > 1 else ""):
                    claims.check_length(claim.text, limit)
                if claim.namespace is None:
                    claim = replace(claim, namespace=self.namespace)
                proposed.append(claim)
            self._check_evidence(proposed)
            replaced: dict[str, int] = {}  # superseded id -> the item that replaces it
            for i, claim in enumerate(proposed):
                where = f"item {i}: " if len(proposed) > 1 else ""
                self._require_write(self._namespace(claim), where)
                self._check_supersedes(claim, where)
                for old in claim.supersedes or ():
                    if replaced.setdefault(old, i) != i:
                        raise InputError(
                            f"{where}{old} is superseded by item {replaced[old]} already",
                            "let one memory of the batch replace it",
                        )
            worded = worded_index(self.index) if len(proposed) >= WORDED_FROM else {}
            known = [worded_duplicate(claim, worded) for claim in proposed]
            todo = [i for i, same in enumerate(known) if same is None]  # only these are embedded
            embedded = self._embed([proposed[i].text for i in todo], progress)
            vectors = dict(zip(todo, embedded, strict=True)) if embedded is not None else None
            results: list[StoreOutcome | None] = [None] * len(proposed)
            new: list[tuple[int, NewItem]] = []
            now = utc_iso(timespec="seconds")
            repeats: dict[int, int] = {}  # item -> earlier new item of the batch it repeats
            kept = BatchRepeats(vectors)
            for i, claim in enumerate(proposed):
                if progress is not None and (i + 1) % EMBED_CHUNK == 0:
                    progress("deciding", i + 1, len(proposed))
                same = known[i]
                if same is not None:
                    results[i] = _outcome(same, StoreStatus.DUPLICATE, self._namespace(claim))
                    continue
                qv = vectors[i][0] if vectors is not None else None
                decided = self._decide(claim, qv, now)
                if decided is not None:
                    results[i] = decided
                    continue
                earlier = kept.find(claim, i)
                if earlier is not None:
                    repeats[i] = earlier
                    continue
                kept.add(claim, i)
                vector = vector_to_bytes(vectors[i]) if vectors is not None else None
                # A correction knows its id before the write, so the record it replaces is
                # marked in the same transaction (a crash never leaves both live).
                rid = new_id() if claim.supersedes else None
                new.append(
                    (i, NewItem(claim.data(now), MEMORY, self._namespace(claim), vector, id=rid))
                )
            amend = {
                old: {"superseded_by": item.id}
                for i, item in new
                for old in proposed[i].supersedes or ()
            }
            if vectors is not None and new and self.vault.get_setting(MODEL_SETTING) is None:
                self.vault.set_setting(MODEL_SETTING, model_identity())  # see ``reindex``
            sealing = (lambda done, total: progress("sealing", done, total)) if progress else None
            stored = (
                self.vault.put_many([it for _, it in new], amend=amend, progress=sealing)
                if new
                else []
            )
            for (i, _), item in zip(new, stored, strict=True):
                superseded = proposed[i].supersedes or ()
                results[i] = _outcome(item.id, StoreStatus.STORED, item.namespace, superseded)
            for i, j in repeats.items():
                first = results[j]
                assert first is not None
                results[i] = _outcome(first["id"], StoreStatus.DUPLICATE, first["namespace"])
            self._drain()
            self._sweep()
            self._drain()
            done = [r for r in results if r is not None]
            for outcome in done:
                if outcome["id"] is not None:
                    item = self.vault.get(outcome["id"])
                    view = memory_view(item.id, item.namespace, item.saved_at, item.data)
                    outcome["stamp"] = store_stamp(view)
            return done

    def _embed(
        self, texts: list[str], progress: Callable[[str, int, int], None] | None = None
    ) -> list[npt.NDArray[np.float32]] | None:
        """Each text's windows (:func:`embed_texts`); ``None`` without a model."""
        if self.embedder is None:
            return None
        tick = (lambda done, total: progress("embedding", done, total)) if progress else None
        return embed_texts(self.embedder, texts, tick)

    def _check_evidence(self, proposed: Sequence[claims.Claim]) -> None:
        """Refuse a batch in which one claim's evidence does not check (nothing is stored
        with a false claim of proof)."""
        if not any(claim.evidence for claim in proposed):
            return
        self.packs.sync(self.index)
        trusted = trusted_logs(self.vault)
        for i, claim in enumerate(proposed):
            where = f"item {i}: " if len(proposed) > 1 else ""
            self.judge.require(claim.evidence, self.packs, trusted, where)

    def _namespace(self, claim: claims.Claim | graph.Link) -> str:
        """Where ``claim`` (or a link) is written: the namespace it names, else the caller's."""
        return claim.namespace or self.namespace

    def _require_write(self, namespace: str, where: str) -> None:
        try:
            refuse_write(namespace)
            self.access.require_write(namespace)
        except PolicyError as exc:
            raise PolicyError(where + exc.message, exc.hint) from None

    def _check_supersedes(self, claim: claims.Claim, where: str) -> None:
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

    def _decide(self, claim: claims.Claim, qv: Any, now: str) -> StoreOutcome | None:
        """Duplicate, re-affirmation or opinion conflict (:mod:`.decide`); ``None``: store it."""
        decision = decide(
            claim, nearest(self.index, self.vault.get, claim, qv), semantic=qv is not None
        )
        if decision is None:
            return None
        first = decision.items[0]
        if decision.status is StoreStatus.REAFFIRMED:
            self.vault.update(first.id, {**first.data, "affirmed": now})
        if decision.status is not StoreStatus.CONFLICT:
            return _outcome(first.id, decision.status, self._namespace(claim))
        return {
            "id": None,
            "status": StoreStatus.CONFLICT,
            "namespace": self._namespace(claim),
            "conflicts": [self._view(rival) for rival in decision.items],
            "hint": "resend with supersedes=[ids] to replace them, or supersedes=[] to keep both",
            "superseded": [],
        }

    def import_rows(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
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
                    "kind": MemoryKind.FACT,
                    "imported": True,
                    **structures[i],
                }
                if row.get("date"):
                    data["discovered"] = str(row["date"])[:10]
                vector = vectors[i] if vectors is not None else None
                where = namespace or self.namespace
                items.append(NewItem(data, MEMORY, where, vector, id=row.get("id")))
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
        proven_only: bool = False,
    ) -> SearchPage:
        """Ranked memories for a question over ``namespaces`` (default: every one the caller
        may read); nothing when the vault knows nothing about it. ``proven_only``: only
        memories whose evidence holds now (a filter: ranking is the same, ADR 0221)."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("search needs a question", "e.g. affidavit search 'deploy steps'")
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise InputError("top_k must be a positive whole number (or absent for adaptive)")
        scope = self.access.scope(namespaces or None, self._known_namespaces)
        if scope is not None and not scope:
            return {"results": [], "semantic": self.embedder is not None, "notice": NOTICE}
        filters = Filters(
            namespaces=scope,
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
            self.packs.sync(self.index)
            if proven_only:
                filters = replace(filters, only=self._proven())
            hits = self.index.search(
                query,
                embedding,
                filters=filters,
                top_k=top_k,
                exclude=self._hidden(),
            )
            results: list[MemoryHit] = []
            for hit in hits:
                view = (
                    self.packs.view(hit.id)
                    if self.packs.holds(hit.id)
                    else self._view(self.vault.get(hit.id))
                )
                results.append(
                    {
                        **view,
                        "score": round(hit.score, 4),
                        "channels": hit.channels,
                        "parts": hit.parts,
                    }
                )
            page: SearchPage = {
                "results": results,
                "semantic": embedding is not None,
                "notice": NOTICE,
            }
            if self.packs.warnings:
                page["warnings"] = self.packs.warnings
        return page

    def get_memory(self, item_id: str) -> MemoryView:
        """One memory by id (superseded ones included); WrongKindError for a relation."""
        with self._lock:
            self._sync()
            if is_pack_namespace(item_id):
                self.packs.sync(self.index)
                return self.packs.view(item_id)
            item = self._readable(item_id, MEMORY)
            if item.id in self._hidden():
                raise NotFoundError(f"memory {item_id} expired on {item.data.get('expires')}")
            return self._view(item)

    def recheck_evidence(self, item_id: str) -> MemoryView:
        """``get_memory`` with its evidence judged afresh (the console's "re-check now"): the
        verdicts kept for its receipts are dropped and the packs it cites are verified again
        from their files, as if this process had just started."""
        with self._lock:
            self._sync()
            items = parse_evidence(self._readable(item_id, MEMORY).data.get("evidence"))
            self.judge.forget(items)
            cited = {item.pack for item in items if isinstance(item, PackCitation)}
            self.packs.reverify(cited, self.index)
            return self.get_memory(item_id)

    def evidence_findings(self, item_id: str) -> tuple[Finding, ...]:
        """Each evidence item of a memory judged now, with what shows it: the cited record's
        text or the recorded call and its log's chain (:mod:`.evidence_findings`)."""
        with self._lock:
            self._sync()
            items = parse_evidence(self._readable(item_id, MEMORY).data.get("evidence"))
            if any(isinstance(item, PackCitation) for item in items):
                self.packs.sync(self.index)
            return findings(items, self.packs, trusted_logs(self.vault))

    def history(self, item_id: str) -> MemoryHistory:
        """A memory with what it replaced and what replaced it, the live opinions it conflicts
        with, and its writes in the audit chain (:mod:`.history`)."""
        with self._lock:
            self._sync()
            item = self._readable(item_id, MEMORY)

            def read(other: str) -> VaultItem:
                found = self.access.readable(other)
                if found.kind != MEMORY:
                    raise WrongKindError(other, found.kind, MEMORY)
                return found

            before = history.chain(item, history.older, read)
            after = history.chain(item, history.newer, read)
            newer = [it.id for it in after[:1]]
            windows = self._windows_of(item)
            first = windows[0] if windows is not None and len(windows) else None
            rivals = history.conflicts(item, self.index, read, first)
            writes = history.events(item, self.vault.audit_log(ids={item.id, *newer}))
            return {
                "memory": self._view(item),
                "supersedes": [self._view(it) for it in before],
                "superseded_by": [self._view(it) for it in after],
                "conflicts": [self._view(it) for it in rivals],
                "events": writes,
            }

    def get_relation(self, item_id: str) -> RelationView:
        """One relation by id; WrongKindError for a memory."""
        with self._lock:
            self._sync()
            return graph.edge_view(self._readable(item_id, graph.RELATION))

    def _readable(self, item_id: str, kind: str) -> VaultItem:
        """The live record ``item_id`` of ``kind`` that the caller may read."""
        item = self.access.readable(item_id)
        if item.kind != kind:
            raise WrongKindError(item_id, item.kind, kind)
        return item

    def recent(self, limit: int = 10, namespace: str | None = None) -> list[MemoryView]:
        """The newest live memories the caller may read (or of ``namespace``), newest first
        (superseded and expired left out)."""
        if limit < 1:
            raise InputError("limit must be at least 1")
        with self._lock:
            self._sync()
            hidden = self._hidden()
            scope = self.access.scope(
                None if namespace is None else [namespace], self._known_namespaces
            )
            items = [
                it
                for it in self.vault.items(MEMORY, namespace)
                if searchable(it) and it.id not in hidden and _within(it, scope)
            ]
            items.sort(key=lambda it: (it.saved_at, it.seq), reverse=True)
            return [self._view(it) for it in items[:limit]]

    # -- forgetting and expiry ---------------------------------------------------------------

    def forget(self, item_id: str, *, shred: bool = False) -> ForgottenJSON:
        """Forget a record the caller may write (``shred``: destroy its key and ciphertext).

        Shredding a record that is already forgotten needs write access everywhere: its
        namespace is sealed away with its content.
        """
        with self._lock:
            self._sync()
            refuse_write(item_id)
            try:
                self.access.writable(item_id)
            except NotFoundError:
                if not (shred and self.access.writes_everywhere()):
                    raise
            self.vault.forget(item_id, shred=shred)
            return {"forgotten": True, "id": item_id, "shredded": shred}

    def _sweep(self, *, automatic: bool = True) -> list[str]:
        """Forget expired memories; after a write only while the setting ``auto_expire`` is on."""
        if automatic and self.vault.get_setting(AUTO_EXPIRE_SETTING, True) is False:
            return []
        gone = sorted(self._hidden())
        for item_id in gone:
            self.vault.forget(item_id)
        return gone

    def expire(self) -> ExpiredJSON:
        """Forget every memory whose expiry day has passed; the ids that went."""
        with self._lock:
            self._sync()
            return {"expired": self._sweep(automatic=False)}

    # -- graph ----------------------------------------------------------------------------------

    def link(self, link: graph.Link) -> LinkOutcome:
        """Record subject -predicate-> object (idempotent: the same edge returns its id).

        ``link.src_id`` names the memory the edge came from: a live memory the caller may
        read. A link that names no namespace goes to the caller's own.
        """
        namespace = self._namespace(link)
        data = link.data()
        with self._lock:
            self._sync()
            self.access.require_write(namespace)
            if link.src_id is not None:
                self.get_memory(link.src_id)
            existing = graph.same_edge(self.vault.items(graph.RELATION), namespace, data)
            if existing is not None:
                return {**graph.edge_view(existing), "created": False}
            item = self.vault.put(NewItem(data, graph.RELATION, namespace))
            self._sweep()
            return {**graph.edge_view(item), "created": True}

    def relations(self, query: graph.EdgeQuery) -> RelationPage:
        """The edges the caller may read that match ``query``, newest first, at most its
        limit (``truncated`` and ``total`` say how many matched)."""
        with self._lock:
            self._sync()
            only = None if query.namespace is None else [query.namespace]
            scope = self.access.scope(only, self._known_namespaces)
            edges = (it for it in self.vault.items(graph.RELATION) if _within(it, scope))
            return graph.query(edges, query)

    def unlink(self, item_id: str) -> UnlinkedJSON:
        """Delete one edge by id."""
        with self._lock:
            self._sync()
            graph.require_edge(self.access.writable(item_id))
            self.vault.forget(item_id)
            return {"removed": True, "relation_id": item_id, "id": item_id}

    # -- namespaces and status ------------------------------------------------------------------

    def _known_namespaces(self) -> set[str]:
        """Every namespace that holds a record, an installed pack, and the caller's own."""
        found = {it.namespace for it in self.vault.items(MEMORY)}
        found |= {it.namespace for it in self.vault.items(graph.RELATION)}
        found |= {pack.namespace for pack in installed(self.vault)}
        return found | {self.namespace}

    def namespaces(self) -> NamespacesJSON:
        """The namespaces the caller may read: live memories and relations in each, its
        access, and its own namespace even while empty."""
        with self._lock:
            self._sync()
            grants = self.access.grants()
            counts: dict[str, list[int]] = {self.namespace: [0, 0]}
            for slot, kind in enumerate((MEMORY, graph.RELATION)):
                for item in self.vault.items(kind):
                    if kind == MEMORY and not searchable(item):
                        continue
                    counts.setdefault(item.namespace, [0, 0])[slot] += 1
            rows: list[NamespaceJSON] = []
            for name, (memories, relations) in sorted(counts.items()):
                mode = grants.mode(self.caller, name)
                if mode is not Mode.NONE:
                    access: Literal["rw", "ro"] = "rw" if mode is Mode.RW else "ro"
                    rows.append(
                        {
                            "name": name,
                            "memories": memories,
                            "relations": relations,
                            "access": access,
                        }
                    )
            return {"caller": self.caller, "default_namespace": self.namespace, "namespaces": rows}

    def status(self) -> RecallStatus:
        """What recall can do right now for this caller: the live memories it may read, the
        model, the index, the installed packs and the audit chain's head."""
        with self._lock:
            self._sync()
            scope = self.access.scope(None, self._known_namespaces)
            memories = sum(
                1 for it in self.vault.items(MEMORY) if searchable(it) and _within(it, scope)
            )
            self.packs.sync(self.index)
            out: RecallStatus = {
                "caller": self.caller,
                "default_namespace": self.namespace,
                "memories": memories,
                "semantic": self.embedder is not None,
                "model": None,
                "indexed": len(self.index),
                "vector_index": self.index.vector.mode,
                "packs": self.packs.status(),
                "audit": self.vault.status()["audit"],
            }
            if self.embedder is not None:
                out["model"] = describe().get("model")
            else:
                out["reason"] = "semantic recall is off: no embedding model loaded"
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


def _logged_progress(done: int, total: int) -> None:
    """A progress line at every tenth of a re-embed (stderr through logging: the memory
    server's host log, or the terminal)."""
    step = max(1, total // 10)
    if done == total or done // step != (done - EMBED_CHUNK) // step:
        logger.warning("re-embedding: %d of %d memories", done, total)


def window_bytes(
    embedder: Embedder, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> list[bytes]:
    """Each text's window vectors as sealed bytes (:func:`embed_texts`)."""
    return [vector_to_bytes(w) for w in embed_texts(embedder, texts, progress)]


def embed_texts(
    embedder: Embedder, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> list[npt.NDArray[np.float32]]:
    """Each text's window vectors, :data:`EMBED_CHUNK` distinct texts per step (a progress
    tick each, counted in texts, and a bounded peak of float32 windows). A text that occurs
    twice (a re-sent note, a chat's "thanks") is embedded once: its vector is the same."""
    distinct = list(dict.fromkeys(texts))
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    for start in range(0, len(distinct), EMBED_CHUNK):
        chunk = distinct[start : start + EMBED_CHUNK]
        vectors.update(zip(chunk, embedder.embed_windows(chunk), strict=True))
        if progress is not None:
            progress(len(texts) * len(vectors) // len(distinct), len(texts))
    return [vectors[t] for t in texts]


def _within(item: VaultItem, scope: frozenset[str] | None) -> bool:
    """Whether ``item`` lies in the namespaces a read covers (None: all of them)."""
    return scope is None or item.namespace in scope


def _bound(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be a date (YYYY-MM-DD)")
    return lifecycle.parse_date(value, name) if len(value) <= 10 else value


def _kind(value: str | None) -> str | None:
    if value is not None and value not in tuple(MemoryKind):
        raise InputError(f"kind must be one of {', '.join(MemoryKind)}, not {value!r}")
    return value
