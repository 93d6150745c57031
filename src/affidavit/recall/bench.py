"""The retrieval benchmark runner behind ``affidavit bench retrieval``.

Input, one JSON object per line:

- corpus rows ``{"collection", "id", "text", "date"?, "group"?, "thread"?, "turn"?,
  "reply_to"?}`` (the last three: conversation structure, passed to the import as given)
- query rows ``{"collection", "id", "text", "relevant": [ids], "category"?}``

Each collection gets a fresh vault in a temporary directory (a throwaway vault, so its key
slot uses the minimum KDF cost through the explicit ``kdf`` argument), its rows imported as
memories through :meth:`Memory.import_rows` (the product's own path: long rows get window
embeddings, authoring limits do not apply), and each query answered by the product's own
ranking. A plain BM25 (:class:`Bm25`) over the same rows runs in the same process as the
baseline, so the two columns are measured under the same load.

Metrics (overall and per category): ``recall@k`` (share of the relevant ids in the top k,
averaged over queries), ``hit@k`` (any relevant id in the top k), ``group_hit@k`` (a
relevant row's group, e.g. its session, among the groups of the top k), ``mrr`` (reciprocal
rank of the first relevant id within the largest k) and ``ms_per_query``. The report also
keeps every query's values (``_per_query``), for paired comparisons between runs.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from affidavit.core.errors import InputError, NotFoundError

if TYPE_CHECKING:
    from affidavit.recall.memory import Memory

CORPUS_FIELDS: Mapping[str, type] = {"collection": str, "id": str, "text": str}
QUERY_FIELDS: Mapping[str, type] = {"collection": str, "id": str, "text": str, "relevant": list}
#: Optional corpus fields handed to the import unchanged: a conversation's structure.
STRUCTURE_FIELDS = ("thread", "turn", "reply_to")


_WORD = re.compile(r"\w+", re.UNICODE)
Id = TypeVar("Id")


class Bm25(Generic[Id]):
    """The keyword baseline: Okapi BM25 over ``(id, text)`` records, in RAM.

    SQLite FTS5's ``bm25()`` (k1 = 1.2, b = 0.75) over an OR of the question's words, over
    unicode61 tokens of the text reduced to inflection stems
    (:func:`~affidavit.recall.ranking.channels.stemmed`), as the product's keyword channel
    reads them: the baseline column of ``affidavit bench retrieval``. With ``porter``,
    FTS5's Porter stemmer reads the plain text instead: what an off-the-shelf keyword memory
    store answers (the baseline of ``benchmarks/agent_memory.py``). Records are numbered in
    the order given, which is how FTS5 breaks a tie between equal scores.
    """

    def __init__(self, records: Sequence[tuple[Id, str]], *, porter: bool = False) -> None:
        from affidavit.recall.ranking.channels import stemmed

        self._ids = [rid for rid, _ in records]
        self._read: Callable[[str], str] = (lambda text: text) if porter else stemmed
        tokenizer = "porter unicode61" if porter else "unicode61"
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            f"CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='{tokenizer} remove_diacritics 2')"
        )
        self._db.executemany(
            "INSERT INTO fts(rowid, body) VALUES (?, ?)",
            [(n, self._read(text)) for n, (_, text) in enumerate(records)],
        )

    def rank(self, question: str, limit: int) -> list[Id]:
        """The ids of the best ``limit`` records for a question, best first."""
        terms = dict.fromkeys(_WORD.findall(question.lower()))
        if not terms:
            return []
        match = " OR ".join('"' + self._read(t).replace('"', '""') + '"' for t in terms)
        rows = self._db.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?", (match, limit)
        )
        return [self._ids[r[0]] for r in rows]


def read_jsonl(path: Path, what: str, required: Mapping[str, type]) -> list[dict[str, Any]]:
    """Read and check a JSONL file; one clear error naming the file and line."""
    if not path.is_file():
        raise NotFoundError(f"{what} file {path} does not exist", "check the path")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}: "
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{where}not valid JSON ({exc.msg})", "one object per line"
                ) from exc
            if not isinstance(row, dict):
                raise InputError(f"{where}each line must be a JSON object")
            for name, kind in required.items():
                if not isinstance(row.get(name), kind) or (kind is str and not row[name]):
                    raise InputError(
                        f"{where}{what} rows need {name!r} ({kind.__name__})",
                        f"each row needs {', '.join(required)}",
                    )
            rows.append(row)
    if not rows:
        raise InputError(f"{path} holds no rows", f"write one {what} row per line")
    return rows


@dataclass
class Tally:
    """Per-query metric values for one system, averaged at the end."""

    ks: Sequence[int]
    values: dict[str, list[float]] = field(default_factory=dict)
    #: Query ids, in the order of every list in ``values``.
    ids: list[str] = field(default_factory=list)

    def add(
        self, qid: str, ranked: list[str], relevant: set[str], groups: dict[str, str], ms: float
    ) -> None:
        self.ids.append(qid)
        rel_groups = {groups.get(r, r) for r in relevant}
        for k in self.ks:
            top = ranked[:k]
            found = len(relevant.intersection(top))
            self.values.setdefault(f"recall@{k}", []).append(found / len(relevant))
            self.values.setdefault(f"hit@{k}", []).append(1.0 if found else 0.0)
            hit_group = bool(rel_groups.intersection(groups.get(r, r) for r in top))
            self.values.setdefault(f"group_hit@{k}", []).append(1.0 if hit_group else 0.0)
        first = next((i for i, r in enumerate(ranked[: max(self.ks)]) if r in relevant), None)
        self.values.setdefault("mrr", []).append(0.0 if first is None else 1.0 / (first + 1))
        self.values.setdefault("ms_per_query", []).append(ms)

    def per_query(self) -> dict[str, dict[str, float]]:
        """Each query's values by metric (``ms_per_query`` left out: it is not paired)."""
        names = [n for n in self.values if n != "ms_per_query"]
        return {qid: {n: self.values[n][i] for n in names} for i, qid in enumerate(self.ids)}

    def summary(self) -> dict[str, float]:
        return {
            name: round(sum(v) / len(v), 4 if name != "ms_per_query" else 2)
            for name, v in self.values.items()
            if v
        }


@dataclass
class _Scores:
    ks: Sequence[int]
    scored: set[str] | None
    overall: dict[str, Tally] = field(default_factory=dict)
    by_category: dict[str, dict[str, Tally]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, system: str, category: str, *args: Any) -> None:
        if self.scored is None or category in self.scored:
            self.overall.setdefault(system, Tally(self.ks)).add(*args)
        cat = self.by_category.setdefault(category, {})
        cat.setdefault(system, Tally(self.ks)).add(*args)


#: ``progress(phase, done, total)``: counts over the whole run, one phase after another per
#: collection ("embedding" and "sealing" count corpus rows, "searching" counts queries).
Progress = Callable[[str, int, int], None]


@dataclass
class _Counter:
    """Counts over the whole run, fed by each collection's import and by the queries."""

    totals: dict[str, int]
    report: Progress | None
    done: dict[str, int] = field(default_factory=dict)

    def within(self) -> Progress:
        """A callback for one collection's ``import_rows``: its counts on top of the run's."""
        start = dict(self.done)

        def tick(phase: str, done: int, _total: int) -> None:
            self.done[phase] = start.get(phase, 0) + done
            self._tell(phase)

        return tick

    def advance(self, phase: str, n: int) -> None:
        self.done[phase] = self.done.get(phase, 0) + n
        self._tell(phase)

    def _tell(self, phase: str) -> None:
        if self.report is not None:
            self.report(phase, self.done[phase], self.totals[phase])


def run(
    corpus: Sequence[dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    *,
    ks: Sequence[int] = (5, 10),
    scored_categories: Iterable[str] | None = None,
    progress: Progress | None = None,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Import each collection into a fresh vault, answer every query, return the report."""
    from affidavit.recall.memory import Memory
    from affidavit.vault import KdfParams, Vault

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise InputError("--k must be a positive whole number")
    by_collection: dict[str, list[dict[str, Any]]] = {}
    groups: dict[str, dict[str, str]] = {}
    for row in corpus:
        by_collection.setdefault(row["collection"], []).append(row)
        groups.setdefault(row["collection"], {})[row["id"]] = str(row.get("group", row["id"]))
    asked: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        if q["collection"] not in by_collection:
            raise InputError(
                f"query {q['id']} names collection {q['collection']!r}, which has no corpus rows"
            )
        asked.setdefault(q["collection"], []).append(q)
    scores = _Scores(ks, set(scored_categories) if scored_categories is not None else None)
    totals = {"embedding": len(corpus), "sealing": len(corpus), "searching": len(queries)}
    counter = _Counter(totals, progress)
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-", dir=workdir) as tmp:
        for n, (name, rows) in enumerate(by_collection.items()):
            vault = Vault.create(
                Path(tmp) / f"c{n}", secrets.token_urlsafe(16), kdf=KdfParams.minimum()
            )
            try:
                memory = Memory(vault)
                memory.import_rows([_import_row(r) for r in rows], progress=counter.within())
                baseline = Bm25([(r["id"], r["text"]) for r in rows])
                _answer(memory, baseline, asked.get(name, []), groups[name], scores, counter)
            finally:
                vault.close()
    if not scores.overall:
        raise InputError("no query had a relevant id present in the corpus", "check the ids")
    report: dict[str, Any] = {
        "system": scores.overall["system"].summary(),
        "bm25": scores.overall["bm25"].summary(),
        "by_category": {
            cat: {s: t.summary() for s, t in systems.items()}
            for cat, systems in sorted(scores.by_category.items())
        },
    }
    overall = len(scores.overall["system"].values["mrr"])
    return report | {
        "_per_query": {s: t.per_query() for s, t in scores.overall.items()},
        "_counts": dict(sorted(scores.counts.items())),
        "_overall": overall,
        "_skipped": len(queries) - sum(scores.counts.values()),
    }


def _answer(
    memory: Memory,
    baseline: Bm25[str],
    queries: Sequence[dict[str, Any]],
    known: dict[str, str],
    scores: _Scores,
    counter: _Counter,
) -> None:
    """Rank one collection's queries with the product and with BM25, and score both.

    The questions are embedded in one batch (what a one-at-a-time search cannot do); each
    query's time is its ranking plus its share of that batch.
    """
    k = scores.ks[-1]
    asked = [q for q in queries if any(r in known for r in q["relevant"])]
    counter.advance("searching", len(queries) - len(asked))
    t0 = time.perf_counter()
    embedder = memory.embedder
    vectors = (
        [w[0] for w in embedder.embed_windows([q["text"] for q in asked])]
        if embedder is not None and asked
        else [None] * len(asked)
    )
    share = (time.perf_counter() - t0) / max(len(asked), 1)
    for q, vector in zip(asked, vectors, strict=True):
        relevant = {r for r in q["relevant"] if r in known}
        category = str(q.get("category", "all"))
        t1 = time.perf_counter()
        ranked = [hit.id for hit in memory.index.search(q["text"], vector, top_k=k)]
        t2 = time.perf_counter()
        keyword = baseline.rank(q["text"], k)
        t3 = time.perf_counter()
        system_ms = (share + t2 - t1) * 1000
        scores.add("system", category, q["id"], ranked, relevant, known, system_ms)
        scores.add("bm25", category, q["id"], keyword, relevant, known, (t3 - t2) * 1000)
        scores.counts[category] = scores.counts.get(category, 0) + 1
        counter.advance("searching", 1)


@contextlib.contextmanager
def progress_bars(console: Any) -> Iterator[Progress]:
    """Rich progress bars on ``console``, one per phase as it starts (for :func:`run`, and for
    ``affidavit import``'s store, which reports its phases the same way)."""
    from rich.progress import Progress as Bars

    with Bars(console=console, transient=True) as bars:
        tasks: dict[str, Any] = {}

        def show(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bars.add_task(phase, total=total)
            bars.update(tasks[phase], completed=done, total=total)

        yield show


def _import_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A corpus row as the import takes it: id, text, date, and any conversation structure."""
    out = {"id": row["id"], "text": row["text"], "date": row.get("date")}
    return out | {name: row[name] for name in STRUCTURE_FIELDS if name in row}


def public(report: dict[str, Any]) -> dict[str, Any]:
    """The report as ``--json`` writes it: system, bm25, by_category."""
    return {k: report[k] for k in ("system", "bm25", "by_category")}


def table(report: dict[str, Any], title: str = "retrieval") -> Any:
    """A rich table: one row per (scope, system), one column per metric."""
    from rich.table import Table

    metrics = list(report["system"])
    out = Table(title=title)
    out.add_column("scope")
    out.add_column("system")
    out.add_column("queries", justify="right")
    for m in metrics:
        out.add_column(m, justify="right")
    counts = report.get("_counts", {})
    scopes = [("overall", report, report.get("_overall", 0))]
    scopes += [(f"category {c}", v, counts.get(c, 0)) for c, v in report["by_category"].items()]
    for scope, block, n in scopes:
        for system in ("system", "bm25"):
            row = block.get(system, {})
            label = "affidavit" if system == "system" else "bm25"
            out.add_row(scope, label, str(n), *(f"{row.get(m, 0):g}" for m in metrics))
    return out
