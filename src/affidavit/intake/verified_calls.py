"""Verified tool calls become memories: what ``affidavit proxy run --remember NAMESPACE`` does.

The proxy judges each call; a VERIFIED one that changed something durable (a commit, a
branch, a file, a CI run that passed) arrives here as one line of plain words and the audit
entry that proves it. With the vault's ``auto_store`` setting off (the default) it waits in
``affidavit review`` as a candidate that keeps its receipt and the namespace it is meant for;
with ``auto_store`` on it is stored in that namespace at once, with the receipt as its
evidence, through the ordinary store path (its duplicate rule, and the receipt checked).

When it opens the vault it registers the proxy's own audit log as one whose receipts the vault
trusts (:mod:`affidavit.recall.receipt_logs`, ADR 0224): it holds the vault key, so it may.

The proxy's job is forwarding: this runs on its own thread, after the call's reply went out,
and nothing here can fail the proxy. The vault is opened the way every command opens it (an
unlock session, or ``AFFIDAVIT_PASSPHRASE``), never by asking: the proxy's stdin is the MCP
stream. A locked vault is said once on stderr and the calls made meanwhile are not kept.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from affidavit.core.errors import AffidavitError, LockedError
from affidavit.intake.capture import propose

if TYPE_CHECKING:
    from affidavit.recall import Memory, ToolReceipt

VERIFIED_CALL = "verified-call"
"""The tag (and review category) of a memory that a verified call proposed."""
CLOSE_WAIT = 30.0
"""Seconds the proxy waits at exit for the calls still queued to be remembered."""


@dataclass(frozen=True)
class CallClaim:
    """One verified change to remember: its words, who vouched for it, and its receipt."""

    text: str
    source: str
    receipt: ToolReceipt


def remember_call(memory: Memory, namespace: str, claim: CallClaim) -> str:
    """Store ``claim`` in ``namespace`` (auto_store on) or queue it for review (off); what
    happened: the store's status (``stored``, ``duplicate``, ...), ``waiting`` or ``known``
    (already waiting or remembered)."""
    from affidavit.recall import AUTO_STORE_SETTING, Claim

    if memory.vault.get_setting(AUTO_STORE_SETTING, False) is True:
        outcome = memory.store(
            Claim(
                claim.text,
                claim.source,
                namespace=namespace,
                tags=(VERIFIED_CALL,),
                evidence=(claim.receipt,),
            )
        )
        return str(outcome["status"])
    proposed = propose(
        memory,
        claim.text,
        claim.source,
        category=VERIFIED_CALL,
        namespace=namespace,
        evidence=(claim.receipt,),
    )
    return "waiting" if proposed else "known"


class CallMemories:
    """Remembers verified calls on one background thread; :meth:`put` never blocks.

    ``open_memory`` opens the vault when first needed (again after it was locked), and the
    proxy's audit ``log`` is then registered as trusted; ``say`` writes one line to the user
    (stderr). Each problem is said once, not once per call.
    """

    def __init__(
        self,
        namespace: str,
        log: Path,
        open_memory: Callable[[], Memory],
        say: Callable[[str], None],
    ) -> None:
        self.namespace = namespace
        self._log = log
        self._open = open_memory
        self._say = say
        self._said: set[str] = set()
        self._memory: Memory | None = None
        self._queue: queue.SimpleQueue[CallClaim | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="affidavit-remember", daemon=True)
        self._thread.start()

    def put(self, claim: CallClaim) -> None:
        """Queue one claim (any thread)."""
        self._queue.put(claim)

    def close(self, wait: float = CLOSE_WAIT) -> None:
        """Remember what is queued (for at most ``wait`` seconds), then close the vault."""
        self._queue.put(None)
        self._thread.join(wait)

    def _run(self) -> None:
        self._open_vault()  # at start: a locked vault is said now, not at the first call
        while (claim := self._queue.get()) is not None:
            self._remember(claim)
        if self._memory is not None:
            self._memory.vault.close()

    def _open_vault(self) -> Memory | None:
        """The open vault, opened now if need be; ``None`` (said once) while it is locked."""
        if self._memory is not None:
            return self._memory
        try:
            self._memory = self._trusting(self._open())
        except LockedError:
            self._once(
                "locked",
                "the memory vault is locked: verified calls are not remembered until "
                "`affidavit unlock` (the proxy goes on)",
            )
            return None
        except AffidavitError as exc:
            self._once(exc.message, f"verified calls cannot be remembered: {exc.message}")
            return None
        self._said.discard("locked")
        return self._memory

    def _trusting(self, memory: Memory) -> Memory:
        """``memory`` once the proxy's log is registered in its vault (closed if that fails)."""
        from affidavit.recall import trust_log

        try:
            trust_log(memory.vault, self._log)
        except BaseException:
            memory.vault.close()
            raise
        return memory

    def _remember(self, claim: CallClaim) -> None:
        memory = self._open_vault()
        if memory is None:
            return
        try:
            remember_call(memory, self.namespace, claim)
        except LockedError:  # locked since it was opened: open it again for the next call
            self._forget_vault()
            self._once(
                "locked",
                "the memory vault was locked: verified calls are not remembered until "
                "`affidavit unlock` (the proxy goes on)",
            )
        except AffidavitError as exc:
            self._once(exc.message, f"a verified call was not remembered: {exc.message}")
        except Exception as exc:  # the proxy's job never fails because memory is unavailable
            name = type(exc).__name__
            self._once(name, f"a verified call was not remembered ({name})")

    def _forget_vault(self) -> None:
        if self._memory is not None:
            with contextlib.suppress(Exception):
                self._memory.vault.close()
        self._memory = None

    def _once(self, key: str, line: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self._say(line)
