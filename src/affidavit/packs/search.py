"""Search over a verified pack's records: every query word must match, forgivingly.

The reference server needs every exact token. Here a word matches whatever shares its
*normal form*: Unicode NFKC, case-folded, accents removed (``Café`` finds ``cafe``), and for
plain Latin words a light English suffix stripper (``seedlings`` finds ``seedling``,
``watered`` finds ``watering``). It stays an AND of all query words, so results stay precise;
each match says which words in which fields it matched, so a loose match is visible.

The index is built once, when the pack is loaded: an inverted map from normal form to
``{record index: occurrences}`` and one precomputed sort rank per record (newest first, then
record id), so a query is a few dict lookups, a set intersection and a top-10 heap.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from affidavit.core.errors import InputError
from affidavit.packs.format import utc_key

MAX_QUERY_CHARS = 512
MAX_TERMS = 32
MAX_MATCHES = 10

_WORD = re.compile(r"[^\W_]+")
_LATIN_WORD = re.compile(r"[a-z]+")
_VOWELS = frozenset("aeiou")
_MIN_STEM = 3


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """Case-fold and strip accents: the spelling-insensitive form of one word."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _is_consonant(word: str, i: int) -> bool:
    if word[i] in _VOWELS:
        return False
    return word[i] != "y" or i == 0 or not _is_consonant(word, i - 1)


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-then-consonant runs ``stem`` has."""
    kinds = "".join("c" if _is_consonant(stem, i) else "v" for i in range(len(stem)))
    return len(re.findall(r"v+c+", kinds))


def _ends_cvc(stem: str) -> bool:
    """``hop``, ``mak``: consonant, vowel, consonant (not w, x, y) at the end."""
    n = len(stem)
    return (
        n >= 3
        and _is_consonant(stem, n - 3)
        and not _is_consonant(stem, n - 2)
        and _is_consonant(stem, n - 1)
        and stem[-1] not in "wxy"
    )


def _after_ed_or_ing(stem: str) -> str:
    """Porter's tidy-up after -ed/-ing: ``relat`` -> ``relate``, ``runn`` -> ``run``,
    ``hop`` -> ``hope``, so every form of a word lands on one stem."""
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if len(stem) >= 2 and stem[-1] == stem[-2] and _is_consonant(stem, len(stem) - 1):
        return stem if stem[-1] in "lsz" else stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _strip_suffix(word: str) -> str:
    """A light English stemmer (Porter's plural and -ed/-ing steps, plus -ly)."""
    if len(word) <= _MIN_STEM:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ing", "ed"):
        stem = word[: -len(suffix)]
        if (
            word.endswith(suffix)
            and len(stem) >= _MIN_STEM
            and any(not _is_consonant(stem, i) for i in range(len(stem)))
        ):
            return _after_ed_or_ing(stem)
    if word.endswith("ly") and len(word) - 2 >= _MIN_STEM:
        return word[:-2]
    return word


@lru_cache(maxsize=65536)
def normal_form(word: str) -> str:
    """The form under which ``word`` is indexed and looked up."""
    folded = _fold(word)
    if _LATIN_WORD.fullmatch(folded):
        return _strip_suffix(folded)
    return folded


def words(text: str) -> list[str]:
    """The words of ``text`` as written (after NFKC), in order."""
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def _record_fields(record: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """The searchable text of a record: statement, topic and every quote."""
    yield "statement", record["statement"]
    yield "topic", record["topic"]
    for citation in record["evidence"]:
        yield "quote", citation["quote"]


@dataclass(frozen=True)
class Filters:
    """Optional restrictions on which records may match; all given ones must hold.

    ``since`` and ``until`` are :func:`~affidavit.packs.format.utc_key` strings: a record
    passes when its date range reaches ``since`` and starts no later than ``until``.
    """

    speaker: str | None = None
    category: str | None = None
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """The matches to return (at most ten) and how many records matched in total."""

    matches: list[dict[str, Any]]
    matched: int


class PackIndex:
    """The prebuilt search index over one verified pack's records."""

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        """Index ``records`` (already verified, so every date is a valid UTC time)."""
        self._records = tuple(records)
        self._by_id = {record["record_id"]: record for record in self._records}
        self._postings: dict[str, dict[int, int]] = {}
        self._speakers = [_fold(r["speaker"]) for r in self._records]
        self._categories = [_fold(r["category"]) for r in self._records]
        self._first = [utc_key(r["date_first_utc"]) for r in self._records]
        self._last = [utc_key(r["date_last_utc"]) for r in self._records]
        by_id = sorted(range(len(self._records)), key=lambda i: self._records[i]["record_id"])
        order = sorted(by_id, key=lambda i: self._last[i], reverse=True)  # stable: ties by id
        self._rank = [0] * len(self._records)
        for position, index in enumerate(order):
            self._rank[index] = position
        for index, record in enumerate(self._records):
            counts: Counter[str] = Counter()
            for _field, text in _record_fields(record):
                counts.update(normal_form(word) for word in words(text))
            for form, count in counts.items():
                self._postings.setdefault(form, {})[index] = count

    def get(self, record_id: str) -> dict[str, Any] | None:
        """The record with ``record_id``, or None."""
        return self._by_id.get(record_id)

    def search(self, query: str, filters: Filters = Filters()) -> SearchResult:
        """Records containing every query word (in normal form), best first, at most ten."""
        terms = query_terms(query)
        forms = {term: normal_form(term) for term in terms}
        postings = [self._postings.get(form) for form in dict.fromkeys(forms.values())]
        if any(posting is None for posting in postings):
            return SearchResult(matches=[], matched=0)
        lists = sorted((p for p in postings if p is not None), key=len)
        candidates = set(lists[0])
        for posting in lists[1:]:
            candidates &= posting.keys()
        hits = [i for i in candidates if self._passes(i, filters)]
        size = len(self._records)
        best = heapq.nsmallest(
            MAX_MATCHES, hits, key=lambda i: -sum(p[i] for p in lists) * size + self._rank[i]
        )
        matches = [self._match(self._records[i], forms) for i in best]
        return SearchResult(matches=matches, matched=len(hits))

    def _passes(self, index: int, filters: Filters) -> bool:
        if filters.speaker is not None and self._speakers[index] != _fold(filters.speaker):
            return False
        if filters.category is not None and self._categories[index] != _fold(filters.category):
            return False
        if filters.since is not None and self._last[index] < filters.since:
            return False
        return filters.until is None or self._first[index] <= filters.until

    @staticmethod
    def _match(record: dict[str, Any], forms: dict[str, str]) -> dict[str, Any]:
        """One search match: the record's evidence as stored, plus why it matched."""
        return {
            "record_id": record["record_id"],
            "role": record["role"],
            "speaker": record["speaker"],
            "category": record["category"],
            "topic": record["topic"],
            "statement": record["statement"],
            "date_first_utc": record["date_first_utc"],
            "date_last_utc": record["date_last_utc"],
            "evidence": [dict(citation) for citation in record["evidence"]],
            "why": explain(record, forms),
        }


def query_terms(query: str) -> list[str]:
    """The unique words of a query, in order; refuses empty or oversized queries."""
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(
            f"query is {len(query)} characters long, more than {MAX_QUERY_CHARS}",
            "shorten it",
        )
    terms = list(dict.fromkeys(_fold(word) for word in words(query)))
    if not terms:
        raise InputError("query has no words to search for", "give at least one word")
    if len(terms) > MAX_TERMS:
        raise InputError(
            f"query has {len(terms)} different words, more than {MAX_TERMS}",
            "search with fewer words",
        )
    return terms


def explain(record: dict[str, Any], forms: dict[str, str]) -> list[dict[str, Any]]:
    """For each query term: the words it matched, in which fields, how often, exactly or not."""
    wanted = set(forms.values())
    spellings: dict[str, set[str]] = defaultdict(set)
    fields: dict[str, set[str]] = defaultdict(set)
    occurrences: Counter[str] = Counter()
    for field, text in _record_fields(record):
        for word in words(text):
            form = normal_form(word)
            if form in wanted:
                spellings[form].add(word)
                fields[form].add(field)
                occurrences[form] += 1
    return [
        {
            "term": term,
            "matched": sorted(spellings[form]),
            "fields": sorted(fields[form]),
            "occurrences": occurrences[form],
            "exact": any(_fold(word) == term for word in spellings[form]),
        }
        for term, form in forms.items()
    ]
