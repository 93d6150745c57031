"""What each memory tool does, without MCP plumbing: vault access, grants, lock state.

One :class:`MemoryTools` serves one caller. The vault is opened by a background warm-up or by
the first call that needs it, whichever comes first (so a server starts, and answers
``memory_status``, even while the vault is locked), and again after a lock, as soon as the
user unlocks. Grants are read from the vault's sealed
settings on every call, so ``affidavit grant`` takes effect at the next call of a running
server. Every tool result that carries memory content carries the data-not-instructions
notice.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from affidavit import access as acl
from affidavit.access import unlock_gate
from affidavit.core.clock import utc_iso
from affidavit.core.errors import (
    AffidavitError,
    AuthError,
    InputError,
    LockedError,
    NotFoundError,
    PolicyError,
)
from affidavit.recall import (
    NOTICE,
    WrongKindError,
    installed_packs,
    memories_json,
    memory_json,
    relation_json,
    search_json,
    store_json,
)
from affidavit.servers.toolkit import HiddenToolError

if TYPE_CHECKING:
    from affidavit.recall import Memory
    from affidavit.vault import Vault

_BATCH_INDEX = re.compile(r"^item (\d+): ")
T = TypeVar("T")
LOCKED_HINT = "ask the user to run `affidavit unlock` on this machine, then call the tool again"
_ALL_RELATIONS = 1_000_000
#: Writes the vault's sealed snapshot may lag behind before a warm-up seals a new one (ADR
#: 0210): a shorter tail is decrypted and indexed at the next start in a few milliseconds.
SNAPSHOT_LAG = 256


def _locked(detail: str = "the memory vault is locked") -> LockedError:
    return LockedError(detail, LOCKED_HINT)


class MemoryTools:
    """The 14 tools for one caller over one vault directory."""

    def __init__(self, caller: str, vault_path: Path | None = None) -> None:
        self.caller = acl.check_name(caller, "caller")
        self.vault_path = vault_path
        self.namespace = acl.default_namespace(self.caller)
        self._memory: Memory | None = None
        self._unlock_allowed: bool | None = None  # last seen value of the sealed setting
        self.busy = threading.Lock()  # one tool call (or the warm-up) at a time
        self._warming: threading.Thread | None = None

    def warm_up_in_background(self) -> None:
        """Open the vault, build its index and load the model now, off the serving thread
        (once; failures wait for the next call, which reports them).

        Two threads: the model (or the connection to the shared model service) loads while
        the vault decrypts; the index, which needs both, is built after, and one question is
        embedded so the first real one does not pay onnxruntime's first-run cost. Once the
        index is ready, the vault's sealed snapshot is renewed when it lags, off the serving
        path, so the next start reads it instead of decrypting every record.
        """
        if self._warming is not None:
            return

        def warm_model() -> None:
            from affidavit.recall import shared_embedder

            with contextlib.suppress(Exception):  # no model: keyword recall, status says why
                model = shared_embedder()
                if model is not None:
                    model.embed_query("warm up")

        def warm() -> None:
            with self.busy, contextlib.suppress(Exception):  # the next call reports it
                self.memory().index  # noqa: B018 - built now, on purpose
            with contextlib.suppress(Exception):  # a snapshot is only ever a cache
                if self._memory is not None:
                    self._memory.save_snapshot(lag=SNAPSHOT_LAG)

        for name, job in (("model", warm_model), ("vault", warm)):
            thread = threading.Thread(target=job, name=f"affidavit-warm-{name}", daemon=True)
            thread.start()
            self._warming = thread

    # -- the vault, opened lazily -------------------------------------------------------------

    def _open(self, passphrase: str | None = None) -> Memory:
        from affidavit.recall import Memory
        from affidavit.vault import Vault

        vault = Vault.open(self.vault_path, passphrase=passphrase)
        try:
            memory = Memory(vault, caller=self.caller)
        except BaseException:
            vault.close()
            raise
        self._see_unlock_setting(vault)
        return memory

    def _see_unlock_setting(self, vault: Vault) -> None:
        """Note the sealed memory_unlock switch, and mirror it for servers that start locked
        (a mirror that cannot be written leaves the tool hidden, the safe side)."""
        self._unlock_allowed = unlock_gate.unlock_tool_enabled(vault)
        with contextlib.suppress(OSError):
            unlock_gate.remember(vault.path, self._unlock_allowed)

    def _directory(self) -> Path:
        from affidavit.core import paths

        return self.vault_path or paths.vault_dir()

    def offers(self, tool: str) -> bool:
        """Whether ``tool`` is listed and callable now: memory_unlock only while allowed."""
        return tool != "memory_unlock" or unlock_gate.read(self._directory()).enabled

    def memory(self) -> Memory:
        """The open vault's recall facade; LockedError with the unlock advice otherwise."""
        if self._memory is not None and self._memory.vault.closed:
            self._memory = None
        if self._memory is None:
            try:
                self._memory = self._open()
            except LockedError:
                raise _locked() from None
        return self._memory

    def _call(self, fn: Callable[[Memory], T]) -> T:
        """Run ``fn`` on the open vault; a lock by another process turns into the locked error."""
        memory = self.memory()
        try:
            memory.vault.refresh()  # others' writes (and grants) before anything is decided
            return fn(memory)
        except LockedError:
            self._drop()
            raise _locked("the memory vault was locked") from None

    def _drop(self) -> None:
        if self._memory is not None:
            self._memory.vault.close()
        self._memory = None

    def _grants(self, memory: Memory) -> acl.Grants:
        return acl.Grants.load(memory.vault)

    def _namespaces(self, memory: Memory) -> set[str]:
        found = {it.namespace for it in memory.vault.items("memory")}
        found |= {it.namespace for it in memory.vault.items("relation")}
        found |= {pack.namespace for pack in installed_packs.installed(memory.vault)}
        return found | {self.namespace}

    def _readable(self, memory: Memory, namespace: str | None) -> list[str] | None:
        """The namespaces to cover: the one named, or every readable one (None: all of them).

        Only a ``none`` grant can hide a namespace, so without one the answer is "all" and
        nothing has to be listed (the common case stays O(1)).
        """
        grants = self._grants(memory)
        if namespace is not None:
            grants.require_read(self.caller, namespace)
            return [namespace]
        if not grants.hides_any(self.caller):
            return None
        return grants.readable(self.caller, self._namespaces(memory))

    # -- tools --------------------------------------------------------------------------------

    def memory_store(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Store one claim in the caller's (or a granted) namespace."""
        stored: dict[str, Any] = self.memory_store_many({"facts": [dict(args)]})["results"][0]
        return stored

    def memory_store_many(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Store a batch: defaults filled, then all-or-nothing (grants checked by ``Memory``)."""
        defaults = {k: args[k] for k in ("source", "namespace", "discovered") if k in args}
        facts = [{**defaults, **fact} for fact in args["facts"]]
        for index, fact in enumerate(facts):
            fact.setdefault("namespace", self.namespace)
            if "source" not in fact:
                raise InputError(
                    f"facts[{index}] has no source",
                    "give it a 'source', or pass one 'source' for the whole batch",
                )

        def run(memory: Memory) -> dict[str, Any]:
            try:
                results = memory.store_many(facts)
            except (InputError, PolicyError) as exc:  # name the entry the way the caller sent it
                message = _BATCH_INDEX.sub(r"facts[\1]: ", exc.message)
                raise type(exc)(message, exc.hint) from None
            outcomes = zip(results, facts, strict=True)
            return {"results": [store_json(r, f["namespace"]) for r, f in outcomes]}

        return self._call(run)

    def memory_search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Ranked recall over the namespaces this caller may read."""

        def run(memory: Memory) -> dict[str, Any]:
            namespaces = self._readable(memory, args.get("namespace"))
            if namespaces is not None and not namespaces:
                semantic = memory.embedder is not None
                return search_json({"results": [], "semantic": semantic, "notice": NOTICE})
            found = memory.search(
                args["query"],
                namespaces=namespaces,
                tags=args.get("tags"),
                kind=args.get("kind"),
                saved_since=_alias(args, "saved_since", "since"),
                saved_until=_alias(args, "saved_until", "until"),
                discovered_since=args.get("discovered_since"),
                discovered_until=args.get("discovered_until"),
                top_k=args.get("top_k"),
            )
            return search_json(found)

        return self._call(run)

    def memory_get(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """One memory by id."""

        def run(memory: Memory) -> dict[str, Any]:
            try:
                found = memory.get_memory(_record_id(args))
            except WrongKindError as exc:
                # a captured candidate is a record too, waiting for review: no tool reads it
                hint = "use memory_relations to read relations" if exc.kind == "relation" else None
                raise NotFoundError(exc.message, hint) from None
            return {"memory": memory_json(found), "notice": NOTICE}

        return self._call(run)

    def memory_recent(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Newest memories first, across readable namespaces."""
        limit = int(args.get("limit", 10))

        def run(memory: Memory) -> dict[str, Any]:
            only = args.get("namespace")
            namespaces = self._readable(memory, only)
            window = limit
            while True:  # widen the window until enough readable ones, or no more at all
                items = memory.recent(limit=window, namespace=only)
                visible = [m for m in items if namespaces is None or m["namespace"] in namespaces]
                if len(visible) >= limit or len(items) < window:
                    break
                window *= 4
            return memories_json(visible[:limit])

        return self._call(run)

    def memory_forget(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Forget (or shred) one memory the caller may write."""
        shred = bool(args.get("shred", False))

        item_id = _record_id(args)

        def run(memory: Memory) -> dict[str, Any]:
            try:
                memory.get_memory(item_id)
            except WrongKindError:
                raise NotFoundError(
                    f"{item_id} is a relation", "use memory_unlink to remove relations"
                ) from None
            done = memory.forget(item_id, shred=shred)
            return {"forgotten": True, "id": item_id, "shredded": bool(done.get("shredded"))}

        return self._call(run)

    def memory_link(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Record one relation in a namespace the caller may write."""
        namespace = args.get("namespace", self.namespace)

        def run(memory: Memory) -> dict[str, Any]:
            made = memory.link(
                args["subject"],
                args["predicate"],
                args["object"],
                src_id=args.get("src_id"),
                valid_from=args.get("valid_from"),
                valid_to=args.get("valid_to"),
                namespace=namespace,
            )
            return {"relation": relation_json(made), "created": made["created"]}

        return self._call(run)

    def memory_relations(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Relations by entity / subject / predicate / object / date over readable namespaces."""
        limit = int(args.get("limit", 100))

        def run(memory: Memory) -> dict[str, Any]:
            namespaces = self._readable(memory, args.get("namespace"))
            found = memory.relations(
                entity=args.get("entity"),
                subject=args.get("subject"),
                predicate=args.get("predicate"),
                object=args.get("object"),
                as_of=args.get("as_of"),
                namespace=args.get("namespace"),
                limit=_ALL_RELATIONS,
            )
            visible = [
                r for r in found["relations"] if namespaces is None or r["namespace"] in namespaces
            ]
            return {
                "relations": [relation_json(r) for r in visible[:limit]],
                "truncated": len(visible) > limit,
                "notice": NOTICE,
            }

        return self._call(run)

    def memory_unlink(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Remove one relation the caller may write."""

        def run(memory: Memory) -> dict[str, Any]:
            try:
                memory.get_relation(args["relation_id"])
            except WrongKindError as exc:
                raise NotFoundError(exc.message, "use memory_forget to delete memories") from None
            memory.unlink(args["relation_id"])
            return {"removed": True, "relation_id": args["relation_id"]}

        return self._call(run)

    def memory_list_namespaces(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Readable namespaces with counts and access."""

        def run(memory: Memory) -> dict[str, Any]:
            grants = self._grants(memory)
            counts: dict[str, list[int]] = {}
            for kind, slot in (("memory", 0), ("relation", 1)):
                for item in memory.vault.items(kind):
                    if kind == "memory" and item.data.get("superseded_by"):
                        continue
                    counts.setdefault(item.namespace, [0, 0])[slot] += 1
            counts.setdefault(self.namespace, [0, 0])
            rows = [
                {
                    "name": name,
                    "memories": memory_count,
                    "relations": relation_count,
                    "access": grants.mode(self.caller, name),
                }
                for name, (memory_count, relation_count) in sorted(counts.items())
                if grants.mode(self.caller, name) != "none"
            ]
            return {
                "caller": self.caller,
                "default_namespace": self.namespace,
                "namespaces": rows,
            }

        return self._call(run)

    def memory_status(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """State of the vault; works while locked."""
        from affidavit.core import paths

        base: dict[str, Any] = {
            "caller": self.caller,
            "default_namespace": self.namespace,
            "vault": str(self.vault_path or paths.vault_dir()),
        }
        try:
            memory = self.memory()
            status = memory.status()
        except LockedError:
            self._drop()
            return {
                **base,
                "locked": True,
                "memories": None,
                "semantic": None,
                "unlock_tool_enabled": self._unlock_allowed,
                "hint": LOCKED_HINT,
            }
        readable = self._readable(memory, None)
        count = sum(
            1
            for it in memory.vault.items("memory")
            if (readable is None or it.namespace in readable) and not it.data.get("superseded_by")
        )
        self._see_unlock_setting(memory.vault)
        out = {
            **base,
            "locked": False,
            "memories": count,
            "semantic": bool(status.get("semantic")),
            "unlock_tool_enabled": self._unlock_allowed,
            "model": status.get("model"),
            "index": {"indexed": status["indexed"], "vector_index": status["vector_index"]},
            "packs": [_pack_status(p) for p in status.get("packs", [])],
            "audit": dict(status["audit"]),
        }
        if not status.get("semantic"):
            out["hint"] = str(status.get("reason") or "semantic recall is off; keyword only")
        return out

    def memory_lock(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Drop keys, then end the unlock session; report, never raise, what failed.

        The passphrase variable is removed from this process's environment too, so a panic
        lock sticks: the server reopens the vault only after the user unlocks it again.
        """
        from affidavit.vault import PASSPHRASE_ENV, session

        failures: list[str] = []
        memory, self._memory = self._memory, None
        directory = self._directory()
        os.environ.pop(PASSPHRASE_ENV, None)
        if memory is not None:
            directory = memory.vault.path
            try:
                memory.vault.close()  # keys and plaintext first, whatever happens next
            except Exception as exc:
                failures.append(f"closing the vault file: {_describe(exc)}")
        try:
            session.clear(directory)
        except Exception as exc:
            failures.append(f"clearing the unlock credential: {_describe(exc)}")
        return {"locked": True, "failures": failures}

    def memory_unlock(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Unlock with a passphrase: only while the user allows this tool, and ever slower
        after wrong passphrases (see :mod:`affidavit.access.unlock_gate`)."""

        directory = self._directory()
        gate = unlock_gate.read(directory)
        if not gate.enabled:
            raise HiddenToolError("memory_unlock")
        if self._memory is not None and not self._memory.vault.closed:
            return {"locked": False}
        wait = gate.pause_left(time.time())
        if wait > 0:
            raise PolicyError(
                f"memory_unlock is paused for {math.ceil(wait)} more seconds after "
                f"{gate.failures} wrong passphrases in a row",
                "ask the user to run `affidavit unlock` on this machine",
            )
        try:
            memory = self._open(passphrase=args["passphrase"])
        except AuthError:
            unlock_gate.record(directory, ok=False)
            raise
        unlock_gate.record(directory, ok=True)
        if not self._unlock_allowed:  # the sealed switch is off: the mirror was stale
            memory.vault.close()
            raise HiddenToolError("memory_unlock")
        self._memory = memory
        return {"locked": False}

    def memory_selftest(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Canned recall checks on a private temporary vault."""
        from affidavit.recall import run_selftest

        return run_selftest()

    def close(self) -> None:
        """Drop the vault handle and its keys (server shutdown, after any warm-up)."""
        with self.busy:
            self._drop()


def _pack_status(pack: Mapping[str, Any]) -> dict[str, Any]:
    """An installed pack as memory_status shows it (no trust file paths: they are local)."""
    keys = ("name", "namespace", "signature", "signer", "sequence", "records", "in_recall")
    out = {k: pack.get(k) for k in keys}
    if pack.get("warning"):
        out["warning"] = pack["warning"]
    return out


def _record_id(args: Mapping[str, Any]) -> str:
    """``id``, or Compartment's ``record_id`` for it (one of the two, or both the same)."""
    given = {args[k] for k in ("id", "record_id") if k in args}
    if len(given) != 1:
        raise InputError(
            "give the memory's id as 'id' (or its alias 'record_id'), once",
            "pass exactly one of id / record_id",
        )
    return str(given.pop())


def _alias(args: Mapping[str, Any], name: str, alias: str) -> str | None:
    """A search bound given under its own name or Compartment's (a unix time becomes ISO)."""
    if name in args and alias in args:
        raise InputError(f"give {name} or {alias}, not both", f"{alias} is an alias of {name}")
    value = args.get(name, args.get(alias))
    if isinstance(value, int):
        return utc_iso(datetime.fromtimestamp(value, UTC), timespec="seconds")[:19]
    return None if value is None else str(value)


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, AffidavitError) else type(exc).__name__
