"""Evidence on a memory: what proves it, and whether that proof still holds.

A memory may rest on a citation into an installed signed pack (a record and the verbatim
quote it rests on) or on a receipt from the proxy's hash-chained audit log (a call the proxy
judged VERIFIED). Each item is checked when the memory is stored; a memory whose evidence
does not check is refused, never stored with a false claim of proof. On every read the
items are judged again and the memory is ``proven`` (every item still holds), ``stale``
(one no longer does: the pack was revoked, changed or uninstalled, the log was cut or
edited) or ``unproven`` (no evidence). The memory plane reads packs through its own
:class:`~affidavit.recall.installed_packs.PackShelf` (verified by ``packs.verify_pack``) and
receipts only through :func:`affidavit.proxy.check_receipt` (docs/evidence.md, ADR 0220).

Judging is cheap on the hot path: the shelf is already synced before a read (stat calls),
and a log's reading is kept until the log's size, times or inode change.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from affidavit.core.errors import InputError
from affidavit.core.file_state import FileState, file_state

if TYPE_CHECKING:
    from affidavit.proxy import ReceiptBook

MAX_ITEMS = 8
"""Evidence items one memory may carry."""
MAX_QUOTE_CHARS = 2000
_ENTRY_HASH = re.compile(r"[0-9a-f]{64}")


class EvidenceStatus(enum.StrEnum):
    """Whether a memory's evidence holds now."""

    PROVEN = "proven"
    STALE = "stale"
    UNPROVEN = "unproven"


@dataclass(frozen=True)
class PackCitation:
    """A record of an installed signed pack, and the verbatim quote the memory rests on."""

    pack: str  # the install's name
    signer: str  # the signing key's fingerprint, SHA256:...
    record: str  # the pack's record_id, M-...
    quote: str

    def as_dict(self) -> dict[str, str]:
        """The sealed and wire form."""
        return {
            "type": "pack",
            "pack": self.pack,
            "signer": self.signer,
            "record": self.record,
            "quote": self.quote,
        }


@dataclass(frozen=True)
class ToolReceipt:
    """An entry of the proxy's audit log that recorded a VERIFIED call."""

    log: str  # the log's absolute path
    entry: str  # the entry's link hash (64 hex)

    def as_dict(self) -> dict[str, str]:
        """The sealed and wire form."""
        return {"type": "receipt", "log": self.log, "entry": self.entry}


Evidence = PackCitation | ToolReceipt


@dataclass(frozen=True)
class EvidenceCheck:
    """A memory's evidence judged now: its status and, when not proven, why."""

    status: EvidenceStatus
    reasons: tuple[str, ...] = ()


UNPROVEN = EvidenceCheck(EvidenceStatus.UNPROVEN)


def _text(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}.{key} must be a non-empty string")
    return value


def _one(item: Any, where: str) -> Evidence:
    if not isinstance(item, Mapping):
        raise InputError(f"{where} must be an object with a 'type' of 'pack' or 'receipt'")
    kind = item.get("type")
    if kind == "pack":
        quote = _text(item, "quote", where)
        if len(quote) > MAX_QUOTE_CHARS:
            raise InputError(f"{where}.quote is over {MAX_QUOTE_CHARS} characters")
        return PackCitation(
            _text(item, "pack", where),
            _text(item, "signer", where).strip(),
            _text(item, "record", where).strip(),
            quote,
        )
    if kind == "receipt":
        log = _text(item, "log", where)
        if not Path(log).is_absolute():
            raise InputError(f"{where}.log must be an absolute path to the proxy's audit log")
        entry = _text(item, "entry", where).strip().lower()
        if not _ENTRY_HASH.fullmatch(entry):
            raise InputError(f"{where}.entry must be the entry's hash: 64 hex characters")
        return ToolReceipt(os.path.normpath(log), entry)
    raise InputError(f"{where}.type must be 'pack' or 'receipt', not {kind!r}")


def parse_evidence(raw: Any, where: str = "evidence") -> tuple[Evidence, ...]:
    """Evidence items from their wire form (a list of objects); InputError says what is wrong."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise InputError(f"{where} must be a list of evidence items")
    if len(raw) > MAX_ITEMS:
        raise InputError(f"{where} holds {len(raw)} items; at most {MAX_ITEMS}")
    items = tuple(_one(item, f"{where}[{i}]") for i, item in enumerate(raw))
    if len(set(items)) != len(items):
        raise InputError(f"{where} names the same item twice")
    return items


class CitedPacks(Protocol):
    """What judging a citation needs of the installed packs (recall's ``PackShelf``)."""

    def citation_problem(self, name: str, signer: str, record_id: str, quote: str) -> str:
        """Why a citation of the pack ``name`` proves nothing now; empty when it does."""
        ...


class EvidenceJudge:
    """Judges evidence items against the packs in recall now and the logs as they are now.

    It keeps each log's reading (every entry, or why none proves anything) until the log's
    size, times or inode change: receipts of one log cost one read and one chain walk.
    """

    def __init__(self) -> None:
        self._logs: dict[str, tuple[FileState | None, ReceiptBook]] = {}

    def problem(
        self, item: Evidence, shelf: CitedPacks, states: dict[str, FileState | None] | None = None
    ) -> str:
        """Why ``item`` does not prove anything now; empty when it does. ``states``: the logs'
        file states already taken in this pass (one stat per log when judging many)."""
        if isinstance(item, PackCitation):
            return shelf.citation_problem(item.pack, item.signer, item.record, item.quote)
        if states is None:
            state = file_state(item.log)
        elif item.log in states:
            state = states[item.log]
        else:
            state = states[item.log] = file_state(item.log)
        known = self._logs.get(item.log)
        if known is None or known[0] != state or state is None:
            from affidavit.proxy import read_receipts

            known = (state, read_receipts(Path(item.log)))
            self._logs[item.log] = known
        return known[1].check(item.entry).reason

    def forget(self, items: Sequence[Evidence]) -> None:
        """Drop the readings kept for ``items``' logs: the next judgement reads them again."""
        for item in items:
            if isinstance(item, ToolReceipt):
                self._logs.pop(item.log, None)

    def judge(
        self,
        items: Sequence[Evidence],
        shelf: CitedPacks,
        states: dict[str, FileState | None] | None = None,
    ) -> EvidenceCheck:
        """``proven`` when every item holds, ``stale`` with the reasons when one does not
        (``states``: as :meth:`problem` takes it)."""
        if not items:
            return UNPROVEN
        reasons = tuple(reason for item in items if (reason := self.problem(item, shelf, states)))
        if reasons:
            return EvidenceCheck(EvidenceStatus.STALE, reasons)
        return EvidenceCheck(EvidenceStatus.PROVEN)

    def require(self, items: Sequence[Evidence], shelf: CitedPacks, where: str = "") -> None:
        """At store time: InputError naming the first item that does not check."""
        for i, item in enumerate(items):
            reason = self.problem(item, shelf)
            if reason:
                raise InputError(
                    f"{where}evidence[{i}] does not check: {reason}",
                    "store the memory without that item, or fix what it points at",
                )
