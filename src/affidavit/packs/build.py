"""Build a pack from source messages and the records to remember, or write nothing.

Every quote must appear verbatim in the message it cites; the builder finds it, records its
code-point offsets and the SHA-256 of the whole message, and refuses anything it cannot prove
(an unknown field, an ambiguous quote without ``start``, speakers that differ without an
explicit ``speaker``). The pack is staged in a hidden sibling directory, checked with the
same verifier every host runs, and renamed into place only then; the target must not exist.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.atomic import fsync_dir
from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    InputError,
    NotFoundError,
    UsageError,
)
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError
from affidavit.packs.inputs import Line, Message, read_input, read_jsonl
from affidavit.packs.render import render_memory, render_readme
from affidavit.packs.sources import Sources, read_sources
from affidavit.packs.verify import verify_pack

RECORD_FIELDS = ("record_id", "role", "topic", "category", "quotes", "statement", "speaker")
RECORD_REQUIRED = ("record_id", "role", "topic", "category", "quotes")
QUOTE_FIELDS = ("message_id", "quote", "start")
QUOTE_REQUIRED = ("message_id", "quote")
_PACK_DIR_MODE = 0o755
_PACK_FILE_MODE = 0o644


@dataclass(frozen=True)
class BuiltPack:
    """What was built: where, how many records, and the SHA-256 of each file."""

    path: Path
    record_count: int
    file_hashes: Mapping[str, str]


def _occurrences(text: str, quote: str) -> list[int]:
    """Every code-point offset where ``quote`` starts in ``text`` (overlaps included)."""
    found = []
    position = text.find(quote)
    while position >= 0:
        found.append(position)
        position = text.find(quote, position + 1)
    return found


def _cite(line: Line, data: Mapping[str, Any], messages: Mapping[int, Message]) -> dict[str, Any]:
    """One citation: find the quote verbatim in its message and record where it is."""
    if not isinstance(data, dict):
        raise line.error("each entry of 'quotes' must be an object", 'use {"message_id", "quote"}')
    line.check_fields(data, QUOTE_FIELDS, QUOTE_REQUIRED, "quote")
    message_id = line.positive_int(data, "message_id", "quote")
    message = messages.get(message_id)
    if message is None:
        raise line.error(
            f"quote cites message {message_id}, which is not in the messages file",
            "check the message_id",
        )
    quote = data["quote"]
    if not fmt.is_text(quote):
        raise line.error("quote 'quote' must be a non-empty string", "copy the exact words")
    starts = _occurrences(message.text, quote)
    if not starts:
        raise line.error(
            f"quote {quote!r} does not appear verbatim in message {message_id}",
            "copy it exactly from the message text (same case, spaces and punctuation)",
        )
    choices = ", ".join(str(s) for s in starts)
    if "start" in data:
        start = fmt.whole_number(data["start"], 0)
        if start is None or start not in starts:
            raise line.error(
                f"quote {quote!r} does not start at {data['start']!r} in message {message_id}",
                f"use one of start = {choices}",
            )
    elif len(starts) > 1:
        raise line.error(
            f"quote {quote!r} appears {len(starts)} times in message {message_id}",
            f'add "start" with one of {choices}',
        )
    else:
        start = starts[0]
    return {
        "message_id": message_id,
        "date_utc": message.date,
        "quote": quote,
        "start": start,
        "end": start + len(quote),
        "message_sha256": message.sha256,
    }


def _record(line: Line, messages: Mapping[int, Message]) -> dict[str, Any]:
    """One pack record from one input line, with defaults filled and evidence located."""
    data = line.data
    line.check_fields(data, RECORD_FIELDS, RECORD_REQUIRED, "record")
    quotes = data["quotes"]
    if not isinstance(quotes, list) or not quotes:
        raise line.error("'quotes' must be a non-empty list", "cite at least one quote")
    evidence = [_cite(line, quote, messages) for quote in quotes]
    cited = [messages[citation["message_id"]] for citation in evidence]
    if "speaker" in data:
        speaker = line.text(data, "speaker", "record")
    else:
        speakers = sorted({message.speaker for message in cited})
        if len(speakers) > 1:
            raise line.error(
                f"the cited messages have different speakers ({', '.join(speakers)})",
                'add "speaker" to say whose record this is',
            )
        speaker = speakers[0]
    if "statement" in data:
        statement = line.text(data, "statement", "record")
    else:
        statement = " ".join(citation["quote"] for citation in evidence)
    first = min(cited, key=lambda message: message.date_key)
    last = max(cited, key=lambda message: message.date_key)
    record = {
        "record_id": data["record_id"],
        "role": data["role"],
        "speaker": speaker,
        "category": line.text(data, "category", "record"),
        "topic": line.text(data, "topic", "record"),
        "statement": statement,
        "date_first_utc": first.date,
        "date_last_utc": last.date,
        "evidence": evidence,
    }
    try:
        fmt.check_record(record)
    except PackFormatError as exc:
        raise line.error(exc.message, "correct that field of the record and build again") from None
    return record


def _with_metadata(record: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``record`` with the fields of ``extra`` added; one the format already uses is refused."""
    if not extra:
        return record
    taken = sorted(set(extra) & set(record))
    if taken:
        raise InputError(
            f"{record['record_id']}: metadata cannot replace the record's {', '.join(taken)}",
            "give the extra fields names the pack format does not use",
        )
    return {**record, **extra}


def parse_records(label: str, raw: bytes, messages: Mapping[int, Message]) -> list[dict[str, Any]]:
    """The pack records described by a records input file, in file order."""
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line in read_jsonl(label, raw):
        record = _record(line, messages)
        if record["record_id"] in seen:
            raise line.error(
                f"record_id {record['record_id']!r} is already used on line "
                f"{seen[record['record_id']]}",
                "give each record its own id",
            )
        seen[record["record_id"]] = line.number
        records.append(record)
    if not records:
        raise InputError(f"{label} has no records", "add one JSON object per record")
    if len(records) > fmt.MAX_RECORDS:
        raise InputError(
            f"{label} has {len(records)} records, more than {fmt.MAX_RECORDS}",
            "split them into several packs",
        )
    return records


def pack_files(
    records: list[dict[str, Any]], title: str, description: str | None, inputs: Mapping[str, str]
) -> dict[str, bytes]:
    """Every file of the pack, by name, including SHA256SUMS."""
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records]
    files = {
        fmt.RECORDS: "".join(lines).encode("utf-8"),
        fmt.MEMORY: render_memory(title, records).encode("utf-8"),
        fmt.README: render_readme(title, description, inputs, len(records)).encode("utf-8"),
    }
    files[fmt.SUMS] = fmt.render_manifest(
        {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    )
    return files


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _PACK_FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _check_target(out: Path) -> None:
    if os.path.lexists(out):
        raise ConflictError(
            f"{out} already exists", "build into a new directory; nothing is overwritten"
        )
    if not out.parent.is_dir():
        raise NotFoundError(f"{out.parent} is not a directory", "create the parent directory first")


def build_pack(
    messages_path: Path,
    records_path: Path,
    out: Path,
    title: str,
    description: str | None = None,
) -> BuiltPack:
    """Build and verify a pack at ``out`` (which must not exist); on any error write nothing."""
    out = check_request(out, title)
    return build_pack_from(
        read_sources(messages_path),
        records_path.name,
        read_input(records_path),
        out,
        title,
        description,
    )


def check_request(out: Path, title: str) -> Path:
    """The absolute target, once the title and the target are known to be usable."""
    if not title.strip() or "\n" in title:
        raise UsageError("--title must be one non-empty line", "give the pack a short title")
    out = Path(out).absolute()
    _check_target(out)
    return out


def build_pack_from(
    sources: Sources,
    records_label: str,
    records_raw: bytes,
    out: Path,
    title: str,
    description: str | None = None,
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
) -> BuiltPack:
    """Build and verify a pack at ``out`` from source messages already read and the records
    input's bytes (the console and ``--from-chatgpt`` come here); on any error write nothing.

    ``metadata`` adds fields to records by record_id (``pack build --from-vault`` adds each
    proven memory's ``proof``): the format keeps fields beyond the required ones and hosts
    return them as the record's metadata, while the records input still refuses unknown
    fields, so a typo there fails loudly as in the reference builder."""
    out = check_request(out, title)
    records = parse_records(records_label, records_raw, sources.messages)
    if metadata:
        records = [_with_metadata(record, metadata.get(record["record_id"])) for record in records]
    inputs = {
        "messages": hashlib.sha256(sources.raw).hexdigest(),
        "records": hashlib.sha256(records_raw).hexdigest(),
    }
    files = pack_files(records, title, description, inputs)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as exc:
        raise AffidavitError(
            f"cannot write in {out.parent}: {exc.strerror}", "check its permissions"
        ) from None
    try:
        for name, data in files.items():
            _write_new(staging / name, data)
        fsync_dir(staging)
        verify_pack(staging)
        staging.chmod(_PACK_DIR_MODE)
        _check_target(out)
        staging.rename(out)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(staging)
        if isinstance(exc, OSError):
            raise AffidavitError(
                f"cannot write the pack in {out.parent}: {exc.strerror}",
                "check free space and permissions; nothing was written",
            ) from None
        raise
    fsync_dir(out.parent)
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    return BuiltPack(path=out, record_count=len(records), file_hashes=hashes)
