"""The input files a pack is built from, read line by line: source messages and records.

Both builders' inputs (a hand-written ``messages.jsonl``, or one made from a chat export by
:mod:`affidavit.packs.sources`, and the records that quote it) are JSONL read strictly, as a
pack's own ``records.jsonl`` is; every error names the file and the line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError
from affidavit.core.regular_file import read_named
from affidavit.packs import format as fmt
from affidavit.packs.errors import PackFormatError

MESSAGE_FIELDS = ("id", "date", "speaker", "text")


@dataclass(frozen=True)
class Message:
    """One source message, as the records cite it."""

    id: int
    date: str
    date_key: str
    speaker: str
    text: str
    sha256: str


class Line:
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


def read_jsonl(label: str, raw: bytes) -> Iterator[Line]:
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
        yield Line(label, number, data)


def parse_messages(label: str, raw: bytes) -> dict[int, Message]:
    """Source messages by id: unique positive ids, UTC dates, non-empty speaker and text."""
    messages: dict[int, Message] = {}
    for line in read_jsonl(label, raw):
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
