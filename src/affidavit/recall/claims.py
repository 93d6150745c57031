"""Claims: what one authored memory may look like, checked once where it enters.

A memory is one claim with a source and dates. Agents left to themselves write bulleted
session logs; a log is found by none of its claims and cannot be superseded claim by claim,
so a :class:`Claim` refuses lists, headings and paragraphs, with advice to split it into
single claims, and :meth:`affidavit.recall.Memory.store_many` refuses one longer than the
vault's limit (setting ``max_memory_chars``). Imported rows (``import``, the retrieval
benchmark) bypass the authoring rules: they were written elsewhere and are kept verbatim.

A ``Claim`` is a frozen value checked when it is made, at the edge that received the input
(the memory server's handler, a CLI command, an importer, the console), so
``Memory.store(claim)`` never sees an unchecked field and a bad one is named where the user
can fix it. :meth:`Claim.from_json` reads one from JSON (a tool's arguments, a batch item).

Fields kept in ``VaultItem.data`` (all JSON): ``text``, ``source``, ``tags``, ``discovered``
(YYYY-MM-DD), ``expires`` (YYYY-MM-DD, inclusive), ``importance`` (0-1), ``kind``
(``fact``|``opinion``), ``affirmed`` (UTC time of the last re-affirmation), ``supersedes``,
``superseded_by``, ``quarantined``, ``imported``, and for a turn of a conversation
``thread``, ``turn`` and ``reply_to`` (recall/ranking/conversation.py), and ``evidence``
(what proves the memory: :mod:`affidavit.recall.evidence`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from affidavit.access import check_name
from affidavit.core.errors import InputError
from affidavit.recall.evidence import Evidence, PackCitation, ToolReceipt, parse_evidence
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.lifecycle import parse_date, parse_expires
from affidavit.vault import check_structure

#: The default one-claim limit in characters (setting ``max_memory_chars``).
DEFAULT_MAX_CHARS = 200

_LIST_LINE = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+", re.MULTILINE)
_HEADING = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_SPLIT = "split it into single claims and store each one as its own memory"


@dataclass(frozen=True)
class Claim:
    """A memory to store, checked and normalised when it is made (InputError otherwise).

    ``namespace`` None: the caller's own (``affidavit.access.default_namespace``).
    ``supersedes`` None: nothing named (an opinion then meets a similar live one as a
    conflict); ``()``: keep both. ``thread`` / ``turn`` / ``reply_to``: only for a turn of a
    recorded conversation. ``tags`` and ``supersedes`` may be given as any sequence; they
    are kept as tuples.
    """

    text: str
    source: str
    namespace: str | None = None
    tags: tuple[str, ...] = ()
    discovered: str | None = None
    expires: str | None = None
    importance: float = 0.5
    kind: MemoryKind = MemoryKind.FACT
    supersedes: tuple[str, ...] | None = None
    quarantined: bool = False
    thread: str | None = None
    turn: int | None = None
    reply_to: str | None = None
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        source = self.source
        if not isinstance(source, str) or not source.strip():
            raise InputError(
                "a memory needs a non-empty 'source'",
                "say where it came from, e.g. 'from chat' or 'read from pyproject.toml'",
            )
        if self.kind not in tuple(MemoryKind):
            raise InputError(f"kind must be 'fact' or 'opinion', not {self.kind!r}")
        if self.namespace is not None:
            check_name(self.namespace, "namespace")
        if not isinstance(self.quarantined, bool):
            raise InputError("quarantined must be true or false")
        check_structure({"thread": self.thread, "turn": self.turn, "reply_to": self.reply_to})
        normal = {
            "text": claim_text(self.text),
            "source": source.strip(),
            "tags": _tags(self.tags),
            "discovered": parse_date(self.discovered, "discovered") if self.discovered else None,
            "expires": parse_expires(self.expires) if self.expires else None,
            "importance": _importance(self.importance),
            "supersedes": _supersedes(self.supersedes),
            "evidence": _evidence(self.evidence),
            "kind": MemoryKind(self.kind),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)  # frozen: normalised once, here

    @classmethod
    def from_json(cls, value: Any, where: str = "") -> Claim:
        """A claim from a JSON object (a tool's arguments, an item of a batch); errors start
        with ``where`` (e.g. ``facts[3]: ``)."""
        with located(where):
            if not isinstance(value, Mapping):
                raise InputError("a memory must be an object")
            unknown = sorted(set(value) - FIELDS)
            if unknown:
                raise InputError(
                    f"unknown field {unknown[0]!r}", f"use {', '.join(sorted(FIELDS))}"
                )
            if "text" not in value:
                raise InputError(
                    "a memory needs a non-empty 'text'", "say the one thing worth remembering"
                )
            given = {k: v for k, v in value.items() if v is not None}
            return cls(**{"source": None, "kind": MemoryKind.FACT, **given})

    def data(self, now_iso: str) -> dict[str, Any]:
        """The JSON sealed into the vault for this claim."""
        out: dict[str, Any] = {
            "text": self.text,
            "source": self.source,
            "tags": list(self.tags),
            "importance": self.importance,
            "kind": self.kind,
        }
        if self.discovered:
            out["discovered"] = self.discovered
        if self.expires:
            out["expires"] = self.expires
        if self.kind is MemoryKind.OPINION:
            out["affirmed"] = now_iso
        if self.supersedes:
            out["supersedes"] = list(self.supersedes)
        if self.quarantined:
            out["quarantined"] = True
        if self.evidence:
            out["evidence"] = [item.as_dict() for item in self.evidence]
        out.update(self.structure)
        return out

    @property
    def structure(self) -> dict[str, Any]:
        """``thread`` / ``turn`` / ``reply_to`` when the memory is a turn of a conversation."""
        given = {"thread": self.thread, "turn": self.turn, "reply_to": self.reply_to}
        return {k: v for k, v in given.items() if v is not None}


#: The fields a claim's JSON may have.
FIELDS = frozenset(f.name for f in fields(Claim))


def _evidence(value: Any) -> tuple[Evidence, ...]:
    """Typed evidence items as given, or parsed from their JSON form."""
    if isinstance(value, tuple) and all(isinstance(i, PackCitation | ToolReceipt) for i in value):
        return value
    return parse_evidence(value)


@contextmanager
def located(where: str) -> Iterator[None]:
    """Prefix the InputError raised inside with ``where`` (which item of a batch, which file)."""
    try:
        yield
    except InputError as exc:
        if not where:
            raise
        raise InputError(where + exc.message, exc.hint) from None


def claim_text(text: Any) -> str:
    """One claim's wording, whitespace folded: refuse lists, headings and paragraphs."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("a memory needs a non-empty 'text'", "say the one thing worth remembering")
    text = text.strip()
    if _HEADING.search(text):
        raise InputError("a memory cannot contain a heading", _SPLIT)
    if _LIST_LINE.search(text) and "\n" in text:
        raise InputError("a memory cannot contain a list", _SPLIT)
    if "\n\n" in text.replace("\r", ""):
        raise InputError("a memory cannot contain several paragraphs", _SPLIT)
    return " ".join(text.split())


def check_length(text: str, max_chars: int) -> None:
    """A memory holds one claim of at most ``max_chars`` characters."""
    if len(text) > max_chars:
        raise InputError(
            f"a memory holds one claim of at most {max_chars} characters "
            f"(this one has {len(text)})",
            _SPLIT,
        )


def check_claim(text: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """One claim per memory: refuse lists, headings, paragraphs and over-long text."""
    claim = claim_text(text)
    check_length(claim, max_chars)
    return claim


def _importance(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("importance must be a number from 0 to 1", "e.g. 0.8")
    return min(1.0, max(0.0, float(value)))


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not all(isinstance(t, str) and t.strip() for t in value):
        raise InputError("tags must be a list of non-empty strings")
    return tuple(dict.fromkeys(t.strip().lower() for t in value))


def _supersedes(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InputError("supersedes must be a list of memory ids (or [] to keep both)")
    if not all(isinstance(v, str) and v for v in value):
        raise InputError("supersedes must be a list of memory ids")
    return tuple(value)
