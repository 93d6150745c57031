"""Deterministic claim extraction: which sentences of a message are worth remembering.

No model runs here (nothing to download, the same input always gives the same claims). A
message is cut into sentences (code blocks dropped, each bullet its own sentence), and a
sentence is kept when it states one of four things, tried in this order:

- a **correction**: "No, the staging host is db-2", "Actually we use uv", "X, not Y";
- a **decision**: "We decided to ship on Fridays", "Let's use PostgreSQL 16";
- a **preference**: "I prefer tabs", "Always run ruff before committing", "Never force-push";
- a **fact with a number or a name**: a statement ("is", "uses", "runs", ...) that holds a
  digit, a capitalised name inside the sentence, or an identifier (``file.py``, ``snake_case``).

Questions, narration ("Let me check", "I'll run the tests"), fragments and anything longer than
the store's one-claim limit are left out. The rules favour precision: a missed fact costs
nothing (the user can store it), a noisy candidate costs a review.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """Why a sentence was kept (also the candidate's tag)."""

    CORRECTION = "correction"
    DECISION = "decision"
    PREFERENCE = "preference"
    FACT = "fact"


@dataclass(frozen=True)
class Extracted:
    """One sentence that states one claim, and why it was kept."""

    text: str
    category: Category


MIN_CHARS = 12
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'`(\[]?[A-Z0-9])")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")

_CORRECTION = re.compile(
    r"^(?:no|nope|actually|correction|wrong)\b|"
    r"\b(?:that's|that is|this is|it's|it is) (?:wrong|incorrect|not right|not true)\b|"
    r"\binstead of\b|,\s*not\s+\w+|\bnot\b[^.]{1,40}\bbut\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:we|i|they|the team)\b(?:\s+\w+){0,2}\s+(?:decided|chose|agreed|settled on|"
    r"will use|are going with|went with|switched to|standardi[sz]ed on)\b|"
    r"\blet's (?:use|go with|keep|switch to|stick with|ship)\b|\bthe decision is\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|want|don't like|do not like|"
    r"always|never|usually)\b|"
    r"^(?:please\s+)?(?:always|never|don't|do not)\s+\w+",
    re.IGNORECASE,
)
_STATEMENT = re.compile(
    r"\b(?:is|are|was|were|uses|use|runs|run|lives|has|have|costs|takes|listens|"
    r"starts|ends|owns|leads|reports|needs|requires|means|holds|sits|lies|works|"
    r"deploys|ships|expires)\b",
    re.IGNORECASE,
)
_NAME_INSIDE = re.compile(r"(?<=[\w,;:] )[A-Z][\w-]+")
#: Capitalised only because they open a sentence: not names.
_STARTERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "there",
        "here",
        "we",
        "i",
        "you",
        "they",
        "he",
        "she",
        "our",
        "my",
        "your",
        "their",
        "his",
        "her",
        "some",
        "all",
        "each",
        "every",
        "no",
        "not",
        "if",
        "when",
        "while",
        "after",
        "before",
        "because",
        "so",
        "but",
        "and",
        "or",
        "also",
        "then",
        "today",
        "tomorrow",
        "yesterday",
    ]
)
_IDENTIFIER = re.compile(r"\w+\.(?:py|js|ts|toml|json|yaml|yml|md|sh|go|rs)\b|\b[a-z]+_[a-z_]+\b")
_NARRATION = re.compile(
    r"^(?:i'll|i will|i'm going to|i am going to|let me|now|next|here|here's|sure|great|ok|"
    r"okay|done|thanks|thank you|perfect|alright|first|then|looking|checking|running)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> Iterator[str]:
    """The sentences of a message: code blocks and headings dropped, a bullet on its own."""
    for line in _FENCE.sub("\n", text).splitlines():
        if not line.strip() or _HEADING.match(line):
            continue
        line = _EMPHASIS.sub(r"\2", _BULLET.sub("", line)).strip()
        for part in _SPLIT.split(line):
            part = part.strip()
            if part:
                yield part


def classify(sentence: str) -> Category | None:
    """Why ``sentence`` is worth remembering, or None (questions and narration never are)."""
    if len(sentence) < MIN_CHARS or sentence.endswith(("?", ":")) or _NARRATION.match(sentence):
        return None
    if _CORRECTION.search(sentence):
        return Category.CORRECTION
    if _DECISION.search(sentence):
        return Category.DECISION
    if _PREFERENCE.search(sentence):
        return Category.PREFERENCE
    words = sentence.split(maxsplit=1)
    if (
        len(words) == 2
        and _STATEMENT.search(words[1])
        and (
            any(c.isdigit() for c in sentence)
            or _NAME_INSIDE.search(sentence)
            or _leading_name(sentence)
            or _IDENTIFIER.search(sentence)
        )
    ):
        return Category.FACT
    return None


_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|may be|could be|not sure|unsure|i think|"
    r"i guess|i believe|i suppose|i assume|i wonder|i'm not|it seems|seems|kind of|sort of|"
    r"iirc|afaik|roughly|around|about to|for now|for the moment|unless|until)\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(r"^(?:if|when|whenever|once|in case|assuming|suppose)\b", re.IGNORECASE)
#: Kept without review when plainly stated; a correction always waits, since what it replaces
#: is for a person to confirm.
PLAIN_CATEGORIES = frozenset({Category.FACT, Category.PREFERENCE, Category.DECISION})


def plainly_stated(claim: Extracted) -> bool:
    """Whether ``claim`` may be stored without review: a fact, preference or decision said
    outright, with no hedge ("I think", "maybe", "for now"), no condition ("if ...", "unless")
    and no quotation of someone else's words. Favours precision like :func:`classify`: a claim
    that fails waits in review, where it costs a glance; a wrong one stored costs trust."""
    text = claim.text
    return (
        claim.category in PLAIN_CATEGORIES
        and not _HEDGE.search(text)
        and not _CONDITIONAL.match(text)
        and not any(mark in text for mark in ('"', "\u201c", "\u201d"))
    )


def _leading_name(sentence: str) -> bool:
    """Whether the sentence opens with a name ("Alice owns billing"), not a common word."""
    first = sentence.split(maxsplit=1)[0].strip(",;:")
    return first[:1].isupper() and first.isalpha() and first.lower() not in _STARTERS


def extract(text: str, max_chars: int) -> list[Extracted]:
    """Every sentence of ``text`` that states a claim and fits in ``max_chars``, once each."""
    found: dict[str, Extracted] = {}
    for sentence in sentences(text):
        category = classify(sentence)
        if category is not None and len(sentence) <= max_chars:
            found.setdefault(sentence.casefold(), Extracted(sentence, category))
    return list(found.values())
