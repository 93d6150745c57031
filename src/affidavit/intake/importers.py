"""Importers: notes and chats from elsewhere, split into single claims and stored as one batch.

Each reader turns a file into a :class:`Plan`: the claims it would store (each already checked
against the store's one-claim rule) and every piece it skipped with the reason. A file that
cannot be read as its format at all raises one :class:`InputError` and nothing is stored.
:func:`store_plan` stores the claims in one ``store_many`` batch: all or nothing, and a claim
the vault already holds comes back a duplicate, so importing the same file again stores 0.

Formats (``docs/capture.md`` shows each shape):

- ``markdown``: one claim per bullet, the nearest heading as a tag; paragraphs, code blocks
  and front matter are skipped;
- ``claude-memory``: a ``CLAUDE.md`` or a memory directory (every ``*.md`` below it), read as
  Markdown, tagged ``claude-memory``; ``@path`` import lines are skipped;
- ``chatgpt`` / ``claude``: a ``conversations.json`` (or the export's zip) through
  :mod:`affidavit.exports`; from what the user wrote, the sentences that state a decision,
  preference, correction or fact (:mod:`.sentences`), dated by their message;
- ``compartment``: a plaintext JSONL export, one memory object per line (``text`` and the
  ``memory_store`` fields that travel: ``source``, ``tags``, ``discovered``, ``kind``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import InputError
from affidavit.core.regular_file import read_named
from affidavit.core.secret_text import holds_secret
from affidavit.exports import USER, read_export
from affidavit.intake.formats import Format
from affidavit.intake.sentences import extract
from affidavit.recall import Claim, MemoryKind, StoreStatus, check_claim

if TYPE_CHECKING:
    from affidavit.recall import Memory


@dataclass(frozen=True)
class Note:
    """One claim to store, with where it came from."""

    text: str
    source: str
    tags: tuple[str, ...] = ()
    discovered: str | None = None
    kind: MemoryKind = MemoryKind.FACT

    def claim(self, namespace: str | None) -> Claim:
        """The claim ``store_many`` takes for this note (``namespace`` None: the caller's)."""
        return Claim(
            self.text,
            self.source,
            namespace=namespace,
            tags=self.tags,
            discovered=self.discovered,
            kind=self.kind,
        )


@dataclass(frozen=True)
class Skip:
    """A piece of the file that was not imported, where it was and why."""

    where: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """What an import would store, and what it skipped."""

    format: Format
    notes: tuple[Note, ...]
    skipped: tuple[Skip, ...]


@dataclass(frozen=True)
class Stored:
    """What storing a plan did: new memories, ones the vault already held, opinion conflicts."""

    stored: int
    duplicates: int
    conflicts: int


class _Collect:
    """Notes and skips as a reader finds them, each note checked against the claim rule."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.notes: list[Note] = []
        self.skipped: list[Skip] = []

    def note(self, where: str, text: str, source: str, **rest: Any) -> None:
        if holds_secret(text):  # the audit log's detector; the text is never repeated
            self.skip(where, "it holds a password, token or key: secrets are not imported")
            return
        try:
            claim = check_claim(text, self.max_chars)
        except InputError as exc:
            self.skip(where, exc.message)
            return
        self.notes.append(Note(claim, source, **rest))

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append(Skip(where, reason))

    def plan(self, fmt: Format) -> Plan:
        return Plan(fmt, tuple(self.notes), tuple(self.skipped))


def _read_text(path: Path) -> str:
    """A named text file, through the bounded reader (a FIFO, a device, a directory or a file
    over the size limit is one clear error, never a hang)."""
    raw = read_named(path, what="a text file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {path} as UTF-8 text ({exc})") from None


# -- Markdown -------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s*(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+\u2022]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_TAG_CHARS = re.compile(r"[^\w]+")


def _tag(heading: str) -> str:
    return _TAG_CHARS.sub("-", heading.strip().lower()).strip("-")


def _markdown_pieces(text: str) -> Iterator[tuple[int, str, str | None, str]]:
    """``(line, kind, heading, text)`` for each bullet ("bullet"), paragraph line, @import
    line or code block ("paragraph" / "import" / "code") of a Markdown text."""
    lines = text.splitlines()
    heading: str | None = None
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        close = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if close is not None:
            i = close + 1
    while i < len(lines):
        line = lines[i]
        number = i + 1
        i += 1
        if _FENCE.match(line):
            while i < len(lines) and not _FENCE.match(lines[i]):
                i += 1
            i += 1
            yield number, "code", heading, ""
        elif match := _HEADING.match(line):
            heading = match.group(2)
        elif match := _BULLET.match(line):
            parts = [match.group(2)]
            indent = len(match.group(1))
            while i < len(lines) and lines[i].strip() and not _BULLET.match(lines[i]):
                if len(lines[i]) - len(lines[i].lstrip()) <= indent or _HEADING.match(lines[i]):
                    break
                parts.append(lines[i].strip())
                i += 1
            yield number, "bullet", heading, " ".join(parts)
        elif line.strip().startswith("@"):
            yield number, "import", heading, line.strip()
        elif line.strip():
            yield number, "paragraph", heading, line.strip()


def _read_markdown(
    collect: _Collect, path: Path, label: str, extra_tags: tuple[str, ...] = ()
) -> None:
    for number, kind, heading, text in _markdown_pieces(_read_text(path)):
        where = f"{label}:{number}"
        if kind == "bullet":
            tags = (*extra_tags, _tag(heading)) if heading and _tag(heading) else extra_tags
            collect.note(where, text, label, tags=tuple(dict.fromkeys(tags)))
        elif kind == "code":
            collect.skip(where, "a code block, not a claim")
        elif kind == "import":
            collect.skip(where, "an import of another file (@path): import that file itself")
        else:
            collect.skip(where, "a paragraph, not a bullet: one claim per bullet")


def read_markdown(path: Path, max_chars: int) -> Plan:
    """Markdown notes: one claim per bullet, the nearest heading as a tag."""
    collect = _Collect(max_chars)
    _read_markdown(collect, path, str(path))
    return collect.plan(Format.MARKDOWN)


def read_claude_memory(path: Path, max_chars: int) -> Plan:
    """A CLAUDE.md, or a memory directory: each ``*.md`` file below it, in name order."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.md") if p.is_file())
        if not files:
            raise InputError(f"{path} holds no .md files", "name a CLAUDE.md or a memory folder")
    else:
        files = [path]
    collect = _Collect(max_chars)
    for file in files:
        _read_markdown(collect, file, str(file), ("claude-memory",))
    return collect.plan(Format.CLAUDE_MEMORY)


# -- chat exports -----------------------------------------------------------------------------


def read_chat_export(path: Path, fmt: Format, max_chars: int) -> Plan:
    """The claims the user stated in a ChatGPT or Claude export, one per sentence."""
    export = read_export(path, fmt.value)
    collect = _Collect(max_chars)
    for conversation in export.conversations:
        label = f"{fmt.value} export {path.name}: {conversation.title}"
        for message in conversation.messages:
            where = f"{path.name}: {conversation.title!r}, message {message.source_id}"
            if message.role != USER:
                collect.skip(where, "the assistant's words: only what the user said is imported")
                continue
            found = extract(message.text, max_chars)
            if not found:
                collect.skip(where, "no decision, preference, correction or fact in it")
            day = message.created.astimezone(UTC).date().isoformat()
            for claim in found:
                tags = (fmt.value, claim.category.value)
                collect.note(where, claim.text, label, tags=tags, discovered=day)
    return collect.plan(fmt)


# -- Compartment plaintext export ---------------------------------------------------------------

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _day(value: Any) -> str | None:
    """A ``discovered`` value as YYYY-MM-DD: an ISO date or time, or Unix seconds."""
    if isinstance(value, str) and _DAY.match(value):
        return value[:10]
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return None


def read_compartment(path: Path, max_chars: int) -> Plan:
    """A plaintext JSONL export: one object per line, a memory's ``text`` at the top level
    (or under ``data``); relations and other records are skipped."""
    collect = _Collect(max_chars)
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            row = json.loads(line)
        except ValueError:
            raise InputError(
                f"{where} is not JSON", "nothing was imported; is this a plaintext JSONL export?"
            ) from None
        except RecursionError:
            raise InputError(
                f"{where} is JSON nested too deeply to read", "nothing was imported"
            ) from None
        if not isinstance(row, dict):
            raise InputError(f"{where} is not a JSON object", "nothing was imported")
        data = row["data"] if isinstance(row.get("data"), dict) else row
        if "subject" in data and "predicate" in data:
            collect.skip(where, "a relation, not a memory (relations are not imported)")
            continue
        text = data.get("text")
        if not isinstance(text, str):
            collect.skip(where, "no 'text': not a memory record")
            continue
        tags = data.get("tags")
        source = data.get("source")
        collect.note(
            where,
            text,
            source if isinstance(source, str) and source.strip() else f"compartment {path.name}",
            tags=tuple(t for t in tags if isinstance(t, str) and t.strip())
            if isinstance(tags, list)
            else (),
            discovered=_day(data.get("discovered")),
            kind=MemoryKind.of(data.get("kind")),
        )
    return collect.plan(Format.COMPARTMENT)


def read_plan(fmt: Format, path: Path, max_chars: int) -> Plan:
    """The plan for importing ``path`` read as ``fmt`` (InputError if it is not one)."""
    if fmt is Format.AFFIDAVIT:
        raise InputError(
            "an affidavit export is imported whole, not read as claims",
            "import it with `affidavit import FILE` (the default --from)",
        )
    if fmt is Format.MARKDOWN:
        return read_markdown(path, max_chars)
    if fmt is Format.CLAUDE_MEMORY:
        return read_claude_memory(path, max_chars)
    if fmt is Format.COMPARTMENT:
        return read_compartment(path, max_chars)
    return read_chat_export(path, fmt, max_chars)


def store_plan(
    memory: Memory,
    plan: Plan,
    *,
    namespace: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Stored:
    """Store every note of ``plan`` in one batch (all or nothing; repeats are duplicates)."""
    if not plan.notes:
        return Stored(0, 0, 0)
    outcomes = memory.store_many([n.claim(namespace) for n in plan.notes], progress=progress)
    statuses = [o["status"] for o in outcomes]
    return Stored(
        stored=statuses.count(StoreStatus.STORED),
        duplicates=statuses.count(StoreStatus.DUPLICATE) + statuses.count(StoreStatus.REAFFIRMED),
        conflicts=statuses.count(StoreStatus.CONFLICT),
    )
