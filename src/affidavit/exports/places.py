"""Reading an export file, and naming the place in it that is wrong.

An export is the ``conversations.json`` a chat service hands out, or the ``.zip`` it comes in.
Every error names the file and the place (conversation number and title, message number) so
the user can find it; a reader either returns the whole export or raises, never a part.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError
from affidavit.core.regular_file import USER_FILE_LIMIT, read_named, size_words
from affidavit.exports.model import Conversation

CONVERSATIONS = "conversations.json"
MAX_EXPORT_BYTES = USER_FILE_LIMIT
"""The largest export file read, and the largest ``conversations.json`` unpacked from a zip
(checked against the size the zip declares before anything is unpacked: a zip bomb is refused
at no cost, ADR 0175)."""
_ZIP_MAGIC = b"PK\x03\x04"
_HINT = "export your data again, or check you picked the right file"


class Place:
    """A position inside an export, for error messages: ``FILE: conversation 3 ('Trip')``."""

    def __init__(self, label: str, *parts: str) -> None:
        self.label = label
        self.parts = parts

    def at(self, part: str) -> Place:
        """This place, one level deeper."""
        return Place(self.label, *self.parts, part)

    def error(self, problem: str, hint: str = _HINT) -> InputError:
        """An error about this place."""
        where = ", ".join(self.parts)
        return InputError(f"{self.label}: {where + ': ' if where else ''}{problem}", hint)

    def mapping(self, value: Any, what: str) -> dict[str, Any]:
        """``value`` if it is a JSON object, else an error naming ``what``."""
        if not isinstance(value, dict):
            raise self.error(f"{what} is not a JSON object")
        return value

    def items(self, value: Any, what: str) -> list[Any]:
        """``value`` if it is a JSON list, else an error naming ``what``."""
        if not isinstance(value, list):
            raise self.error(f"{what} is not a list")
        return value


def each_conversation(
    label: str, data: Any, read: Callable[[Place, dict[str, Any], int], Conversation | None]
) -> tuple[Conversation, ...]:
    """``read`` applied to every conversation of a parsed export (``None``: left out)."""
    found = []
    for index, item in enumerate(Place(label).items(data, "the file"), start=1):
        conversation = read(
            Place(label), Place(label).mapping(item, f"conversation {index}"), index
        )
        if conversation is not None:
            found.append(conversation)
    return tuple(found)


def conversation_place(file: Place, index: int, title: str) -> Place:
    """Where a conversation is: its number and the start of its title."""
    return file.at(f"conversation {index} ({title[:40]!r})")


def source_id(value: Any, fallback: str) -> str:
    """The export's own id for something, when it has one."""
    return value if isinstance(value, str) and value else fallback


def read_file(path: Path) -> bytes:
    """The bytes of an export file (a regular file, at most :data:`MAX_EXPORT_BYTES`), or one
    clear error: a FIFO, a device, a directory or a huge file is refused unread."""
    return read_named(path, MAX_EXPORT_BYTES, what=f"the {CONVERSATIONS} file or its .zip")


def _too_big(label: str, size: str) -> InputError:
    return InputError(
        f"{label}: {CONVERSATIONS} unpacks to {size}, more than the "
        f"{size_words(MAX_EXPORT_BYTES)} affidavit reads",
        "export fewer conversations at a time",
    )


def _unzip(label: str, raw: bytes) -> bytes:
    """``conversations.json`` from an export zip: refused from its declared size before any
    byte is unpacked, and never unpacked past the bound (the declared size is enforced by the
    reader, whose CRC check fails on a member longer than declared)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == CONVERSATIONS]
        if len(found) != 1:
            count = "no" if not found else f"{len(found)} copies of"
            raise InputError(f"{label} holds {count} {CONVERSATIONS}", _HINT)
        if found[0].file_size > MAX_EXPORT_BYTES:
            raise _too_big(label, size_words(found[0].file_size))
        with archive.open(found[0]) as member:
            data = member.read(MAX_EXPORT_BYTES + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as exc:
        raise InputError(f"{label} is not a readable zip file ({exc})", _HINT) from None
    if len(data) > MAX_EXPORT_BYTES:
        raise _too_big(label, f"more than {size_words(MAX_EXPORT_BYTES)}")
    return data


def load_json(label: str, raw: bytes) -> Any:
    """The JSON document of an export (``conversations.json``, or the zip holding it)."""
    if raw.startswith(_ZIP_MAGIC):
        raw = _unzip(label, raw)
        label = f"{label}/{CONVERSATIONS}"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label} is not UTF-8 text (byte {exc.start})", _HINT) from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InputError(f"{label} is not valid JSON ({exc})", _HINT) from None
    except RecursionError:  # deeper than Python's parser goes: no export nests like that
        raise InputError(f"{label} is JSON nested too deeply to read", _HINT) from None


def checked_text(place: Place, text: str) -> str:
    """``text`` if it can be stored as UTF-8 (JSON may carry a lone ``\\ud800`` escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise place.error("the text holds a lone UTF-16 surrogate (\\ud800...)") from None
    return text


def text_or(value: Any, default: str) -> str:
    """``value`` when it is a non-blank string, else ``default`` (titles may be missing)."""
    return value if isinstance(value, str) and value.strip() else default


def from_epoch(place: Place, value: Any, field: str) -> datetime | None:
    """A Unix time in seconds (``create_time``) as aware UTC; ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise place.error(f"{field} {str(value)[:40]!r} is not a number of seconds")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise place.error(f"{field} {value!r} is not a real time") from None


def from_iso(place: Place, value: Any, field: str) -> datetime | None:
    """An ISO 8601 time (``created_at``) as aware UTC (a time without zone is taken as UTC)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise place.error(f"{field} {str(value)[:40]!r} is not an ISO 8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise place.error(f"{field} {value[:40]!r} is not an ISO 8601 time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
