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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.atomic import fsync_dir
from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    InputError,
    NotFoundError,
    UsageError,
)
from affidavit.core.regular_file import read_named
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError
from affidavit.packs.render import render_memory, render_readme
from affidavit.packs.verify import verify_pack

if TYPE_CHECKING:
    from affidavit.packs.sources import Sources

MESSAGE_FIELDS = ("id", "date", "speaker", "text")
RECORD_FIELDS = ("record_id", "role", "topic", "category", "quotes", "statement", "speaker")
RECORD_REQUIRED = ("record_id", "role", "topic", "category", "quotes")
QUOTE_FIELDS = ("message_id", "quote", "start")
QUOTE_REQUIRED = ("message_id", "quote")
_PACK_DIR_MODE = 0o755
_PACK_FILE_MODE = 0o644


@dataclass(frozen=True)
class Message:
    """One source message, as the records cite it."""

    id: int
    date: str
    date_key: str
    speaker: str
    text: str
    sha256: str


@dataclass(frozen=True)
class BuiltPack:
    """What was built: where, how many records, and the SHA-256 of each file."""

    path: Path
    record_count: int
    file_hashes: Mapping[str, str]


class _Line:
    """One input line, so every error names its file and line number."""

    def __init__(self, label: str, number: int, data: dict[str, Any]) -> None:
        self.label = label
        self.number = number
        self.data = data

    def error(self, problem: str, hint: str) -> InputError:
        return InputError(f"{self.label} line {self.number}: {problem}", hint)

    def check_fields(
        self,
        data: Mapping[str, Any],
        allowed: tuple[str, ...],
        required: tuple[str, ...],
        what: str,
    ) -> None:
        for field in data:
            if field not in allowed:
                raise self.error(
                    f"unknown field {field!r} in {what}", f"allowed fields: {', '.join(allowed)}"
                )
        for field in required:
            if field not in data:
                raise self.error(f"{what} is missing {field!r}", f"add {field!r}")

    def text(self, data: Mapping[str, Any], field: str, what: str) -> str:
        value = data[field]
        if not fmt.is_text(value):
            raise self.error(f"{what} {field!r} must be a non-empty string", f"fill in {field!r}")
        return value

    def positive_int(self, data: Mapping[str, Any], field: str, what: str) -> int:
        value = fmt.whole_number(data[field], 1)
        if value is None:
            raise self.error(
                f"{what} {field!r} must be a positive whole number, not {data[field]!r}",
                f"use 1, 2, 3, ... for {field!r}",
            )
        return value


def read_input(path: Path) -> bytes:
    """The bytes of an input file, read once (they are parsed and hashed from this copy)
    through the bounded reader: a FIFO, a device or a huge file is one clear error."""
    return read_named(path, what="a JSONL file")


def _read_jsonl(label: str, raw: bytes) -> Iterator[_Line]:
    """The JSON objects of a JSONL file, strictly UTF-8, read line by line as a pack is."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{label} is not valid UTF-8 (byte {exc.start})", "save it as UTF-8"
        ) from None
    for number, line in fmt.content_lines(raw):
        try:
            data = fmt.load_json(line)
        except PackFormatError as exc:
            raise InputError(
                f"{label} line {number}: {exc.message}", "write one JSON object per line"
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                f"{label} line {number}: expected a JSON object, found {type(data).__name__}",
                "write one JSON object per line",
            )
        yield _Line(label, number, data)


def parse_messages(label: str, raw: bytes) -> dict[int, Message]:
    """Source messages by id: unique positive ids, UTC dates, non-empty speaker and text."""
    messages: dict[int, Message] = {}
    for line in _read_jsonl(label, raw):
        line.check_fields(line.data, MESSAGE_FIELDS, MESSAGE_FIELDS, "message")
        message_id = line.positive_int(line.data, "id", "message")
        if message_id in messages:
            raise line.error(
                f"message id {message_id} is used twice", "give each message its own id"
            )
        date = line.data["date"]
        try:
            date_key = fmt.utc_key(date if isinstance(date, str) else repr(date))
        except PackFormatError as exc:
            raise line.error(
                f"message date: {exc.message}", "write it like 2026-03-02T08:20:00Z"
            ) from None
        text = line.text(line.data, "text", "message")
        messages[message_id] = Message(
            id=message_id,
            date=date,
            date_key=date_key,
            speaker=line.text(line.data, "speaker", "message"),
            text=text,
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        )
    if not messages:
        raise InputError(f"{label} has no messages", "add one JSON object per message")
    return messages


def _occurrences(text: str, quote: str) -> list[int]:
    """Every code-point offset where ``quote`` starts in ``text`` (overlaps included)."""
    found = []
    position = text.find(quote)
    while position >= 0:
        found.append(position)
        position = text.find(quote, position + 1)
    return found


def _cite(line: _Line, data: Mapping[str, Any], messages: Mapping[int, Message]) -> dict[str, Any]:
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


def _record(line: _Line, messages: Mapping[int, Message]) -> dict[str, Any]:
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


def parse_records(label: str, raw: bytes, messages: Mapping[int, Message]) -> list[dict[str, Any]]:
    """The pack records described by a records input file, in file order."""
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line in _read_jsonl(label, raw):
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
    from affidavit.packs.sources import read_sources

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
) -> BuiltPack:
    """Build and verify a pack at ``out`` from source messages already read and the records
    input's bytes (the console and ``--from-chatgpt`` come here); on any error write nothing."""
    out = check_request(out, title)
    records = parse_records(records_label, records_raw, sources.messages)
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
