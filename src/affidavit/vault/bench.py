"""The retrieval benchmark runner behind ``affidavit bench retrieval``.

Input, one JSON object per line:

- corpus rows ``{"collection", "id", "text", "date"?, "group"?, "thread"?, "turn"?,
  "reply_to"?}`` (the last three: conversation structure, passed to the import as given)
- query rows ``{"collection", "id", "text", "relevant": [ids], "category"?}``

Each collection gets a fresh vault in a temporary directory (a throwaway vault, so its key
slot uses the minimum KDF cost through the explicit ``kdf`` argument), its rows imported as
memories through :meth:`Memory.import_rows` (the product's own path: long rows get window
embeddings, authoring limits do not apply), and each query answered by the product's own
ranking. A plain BM25 over the same rows runs in the same process as the baseline, so the
two columns are measured under the same load.

Metrics (overall and per category): ``recall@k`` (share of the relevant ids in the top k,
averaged over queries), ``hit@k`` (any relevant id in the top k), ``group_hit@k`` (a
relevant row's group, e.g. its session, among the groups of the top k), ``mrr`` (reciprocal
rank of the first relevant id within the largest k) and ``ms_per_query``. The report also
keeps every query's values (``_per_query``), for paired comparisons between runs.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError, NotFoundError

CORPUS_FIELDS: Mapping[str, type] = {"collection": str, "id": str, "text": str}
QUERY_FIELDS: Mapping[str, type] = {"collection": str, "id": str, "text": str, "relevant": list}
#: Optional corpus fields handed to the import unchanged: a conversation's structure.
STRUCTURE_FIELDS = ("thread", "turn", "reply_to")


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


def run(
    corpus: Sequence[dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    *,
    ks: Sequence[int] = (5, 10),
    scored_categories: Iterable[str] | None = None,
    progress: Callable[[int], None] | None = None,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Import each collection into a fresh vault, answer every query, return the report."""
    from affidavit.vault import KdfParams, Vault
    from affidavit.vault.recall import Memory

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise InputError("--k must be a positive whole number")
    by_collection: dict[str, list[dict[str, Any]]] = {}
    groups: dict[str, dict[str, str]] = {}
    for row in corpus:
        by_collection.setdefault(row["collection"], []).append(row)
        groups.setdefault(row["collection"], {})[row["id"]] = str(row.get("group", row["id"]))
    for q in queries:
        if q["collection"] not in by_collection:
            raise InputError(
                f"query {q['id']} names collection {q['collection']!r}, which has no corpus rows"
            )
    scores = _Scores(ks, set(scored_categories) if scored_categories is not None else None)
    skipped = 0
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-", dir=workdir) as tmp:
        for n, (name, rows) in enumerate(by_collection.items()):
            vault = Vault.create(
                Path(tmp) / f"c{n}", secrets.token_urlsafe(16), kdf=KdfParams.minimum()
            )
            try:
                memory = Memory(vault)
                memory.import_rows([_import_row(r) for r in rows], progress=progress)
                known = groups[name]
                for q in (q for q in queries if q["collection"] == name):
                    relevant = {r for r in q["relevant"] if r in known}
                    if not relevant:
                        skipped += 1
                        continue
                    category = str(q.get("category", "all"))
                    t0 = time.perf_counter()
                    ranked = memory.ranked_ids(q["text"], ks[-1])
                    t1 = time.perf_counter()
                    baseline = memory.index.bm25(q["text"], ks[-1])
                    t2 = time.perf_counter()
                    scores.add(
                        "system", category, q["id"], ranked, relevant, known, (t1 - t0) * 1000
                    )
                    scores.add(
                        "bm25", category, q["id"], baseline, relevant, known, (t2 - t1) * 1000
                    )
                    scores.counts[category] = scores.counts.get(category, 0) + 1
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
        "_skipped": skipped,
    }


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
