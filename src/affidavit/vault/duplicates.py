"""When two memories say the same thing, so a store can return the one already kept.

A false duplicate loses a fact for good (the store returns the old id and writes nothing),
while a missed duplicate costs one extra row that page diversity keeps from crowding a
search. So the rule is strict (ADR 56). Two texts say the same thing only when

- they have the same words in the same order, ignoring case, punctuation and spacing; or
- they are near-identical by embedding (or, without a model, by word overlap) AND have the
  same content words in the same order: every word except articles and a few fillers,
  with a trailing plural "s" dropped. That one comparison covers every difference that
  makes another fact: a number or identifier ("port 8080" / "port 8081"), a named entity
  ("Alice" / "Carol"), a negation ("is" / "is not"), a direction ("from disk to memory" /
  "from memory to disk"), swapped roles ("Alice reports to Bob" / "Bob reports to Alice")
  and swapped numbers ("writer 1 note 2" / "writer 2 note 1"). An embedding cannot see
  most of these: MiniLM puts the swapped pairs at cosine 0.986-0.996 and the negation at
  0.959, above the 0.95 that it gives "Deploys run every Friday afternoon" said twice with
  other case and punctuation (0.931), which the first rule catches.

A correction is not a duplicate either: it is stored with ``supersedes``.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+")
#: Words whose presence or absence does not change what a memory claims. Deliberately tiny:
#: prepositions, conjunctions, modals and tense all change a fact ("to" / "from", "and" /
#: "or", "is" / "was"), so they count.
NEUTRAL_WORDS = frozenset({"a", "an", "the", "also", "just", "really", "very", "actually"})


def wording(text: str) -> list[str]:
    """A text's words in order, case, punctuation and spacing ignored (NFKC, casefolded)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _content(text: str) -> list[str]:
    return [_singular(w) for w in wording(text) if w not in NEUTRAL_WORDS]


def _singular(word: str) -> str:
    """``word`` without a trailing plural or third-person "s" ("deploys" -> "deploy")."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isalpha():
        return word[:-1]
    return word


def same_wording(a: str, b: str) -> bool:
    """The same words in the same order: a restatement (an opinion's re-affirmation)."""
    return wording(a) == wording(b)


def says_the_same(a: str, b: str, *, close: bool) -> bool:
    """Whether ``b`` says what ``a`` says; ``close``: near-identical by embedding or overlap."""
    return same_wording(a, b) or (close and _content(a) == _content(b))
