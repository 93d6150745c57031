"""The store decision: store a new claim, return the duplicate, re-affirm, or report a conflict.

A claim (:mod:`.claims`) is compared with the live memories nearest to it in its place (the
namespace, the kind and, for a turn of a conversation, its thread and turn: two turns that
say "Yes." are two turns). :func:`decide` then says what the store does:

- a fact that says what a nearby memory says is a *duplicate*: its id is returned and nothing
  is written;
- an opinion restated word for word *re-affirms* the live one (its date is refreshed);
- an opinion close to another live opinion, with no ``supersedes`` given, is a *conflict*:
  nothing is written, the rivals are returned, and the agent resends with ``supersedes``;
- anything else is stored. A correction is not a duplicate either: it names what it
  supersedes, and the superseded memories are left out of the comparison.

When two memories say the same thing:

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
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from affidavit.recall.claims import Claim
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.ranking import RecallIndex, params
from affidavit.recall.ranking.channels import query_terms
from affidavit.recall.wire import StoreStatus
from affidavit.vault import VaultItem

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

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


@dataclass(frozen=True)
class Decision:
    """What a store does instead of writing a new memory.

    ``items``: the live memory that already says it (duplicate, re-affirmed), or every live
    opinion it conflicts with (conflict).
    """

    status: StoreStatus
    items: tuple[VaultItem, ...]


def decide(
    claim: Claim, near: Sequence[tuple[float, VaultItem]], *, semantic: bool
) -> Decision | None:
    """Duplicate, re-affirmation or opinion conflict among ``near`` (:func:`nearest`);
    ``None`` means store it. ``semantic``: the similarities are cosines, not word overlap."""
    near = [(sim, item) for sim, item in near if item.id not in (claim.supersedes or ())]
    if claim.kind is MemoryKind.OPINION:
        # An embedding barely tells "tabs over spaces" from "spaces over tabs": only a
        # word-for-word restatement re-affirms; anything else similar is a conflict.
        same = [item for _, item in near if same_wording(item.data["text"], claim.text)]
        if same:
            return Decision(StoreStatus.REAFFIRMED, (same[0],))
    else:
        bar = params.DUPLICATE_COSINE if semantic else params.DUPLICATE_JACCARD
        same = [
            item
            for sim, item in near
            if says_the_same(item.data["text"], claim.text, close=sim >= bar)
        ]
        if same:
            return Decision(StoreStatus.DUPLICATE, (same[0],))
    if claim.kind is MemoryKind.OPINION and claim.supersedes is None:
        bar = params.OPINION_CONFLICT_COSINE if semantic else params.OPINION_CONFLICT_JACCARD
        rivals = tuple(item for sim, item in near if sim >= bar)
        if rivals:
            return Decision(StoreStatus.CONFLICT, rivals)
    return None


def nearest(
    index: RecallIndex, get: Callable[[str], VaultItem], claim: Claim, qv: Any
) -> list[tuple[float, VaultItem]]:
    """Live memories in the claim's place among its SIMILAR_POOL nearest in ``index``.

    Each with its similarity: the best-window cosine to the claim's first window ``qv``, or
    without a model (``qv`` None) the overlap of informative words (Jaccard); most similar
    first. ``get`` reads a memory by id (the vault).
    """
    if qv is not None:
        scored = index.vector.search(qv, params.SIMILAR_POOL, centred=False)
    else:
        scored = {
            slot: _jaccard(claim.text, entry.text)
            for slot, entry in index.lexical_candidates(claim.text, params.SIMILAR_POOL)
        }
    found: list[tuple[float, VaultItem]] = []
    for slot, sim in scored.items():
        entry = index.entry_at(slot)
        if entry is None:
            continue
        if (entry.namespace, entry.kind, entry.thread, entry.turn) == _place(claim):
            found.append((sim, get(entry.id)))
    found.sort(key=lambda pair: -pair[0])
    return found


#: From this many claims, a batch looks up word-for-word repeats of live memories by key first
#: (one pass over the index) instead of a similarity search per claim: a re-import of 10,000
#: notes would otherwise pay 10,000 searches to learn that each is already there.
WORDED_FROM = 64


def worded_index(index: RecallIndex) -> dict[tuple[Any, ...], str]:
    """Each live memory's id by its place and exact wording (see :func:`worded_duplicate`)."""
    return {
        (e.namespace, e.kind, e.thread, e.turn, *wording(e.text)): e.id
        for e in index.by_slot.values()
    }


def worded_duplicate(claim: Claim, worded: dict[tuple[Any, ...], str]) -> str | None:
    """The live fact that says ``claim`` word for word, in its place: the duplicate that
    :func:`decide` would find among the nearest (an opinion re-affirms instead, and a
    correction compares without what it supersedes, so both take the full path)."""
    if claim.kind is not MemoryKind.FACT or claim.supersedes:
        return None
    return worded.get((*_place(claim), *wording(claim.text)))


class BatchRepeats:
    """The claims of one batch kept so far, keyed so that a repeat is found without comparing
    every pair (a 10,000-note import would make 50 million comparisons).

    The store-time rule (:func:`says_the_same`) needs the same words in order, or the same
    content words in order and closeness: both are exact keys, so only claims sharing a key
    are compared, and the answer is the one the pairwise rule gives.
    """

    def __init__(self, vectors: Mapping[int, npt.NDArray[np.float32]] | None) -> None:
        self._vectors = vectors
        self._worded: dict[tuple[Any, ...], int] = {}
        self._contents: dict[tuple[Any, ...], list[tuple[int, Claim]]] = {}

    def find(self, claim: Claim, at: int) -> int | None:
        """The index of an earlier kept claim that says what ``claim`` (at ``at``) says."""
        place = _place(claim)
        same = self._worded.get((place, *wording(claim.text)))
        if same is not None or claim.kind is MemoryKind.OPINION:
            return same
        for j, other in self._contents.get((place, *_content(claim.text)), ()):
            if self._close(other, claim, j, at):
                return j
        return None

    def add(self, claim: Claim, at: int) -> None:
        """Keep ``claim`` (at ``at``) as one later claims of the batch may repeat."""
        place = _place(claim)
        self._worded.setdefault((place, *wording(claim.text)), at)
        self._contents.setdefault((place, *_content(claim.text)), []).append((at, claim))

    def _close(self, a: Claim, b: Claim, ia: int, ib: int) -> bool:
        if self._vectors is None:
            return _jaccard(a.text, b.text) >= params.DUPLICATE_JACCARD
        return float((self._vectors[ia] @ self._vectors[ib][0]).max()) >= params.DUPLICATE_COSINE


def _place(claim: Claim) -> tuple[str | None, str, str | None, int | None]:
    """Where a claim can have a duplicate: namespace, kind, and its thread and turn if any."""
    return (claim.namespace, claim.kind, claim.thread, claim.turn)


def _words(text: str) -> set[str]:
    return {t for t in query_terms(text) if t not in params.FUNCTION_WORDS}


def _jaccard(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0
