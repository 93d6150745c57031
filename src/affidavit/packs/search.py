"""Search over a verified pack's records: every query word must match, forgivingly.

The reference server needs every exact token. Here a word matches whatever shares its
*normal form*: Unicode NFKC, case-folded, accents removed (``Café`` finds ``cafe``), and for
plain Latin words a light English suffix stripper (``seedlings`` finds ``seedling``,
``watered`` finds ``watering``). It stays an AND of all query words, so results stay precise;
each match says which words in which fields it matched, so a loose match is visible.

The index is built once, when the pack is loaded: an inverted map from normal form to the
records holding it (with occurrence counts) and one precomputed sort rank per record (newest
first, then record id), so a query is a few dict lookups and vector operations.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

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


def _codes(values: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
    """Small integer codes for repeated strings, so a filter is one vector comparison."""
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), np.int32, len(values))
    return table, codes


class PackIndex:
    """The prebuilt search index over one verified pack's records.

    Postings are numpy arrays (record indices ascending, with occurrence counts), so
    intersecting words, applying filters and picking the ten best are vector operations; a
    word that appears in every record of a 10,000-record pack costs well under a millisecond.
    """

    def __init__(self, records: Sequence[dict[str, Any]]) -> None:
        """Index ``records`` (already verified, so every date is a valid UTC time)."""
        self._records = tuple(records)
        self._by_id = {record["record_id"]: record for record in self._records}
        size = len(self._records)
        self._speaker_codes, self._speakers = _codes([_fold(r["speaker"]) for r in records])
        self._category_codes, self._categories = _codes([_fold(r["category"]) for r in records])
        first = [utc_key(r["date_first_utc"]) for r in self._records]
        last = [utc_key(r["date_last_utc"]) for r in self._records]
        self._date_keys = sorted(set(first) | set(last))
        position = {key: n for n, key in enumerate(self._date_keys)}
        self._first = np.fromiter((position[k] for k in first), np.int32, size)
        self._last = np.fromiter((position[k] for k in last), np.int32, size)
        by_id = sorted(range(size), key=lambda i: self._records[i]["record_id"])
        order = sorted(by_id, key=lambda i: last[i], reverse=True)  # stable: ties stay by id
        self._rank = np.empty(size, np.int64)
        self._rank[order] = np.arange(size, dtype=np.int64)
        building: dict[str, tuple[list[int], list[int]]] = {}
        for index, record in enumerate(self._records):
            text = "\n".join(text for _field, text in _record_fields(record))
            for form, count in Counter(map(normal_form, words(text))).items():
                indices, occurrences = building.setdefault(form, ([], []))
                indices.append(index)
                occurrences.append(count)
        self._postings = {
            form: (np.array(indices, np.int32), np.array(occurrences, np.int64))
            for form, (indices, occurrences) in building.items()
        }

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
        lists = sorted((p for p in postings if p is not None), key=lambda p: len(p[0]))
        hits, counts = lists[0]
        for indices, occurrences in lists[1:]:
            hits, mine, theirs = np.intersect1d(
                hits, indices, assume_unique=True, return_indices=True
            )
            counts = counts[mine] + occurrences[theirs]
        keep = self._filter_mask(hits, filters)
        if keep is not None:
            hits, counts = hits[keep], counts[keep]
        # Most occurrences first, then newest, then record id (both folded into the rank).
        order_key = self._rank[hits] - counts * len(self._records)
        if len(hits) > MAX_MATCHES:
            top = np.argpartition(order_key, MAX_MATCHES - 1)[:MAX_MATCHES]
        else:
            top = np.arange(len(hits))
        best = hits[top[np.argsort(order_key[top], kind="stable")]].tolist()
        matches = [self._match(self._records[i], forms) for i in best]
        return SearchResult(matches=matches, matched=len(hits))

    def _filter_mask(self, hits: np.ndarray, filters: Filters) -> np.ndarray | None:
        """Which of ``hits`` pass every given filter, or None when no filter is given."""
        keep: np.ndarray | None = None

        def narrow(condition: np.ndarray) -> None:
            nonlocal keep
            keep = condition if keep is None else keep & condition

        for value, table, codes in (
            (filters.speaker, self._speaker_codes, self._speakers),
            (filters.category, self._category_codes, self._categories),
        ):
            if value is not None:
                narrow(codes[hits] == table.get(_fold(value), -1))
        if filters.since is not None:
            narrow(self._last[hits] >= bisect.bisect_left(self._date_keys, filters.since))
        if filters.until is not None:
            narrow(self._first[hits] < bisect.bisect_right(self._date_keys, filters.until))
        return keep

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
