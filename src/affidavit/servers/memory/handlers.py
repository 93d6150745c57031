"""What each memory tool does, without MCP plumbing: the vault's lock state, and translation.

One :class:`MemoryTools` serves one caller. The vault is opened by a background warm-up or by
the first call that needs it, whichever comes first (so a server starts, and answers
``memory_status``, even while the vault is locked), and again after a lock, as soon as the
user unlocks.

A handler only translates: its checked arguments (a type of :mod:`.shapes`) into recall's
typed input (``Claim``, ``Link``, ``EdgeQuery``), and recall's answer into its one wire shape
(:mod:`affidavit.recall.views`), the shape the CLI's ``--json`` prints for the same value.
Grants are applied inside recall (read from the vault's sealed settings on every call, so
``affidavit grant`` takes effect at the next call of a running server). Recall and its
serializers are loaded on first use, not when the server starts.
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
from typing import TYPE_CHECKING, TypeVar, cast

from affidavit import access as acl
from affidavit import recall
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
from affidavit.servers.toolkit import HiddenToolError

if TYPE_CHECKING:
    from affidavit.recall import Memory, wire
    from affidavit.servers.memory.shapes import (
        ForgetArguments,
        LinkArguments,
        LockJSON,
        NoArguments,
        RecentArguments,
        RecordArguments,
        RelationsArguments,
        SearchArguments,
        StoreArguments,
        StoreManyArguments,
        UnlinkArguments,
        UnlockArguments,
        UnlockJSON,
    )
    from affidavit.vault import Vault

_BATCH_INDEX = re.compile(r"^item (\d+): ")
T = TypeVar("T")
LOCKED_HINT = "ask the user to run `affidavit unlock` on this machine, then call the tool again"
#: Writes the vault's sealed snapshot may lag behind before a warm-up seals a new one (ADR
#: 0210): a shorter tail is decrypted and indexed at the next start in a few milliseconds.
SNAPSHOT_LAG = 256


def _locked(detail: str = "the memory vault is locked") -> LockedError:
    return LockedError(detail, LOCKED_HINT)


class MemoryTools:
    """The memory tools for one caller over one vault directory."""

    def __init__(self, caller: str, vault_path: Path | None = None) -> None:
        self.caller = acl.check_name(caller, "caller")
        self.vault_path = vault_path
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

    # -- tools: each translates its arguments into recall's typed input, and recall's answer
    # -- into its one wire shape (recall applies the caller's grants) --------------------------

    def memory_store(self, args: StoreArguments) -> wire.StoreJSON:
        """Store one claim in the caller's (or a named) namespace."""
        claim = recall.Claim.from_json(args)
        return self._call(lambda memory: recall.views.store_json(memory.store(claim)))

    def memory_store_many(self, args: StoreManyArguments) -> wire.StoreManyJSON:
        """Store a batch: the shared fields filled in, then all or nothing."""
        shared = {k: v for k, v in args.items() if k in ("source", "namespace", "discovered")}
        claims = []
        for index, fact in enumerate(args["facts"]):
            if "source" not in fact and "source" not in shared:
                raise InputError(
                    f"facts[{index}] has no source",
                    "give it a 'source', or pass one 'source' for the whole batch",
                )
            claims.append(recall.Claim.from_json({**shared, **fact}, f"facts[{index}]: "))

        def run(memory: Memory) -> wire.StoreManyJSON:
            try:
                return recall.views.store_many_json(memory.store_many(claims))
            except (InputError, PolicyError) as exc:  # name the entry the way the caller sent it
                message = _BATCH_INDEX.sub(r"facts[\1]: ", exc.message)
                raise type(exc)(message, exc.hint) from None

        return self._call(run)

    def memory_search(self, args: SearchArguments) -> wire.SearchJSON:
        """Ranked recall over the namespaces this caller may read (or the one named)."""
        namespace = args.get("namespace")

        def run(memory: Memory) -> wire.SearchJSON:
            found = memory.search(
                args["query"],
                namespaces=None if namespace is None else [namespace],
                tags=args.get("tags"),
                kind=args.get("kind"),
                saved_since=_either(args, "saved_since", "since"),
                saved_until=_either(args, "saved_until", "until"),
                discovered_since=args.get("discovered_since"),
                discovered_until=args.get("discovered_until"),
                top_k=args.get("top_k"),
                proven_only=args.get("proven_only", False),
            )
            return recall.views.search_json(found)

        return self._call(run)

    def memory_get(self, args: RecordArguments) -> wire.MemoryGotJSON:
        """One memory by id."""
        item_id = _record_id(args)

        def run(memory: Memory) -> wire.MemoryGotJSON:
            try:
                found = memory.get_memory(item_id)
            except recall.WrongKindError as exc:
                # a captured candidate is a record too, waiting for review: no tool reads it
                hint = "use memory_relations to read relations" if exc.kind == "relation" else None
                raise NotFoundError(exc.message, hint) from None
            return recall.views.memory_got_json(found)

        return self._call(run)

    def memory_recent(self, args: RecentArguments) -> wire.MemoriesJSON:
        """The newest memories, across readable namespaces (or the one named): newest first,
        or oldest first when asked (``order``) or when the call is Compartment's (it names
        ``include_seeded``, which only Compartment's callers send; ADR 0227)."""
        limit, namespace = args.get("limit", 10), args.get("namespace")
        order = args.get("order", "oldest" if "include_seeded" in args else "newest")

        def run(memory: Memory) -> wire.MemoriesJSON:
            views = memory.recent(limit, namespace)
            return recall.views.memories_json(views[::-1] if order == "oldest" else views)

        return self._call(run)

    def memory_forget(self, args: ForgetArguments) -> wire.ForgottenJSON:
        """Forget (or shred) one memory the caller may write."""
        item_id, shred = _record_id(args), args.get("shred", False)

        def run(memory: Memory) -> wire.ForgottenJSON:
            try:
                memory.get_memory(item_id)
            except recall.WrongKindError as exc:
                raise NotFoundError(
                    f"{item_id} is a {exc.kind}", "use memory_unlink to remove relations"
                ) from None
            return memory.forget(item_id, shred=shred)

        return self._call(run)

    def memory_link(self, args: LinkArguments) -> wire.LinkJSON:
        """Record one relation in the caller's (or a named) namespace."""
        link = recall.Link(
            args["subject"],
            args["predicate"],
            args["object"],
            src_id=args.get("src_id"),
            valid_from=_day(args.get("valid_from")),
            valid_to=_day(args.get("valid_to")),
            namespace=args.get("namespace"),
        )
        return self._call(lambda memory: recall.views.link_json(memory.link(link)))

    def memory_relations(self, args: RelationsArguments) -> wire.RelationsJSON:
        """Relations by entity / subject / predicate / object / date over readable namespaces."""
        query = recall.EdgeQuery(
            entity=args.get("entity"),
            subject=args.get("subject"),
            predicate=args.get("predicate"),
            object=args.get("object"),
            as_of=_moment(args.get("as_of")),
            namespace=args.get("namespace"),
            limit=args.get("limit", 100),
        )
        return self._call(lambda memory: recall.views.relations_json(memory.relations(query)))

    def memory_unlink(self, args: UnlinkArguments) -> wire.UnlinkedJSON:
        """Remove one relation the caller may write."""
        edge_id = args["relation_id"]

        def run(memory: Memory) -> wire.UnlinkedJSON:
            try:
                memory.get_relation(edge_id)
            except recall.WrongKindError as exc:
                raise NotFoundError(exc.message, "use memory_forget to delete memories") from None
            return memory.unlink(edge_id)

        return self._call(run)

    def memory_list_namespaces(self, args: NoArguments) -> wire.NamespacesJSON:
        """Readable namespaces with counts and access."""
        return self._call(lambda memory: memory.namespaces())

    def memory_status(self, args: NoArguments) -> wire.StatusJSON:
        """State of the vault for this caller; works while locked."""
        vault = str(self._directory())
        try:
            memory = self.memory()
            status = memory.status()
        except LockedError:
            self._drop()
            return recall.views.locked_status_json(
                self.caller, vault=vault, unlock_tool_enabled=self._unlock_allowed, hint=LOCKED_HINT
            )
        self._see_unlock_setting(memory.vault)
        return recall.views.status_json(
            status, vault=vault, unlock_tool_enabled=bool(self._unlock_allowed)
        )

    def memory_lock(self, args: NoArguments) -> LockJSON:
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

    def memory_unlock(self, args: UnlockArguments) -> UnlockJSON:
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

    def memory_selftest(self, args: NoArguments) -> wire.SelftestJSON:
        """Canned recall checks on a private temporary vault."""
        return recall.run_selftest()

    def close(self) -> None:
        """Drop the vault handle and its keys (server shutdown, after any warm-up)."""
        with self.busy:
            self._drop()


def _record_id(args: RecordArguments) -> str:
    """``id``, or Compartment's ``record_id`` for it (one of the two, or both the same)."""
    given = {value for key, value in args.items() if key in ("id", "record_id")}
    if len(given) != 1:
        raise InputError(
            "give the memory's id as 'id' (or its alias 'record_id'), once",
            "pass exactly one of id / record_id",
        )
    return str(given.pop())


def _either(args: SearchArguments, name: str, alias: str) -> str | None:
    """A search bound given under its own name or Compartment's (one of the two)."""
    given = cast("Mapping[str, str | float]", args)
    if name in given and alias in given:
        raise InputError(f"give {name} or {alias}, not both", f"{alias} is an alias of {name}")
    return _moment(given.get(name, given.get(alias)))


def _moment(value: str | float | None) -> str | None:
    """A day or time as written, or a unix time (Compartment's spelling, whole or decimal) as
    an ISO time to the second: a decimal one counts from the whole second it falls in."""
    if isinstance(value, int | float):
        return utc_iso(datetime.fromtimestamp(value, UTC), timespec="seconds")[:19]
    return value


def _day(value: str | float | None) -> str | None:
    """A relation's day as written, or the UTC day of a unix time (Compartment's spelling:
    its relations are bounded by moments, affidavit's by whole days)."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).date().isoformat()
    return value


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, AffidavitError) else type(exc).__name__
