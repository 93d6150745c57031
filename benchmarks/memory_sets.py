"""The question sets ``benchmarks/agent_memory.py`` runs on, loaded into one shape and checked.

Three sets, one shape (:class:`QuestionSet`: memories in saving order, questions with their
gold memories, each question's cluster and half):

- ``needs`` (default): ``benchmarks/needs/``, written for this benchmark from what an agent
  needs weeks later (``benchmarks/needs/README.md``). Families are the clusters; each
  family's half is fixed in ``families.json``. :func:`check_needs` validates it.
- ``dev``: the development set written outside the team, read in place from
  ``../shared/data/agent-memory-dev/`` (never copied into the repository). It has no
  families and no halves; its clusters are the questions linked by a shared gold memory.
- ``synthetic``: the corpus ``benchmarks/agent_memory_data.py`` generates from a seed,
  clustered by template family, with its own halves. It has no question kinds: a question
  whose answer corrected an older fact is ``current-after-correction``, every other one
  ``paraphrase``.

The lexical overlap of a question is the number of :func:`content_words` it shares with the
union of its gold memories, reported in the buckets ``0``, ``1`` and ``2+``. The same
function checks the needs set (at least half of its questions must share no content word)
and sorts questions into buckets in the report, so the two never disagree.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NEEDS = HERE / "needs"
#: The development set: ``../shared/data/agent-memory-dev`` beside the repository (where CI
#: lays ``shared/``), or beside a folder of worktrees holding it.
DEV = next(
    (p / "shared/data/agent-memory-dev" for p in HERE.parents if (p / "shared/data").is_dir()),
    HERE.parent.parent / "shared/data/agent-memory-dev",
)

KINDS = (
    "exact-term",
    "paraphrase",
    "preference",
    "current-after-correction",
    "near-duplicate",
    "multi-fact",
)
BUCKETS = ("0", "1", "2+")
HALVES = ("tune", "heldout")
#: Share of questions (overall and in each half) that must share no content word.
MIN_ZERO_OVERLAP = 0.5
MAX_TEXT = 200

# -- lexical overlap ---------------------------------------------------------------------------

#: Words that carry no topic: articles, pronouns, auxiliaries, prepositions, question words,
#: and the fillers of a spoken question ("now", "again", "please"). Names, ids, numbers and
#: every noun or verb of substance stay content words.
_STOP_TEXT = """
    a an the this that these those it its itself there here
    i me my mine myself we us our ours you your yours he him his she her hers they them their
    theirs who whom whose what which when where why how whats wheres whos hows
    am is are was were be been being do does did done doing have has had having
    can could will would shall should may might must ought cant wont dont doesnt didnt isnt
    arent wasnt werent havent hasnt hadnt couldnt wouldnt shouldnt im ive youre theyre
    of in on at by for from to into onto out off over under up down with without about
    above below between through during before after since until till via per than then
    and or nor but so if because as while either neither both each every all any some
    no not only just also too very more most much many few such same other another own
    again ever still yet now currently nowadays today anymore already
    please thanks ok okay let lets get gets got go goes going went tell know want need
    s t d ll re ve m thing things stuff one ones someone something anything anyone
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
#: Suffixes stripped once, the first that leaves a stem of at least three letters.
SUFFIXES = (
    ("ations", "ate"),
    ("ation", "ate"),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("er", ""),
    ("ed", ""),
    ("ly", ""),
)
_SIBILANT_PLURAL = re.compile(r"(?:[sxz]|ch|sh)es$")
_TOKEN = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A light stem: one suffix off, a plural ``-s`` off, a final ``e`` and a doubled final
    consonant dropped ("deployed" / "deploys" -> "deploy", "releases" -> "releas")."""
    for suffix, replacement in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    else:
        if _SIBILANT_PLURAL.search(word) and len(word) > 5:
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou0123456789":
        word = word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The stems of a text's content words: lower-cased, split on anything but letters and
    digits (apostrophes vanish first, so "don't" is one word), one-character tokens and stop
    words dropped (a word whose stem is a stop word too: "needs" as well as "need")."""
    flat = text.lower().replace("'", "").replace("\u2019", "")
    words = (t for t in _TOKEN.findall(flat) if len(t) > 1 and t not in STOP_WORDS)
    return {s for s in map(stem, words) if s not in STOP_WORDS}


def shared_words(question: str, gold_texts: Iterable[str]) -> set[str]:
    """The content words a question shares with the union of its gold memories."""
    gold: set[str] = set()
    for text in gold_texts:
        gold |= content_words(text)
    return content_words(question) & gold


def bucket(shared: int) -> str:
    """The overlap bucket of a number of shared content words: ``0``, ``1`` or ``2+``."""
    return "0" if shared == 0 else "1" if shared == 1 else "2+"


# -- the common shape --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """One memory to store, in saving order; ``supersedes`` is the older memory it corrects."""

    id: str
    text: str
    source: str
    discovered: str | None
    supersedes: str | None


@dataclass(frozen=True)
class Question:
    """A question, the memories that answer it, and what its answer corrected.

    ``cluster`` groups questions that are not independent (one family, or one gold memory):
    every interval resamples clusters whole. ``half`` is ``tune`` or ``heldout`` (``None``
    for a set without halves). ``shared`` is the count of content words it shares with its
    gold memories.
    """

    id: str
    text: str
    kind: str
    gold: tuple[str, ...]
    superseded: tuple[str, ...]
    cluster: str
    half: str | None
    shared: int

    @property
    def bucket(self) -> str:
        return bucket(self.shared)


@dataclass(frozen=True)
class QuestionSet:
    """Memories in saving order and the questions asked of them."""

    name: str
    facts: tuple[Fact, ...]
    questions: tuple[Question, ...]
    fingerprint: str
    has_halves: bool

    def split(self, half: str) -> list[Question]:
        """The questions of one half (``tune``, ``heldout``), or all of them (``all``)."""
        return [q for q in self.questions if half == "all" or q.half == half]


class SetError(ValueError):
    """A question set that cannot be used as it is: what is wrong, one line each."""

    def __init__(self, where: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        shown = "\n".join(f"  {p}" for p in self.problems[:40])
        more = len(self.problems) - 40
        tail = f"\n  ... {more} more" if more > 0 else ""
        super().__init__(f"{where}: {len(self.problems)} problem(s)\n{shown}{tail}")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SetError(str(path), [f"cannot read it: {exc.strerror}"]) from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SetError(str(path), [f"line {n} is not JSON: {exc.msg}"]) from None
        if not isinstance(row, dict):
            raise SetError(str(path), [f"line {n} is not an object"])
        rows.append(row)
    return rows


def _digest(paths: Sequence[Path]) -> str:
    sha = hashlib.sha256()
    for path in paths:
        sha.update(path.read_bytes())
    return sha.hexdigest()[:12]


def _chain(by_id: Mapping[str, Mapping[str, Any]], fid: str) -> list[str]:
    """The older memories a memory corrects, nearest first (``supersedes`` followed back)."""
    out: list[str] = []
    current = by_id[fid].get("supersedes")
    while isinstance(current, str) and current in by_id and current not in out:
        out.append(current)
        current = by_id[current].get("supersedes")
    return out


def _question(
    row: Mapping[str, Any],
    kind: str,
    cluster: str,
    half: str | None,
    memories: Mapping[str, Mapping[str, Any]],
) -> Question:
    """A question row of a JSONL set, with its overlap counted against its gold memories."""
    texts = (str(memories[g]["text"]) for g in row["gold"])
    return Question(
        id=row["id"],
        text=row["text"],
        kind=kind,
        gold=tuple(row["gold"]),
        superseded=tuple(row["superseded"]),
        cluster=cluster,
        half=half,
        shared=len(shared_words(row["text"], texts)),
    )


# -- the needs set -----------------------------------------------------------------------------

MEMORY_FIELDS = {"id", "family", "text", "source", "discovered", "supersedes"}
QUESTION_FIELDS = {"id", "family", "text", "kind", "gold", "superseded"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _check_memories(memories: Sequence[Mapping[str, Any]], problems: list[str]) -> None:
    seen: dict[str, int] = {}
    for n, m in enumerate(memories):
        mid = m.get("id")
        if set(m) != MEMORY_FIELDS:
            problems.append(f"memory {mid}: fields {sorted(m)}, want {sorted(MEMORY_FIELDS)}")
            continue
        if not isinstance(mid, str) or mid in seen:
            problems.append(f"memory {mid!r}: the id is missing or used twice")
            continue
        seen[mid] = n
        text, source, date = m["text"], m["source"], m["discovered"]
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            problems.append(f"memory {mid}: the text is empty or over {MAX_TEXT} characters")
        if not isinstance(source, str) or not source.strip():
            problems.append(f"memory {mid}: no source")
        if date is not None and not (isinstance(date, str) and _DATE.fullmatch(date)):
            problems.append(f"memory {mid}: discovered {date!r} is not YYYY-MM-DD or null")
        old = m["supersedes"]
        if old is None:
            continue
        if old not in seen:
            problems.append(f"memory {mid}: supersedes {old!r}, which is not saved before it")
        elif memories[seen[old]]["family"] != m["family"]:
            problems.append(f"memory {mid}: supersedes {old}, a memory of another family")
    texts = Counter(str(m.get("text")) for m in memories)
    problems += [f"two memories read the same: {t!r}" for t, c in texts.items() if c > 1]


def _check_question(
    q: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], problems: list[str]
) -> None:
    qid, kind = q["id"], q["kind"]
    gold, stale = q["gold"], q["superseded"]
    if kind not in KINDS:
        problems.append(f"question {qid}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if not isinstance(gold, list) or not gold or not isinstance(stale, list):
        problems.append(f"question {qid}: gold must be a non-empty list, superseded a list")
        return
    unknown = [i for i in gold + stale if i not in by_id]
    if unknown:
        problems.append(f"question {qid}: unknown memory ids {unknown}")
        return
    if any(by_id[g]["family"] != q["family"] for g in gold):
        problems.append(f"question {qid}: a gold memory belongs to another family")
    replaced = {m["supersedes"] for m in by_id.values() if m["supersedes"]}
    if set(gold) & replaced:
        problems.append(f"question {qid}: a gold memory was corrected by a later one")
    chain = {old for g in gold for old in _chain(by_id, g)}
    if kind == "current-after-correction" and (not chain or set(stale) != chain):
        problems.append(f"question {qid}: superseded {stale} must be its gold's chain {chain}")
    if not set(stale) <= chain:
        problems.append(f"question {qid}: superseded {stale} are not in its gold's chain")
    if kind == "multi-fact" and not 2 <= len(gold) <= 3:
        problems.append(f"question {qid}: a multi-fact question needs 2-3 gold memories")
    if kind != "multi-fact" and len(gold) != 1:
        problems.append(f"question {qid}: a {kind} question has exactly one gold memory")


def check_needs(
    memories: Sequence[Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    families: Mapping[str, Any],
) -> list[str]:
    """Every problem of the needs set (empty: usable): schema, ids, kinds, halves, pairs and
    the share of questions that share no content word with their gold memories."""
    problems: list[str] = []
    _check_memories(memories, problems)
    by_id = {m["id"]: m for m in memories if set(m) == MEMORY_FIELDS}
    halves = families.get("halves")
    if not isinstance(halves, dict) or set(halves.values()) - set(HALVES):
        return [*problems, "families.json: 'halves' must map each family to tune or heldout"]
    for m in by_id.values():
        if m["family"] not in halves and m["family"] != "noise":
            problems.append(f"memory {m['id']}: family {m['family']!r} has no half")
    seen: set[str] = set()
    kinds: dict[str, Counter[str]] = {h: Counter() for h in HALVES}
    zero: dict[str, list[bool]] = {h: [] for h in HALVES}
    for q in questions:
        if set(q) != QUESTION_FIELDS:
            problems.append(f"question {q.get('id')}: fields {sorted(q)}")
            continue
        if q["id"] in seen:
            problems.append(f"question {q['id']}: the id is used twice")
        seen.add(q["id"])
        if q["family"] not in halves:
            problems.append(f"question {q['id']}: family {q['family']!r} has no half")
            continue
        before = len(problems)
        _check_question(q, by_id, problems)
        if len(problems) == before:
            half = halves[q["family"]]
            kinds[half][q["kind"]] += 1
            gold_texts = (by_id[g]["text"] for g in q["gold"])
            zero[half].append(not shared_words(q["text"], gold_texts))
    texts = Counter(str(q.get("text")).lower() for q in questions)
    problems += [f"two questions read the same: {t!r}" for t, c in texts.items() if c > 1]
    for half in HALVES:
        missing = [k for k in KINDS if not kinds[half][k]]
        if missing:
            problems.append(f"the {half} half has no {', '.join(missing)} question")
    flags = zero["tune"] + zero["heldout"]
    for label, values in (("all questions", flags), *((f"the {h} half", zero[h]) for h in HALVES)):
        if values and sum(values) < MIN_ZERO_OVERLAP * len(values):
            problems.append(
                f"{label}: only {sum(values)} of {len(values)} share no content word "
                f"(at least {MIN_ZERO_OVERLAP:.0%} must)"
            )
    for pair in families.get("near_duplicate_pairs", []):
        if not (isinstance(pair, list) and len(pair) == 2 and all(i in by_id for i in pair)):
            problems.append(f"families.json: near-duplicate pair {pair!r} names unknown ids")
    paired = {i for pair in families.get("near_duplicate_pairs", []) for i in pair}
    for q in questions:
        if q.get("kind") == "near-duplicate" and not set(q.get("gold", [])) & paired:
            problems.append(f"question {q.get('id')}: near-duplicate, but its gold is in no pair")
    return problems


def load_needs(folder: Path = NEEDS) -> QuestionSet:
    """The needs set, checked (:class:`SetError` lists every problem)."""
    paths = [folder / n for n in ("memories.jsonl", "questions.jsonl", "families.json")]
    memories, questions = _jsonl(paths[0]), _jsonl(paths[1])
    try:
        families = json.loads(paths[2].read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SetError(str(paths[2]), [f"cannot read it: {exc}"]) from None
    problems = check_needs(memories, questions, families)
    if problems:
        raise SetError(f"the needs set in {folder}", problems)
    by_id = {m["id"]: m for m in memories}
    return QuestionSet(
        name="needs",
        facts=tuple(
            Fact(m["id"], m["text"], m["source"], m["discovered"], m["supersedes"])
            for m in memories
        ),
        questions=tuple(
            _question(q, q["kind"], q["family"], families["halves"][q["family"]], by_id)
            for q in questions
        ),
        fingerprint=_digest(paths),
        has_halves=True,
    )


# -- the development set -----------------------------------------------------------------------


def _gold_clusters(questions: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Question id -> cluster: questions joined by any gold memory they share."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for q in questions:
        first = root(q["gold"][0])
        for other in q["gold"][1:]:
            parent[root(other)] = first
    return {q["id"]: root(q["gold"][0]) for q in questions}


def load_dev(folder: Path = DEV) -> QuestionSet:
    """The development set, read in place; a missing folder or a broken row is a SetError."""
    if not folder.is_dir():
        raise SetError(
            str(folder),
            ["the development set is not there (it sits beside the repository in shared/data)"],
        )
    paths = [folder / "facts.jsonl", folder / "questions.jsonl"]
    facts, questions = _jsonl(paths[0]), _jsonl(paths[1])
    problems: list[str] = []
    by_id = {f.get("id"): f for f in facts}
    for f in facts:
        if not {"id", "text", "source"} <= set(f):
            problems.append(f"fact {f.get('id')}: needs id, text and source")
    for q in questions:
        if not {"id", "text", "category", "gold", "superseded"} <= set(q):
            problems.append(f"question {q.get('id')}: needs id, text, category, gold, superseded")
        elif q["category"] not in KINDS or not q["gold"]:
            problems.append(f"question {q['id']}: unknown category or no gold memory")
        elif any(i not in by_id for i in [*q["gold"], *q["superseded"]]):
            problems.append(f"question {q['id']}: names a memory id the facts do not hold")
    if problems:
        raise SetError(f"the development set in {folder}", problems)
    clusters = _gold_clusters(questions)
    return QuestionSet(
        name="dev",
        facts=tuple(
            Fact(f["id"], f["text"], f["source"], f.get("discovered"), f.get("supersedes"))
            for f in facts
        ),
        questions=tuple(
            _question(q, q["category"], clusters[q["id"]], None, by_id) for q in questions
        ),
        fingerprint=_digest(paths),
        has_halves=False,
    )


# -- the synthetic corpus ----------------------------------------------------------------------


def load_synthetic(seed: int | None = None) -> QuestionSet:
    """The generated corpus of ``benchmarks/agent_memory_data.py`` for a seed."""
    from agent_memory_data import SEED, generate

    corpus = generate(SEED if seed is None else seed)
    texts = {f.id: f.text for f in corpus.facts}
    return QuestionSet(
        name="synthetic",
        facts=tuple(Fact(f.id, f.text, f.source, f.discovered, f.supersedes) for f in corpus.facts),
        questions=tuple(
            Question(
                id=q.id,
                text=q.text,
                kind="current-after-correction" if q.stale else "paraphrase",
                gold=(q.answer,),
                superseded=(q.stale,) if q.stale else (),
                cluster=q.family,
                half=q.split,
                shared=len(shared_words(q.text, [texts[q.answer]])),
            )
            for q in corpus.questions
        ),
        fingerprint=corpus.fingerprint(),
        has_halves=True,
    )
