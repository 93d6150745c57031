"""The pack maker's state: the loaded messages, the records written so far, the packs built.

Every step goes through the evidence plane's own code: sources are read by
:mod:`affidavit.packs.sources` (so an export is held to the ``messages.jsonl`` rules), a record
is checked by :func:`affidavit.packs.build.parse_records` over the records written so far plus
the new one (so its message, line number included, is the one ``pack build`` would print), and
packs are made by :func:`~affidavit.packs.build.build_pack_from` and
:func:`~affidavit.packs.sign.sign_pack`. The draft is kept in memory for this launch only.
"""

from __future__ import annotations

import io
import json
import secrets
import threading
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from affidavit.packs import BuiltPack, SignResult, Sources

RECORDS_LABEL = "records.jsonl"
MESSAGES_JSONL = "messages"
AUTO = "auto"
SOURCE_FORMATS = (AUTO, "chatgpt", "claude", MESSAGES_JSONL)


def read_sources(name: str, raw: bytes, format: str) -> Sources:
    """Messages from an uploaded or named file: an export (detected, or as ``format``) or a
    ``messages.jsonl`` (``format`` ``messages``, or ``auto`` for a ``.jsonl`` name)."""
    from affidavit.packs import sources_from_export, sources_from_jsonl

    if format not in SOURCE_FORMATS:
        raise UsageError(f"unknown format {format!r}", f"use one of {', '.join(SOURCE_FORMATS)}")
    if format == MESSAGES_JSONL or (format == AUTO and name.endswith(".jsonl")):
        return sources_from_jsonl(name, raw)
    from affidavit.exports import parse_export

    return sources_from_export(parse_export(name, raw, None if format == AUTO else format))


def records_jsonl(records: list[dict[str, Any]]) -> bytes:
    """Records as the ``records.jsonl`` input a user would write for ``pack build``."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


@dataclass(frozen=True)
class Built:
    """A pack this launch built: where it is, what was built, and the signature if signed."""

    id: str
    title: str
    path: Path
    built: BuiltPack
    signed: SignResult | None
    in_workspace: bool


@dataclass
class Draft:
    """One pack in the making (one per console launch)."""

    sources: Sources | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    builds: dict[str, Built] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self, sources: Sources) -> None:
        """Work on new messages; records written for the old ones are dropped."""
        with self.lock:
            self.sources, self.records = sources, []

    def clear(self) -> None:
        """Forget the messages and the records."""
        with self.lock:
            self.sources, self.records = None, []

    def next_record_id(self) -> str:
        """An unused ``M-<n>`` id for the next record."""
        used = {record.get("record_id") for record in self.records}
        number = len(self.records) + 1
        while f"M-{number}" in used:
            number += 1
        return f"M-{number}"

    def check(self, candidate: dict[str, Any]) -> dict[str, Any]:
        """The pack record ``candidate`` would become, or the builder's error for it."""
        from affidavit.packs import parse_records

        with self.lock:
            sources = self._sources()
            raw = records_jsonl([*self.records, candidate])
            return parse_records(RECORDS_LABEL, raw, sources.messages)[-1]

    def add(self, candidate: dict[str, Any]) -> dict[str, Any]:
        """Check ``candidate`` and keep it; return the pack record it becomes."""
        record = self.check(candidate)
        with self.lock:
            self.records.append(candidate)
        return record

    def remove(self, index: int) -> None:
        """Drop the record at ``index`` (0-based)."""
        with self.lock:
            if not 0 <= index < len(self.records):
                raise NotFoundError(f"there is no record {index + 1}")
            del self.records[index]

    def _sources(self) -> Sources:
        if self.sources is None:
            raise UsageError("no messages are loaded", "load a conversations file first")
        return self.sources

    def build(
        self,
        scratch: Path,
        title: str,
        description: str | None,
        folder: Path | None,
        signing: Signing | None,
    ) -> Built:
        """Build the pack (into ``folder``, or ``scratch`` for a download), signed if asked."""
        from affidavit.packs import build_pack_from

        with self.lock:
            sources, raw = self._sources(), records_jsonl(self.records)
            if not self.records:
                raise UsageError("the pack has no records yet", "write at least one record")
        unsigned_out = scratch / "pack" if signing is not None or folder is None else folder
        built = build_pack_from(sources, RECORDS_LABEL, raw, unsigned_out, title, description)
        signed = None
        path = built.path
        if signing is not None:
            from affidavit.packs import sign_pack

            path = folder if folder is not None else scratch / "signed"
            signed = sign_pack(
                built.path,
                signing.key,
                signing.expires,
                path,
                sequence=signing.sequence,
                now=signing.now,
            )
        result = Built(secrets.token_urlsafe(12), title, path, built, signed, folder is None)
        with self.lock:
            self.builds[result.id] = result
        return result


@dataclass(frozen=True)
class Signing:
    """How to sign: the key for ssh-keygen, the expiry and sequence, and the signing time."""

    key: Path
    expires: datetime
    sequence: int | None
    now: datetime

    @classmethod
    def parse(cls, key: Path, expires: str, sequence: str) -> Signing:
        """From the form's text, with ``pack sign``'s rules for expiry and sequence."""
        from affidavit.packs import parse_expires

        now = datetime.now(UTC).replace(microsecond=0)
        if sequence and not (sequence.isascii() and sequence.isdigit()):
            raise UsageError(f"--sequence {sequence[:20]!r} is not a whole number >= 0")
        return cls(
            key, parse_expires(expires or "90d", now), int(sequence) if sequence else None, now
        )


def zip_pack(path: Path, folder: str) -> bytes:
    """The pack at ``path`` as a zip holding one ``folder`` with its files (in name order)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in sorted(path.iterdir()):
            archive.writestr(f"{folder}/{item.name}", item.read_bytes())
    return buffer.getvalue()
