"""Recall commands: search, recent, link, relations, unlink, expire, and ``bench retrieval``.

Each body imports the recall layer lazily (it pulls in numpy and onnxruntime), opens the
vault through :func:`affidavit.cli.vault.open_vault` (same unlock rules as every vault
command) and prints a readable table, or the API's JSON with ``--json``.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from affidavit.cli.output import print_json, shown, stdout, warn

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from affidavit.recall import Memory
    from affidavit.vault import Vault

JSON_OPT = typer.Option(False, "--json", help="Print the result as JSON.")

bench_app = typer.Typer(
    name="bench",
    help="Reproducible benchmarks of this installation.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@contextmanager
def _memory() -> Iterator[Memory]:
    from affidavit.cli.vault import open_vault
    from affidavit.recall import Memory

    vault = open_vault()
    try:
        yield Memory(vault)
    finally:
        vault.close()


def _memories_table(rows: Sequence[Mapping[str, Any]], *, scored: bool) -> None:
    from rich.table import Table

    table = Table(show_lines=False)
    if scored:
        table.add_column("score", justify="right")
    for name in ("id", "memory", "source", "date", "tags"):
        table.add_column(name, overflow="fold")
    for r in rows:
        text = r["text"] + (f"  [{r['warning']}]" if r.get("warning") else "")
        if r.get("superseded_by"):
            text += f"  (superseded by {r['superseded_by']})"
        date = r.get("discovered") or r["saved_at"][:10]
        cells = [r["id"], text, r.get("source") or "", date, ", ".join(r.get("tags", []))]
        table.add_row(*([f"{r['score']:.3f}"] if scored else []), *map(shown, cells))
    stdout.print(table)


def store_memory(vault: Vault, fields: dict[str, Any], *, as_json: bool) -> None:
    """The body of ``affidavit store``: validate, embed, decide, seal; then close the vault.

    Prints the stored record (``--json``: the record plus ``status`` and ``superseded``), or
    its id. A similar live opinion stores nothing: its records are shown and the command
    fails with a ConflictError that says how to resend.
    """
    from affidavit.core.errors import ConflictError
    from affidavit.recall import Memory

    try:
        result = Memory(vault).store(**fields)
        record = vault.get(result["id"]).as_dict() if result["id"] else {}
    finally:
        vault.close()
    if result["status"] == "conflict":
        if as_json:
            print_json(result)
        else:
            _memories_table(result["conflicts"], scored=False)
        ids = ", ".join(c["id"] for c in result["conflicts"])
        raise ConflictError(
            f"a similar live opinion exists ({ids}); nothing was stored",
            "resend with --supersedes ID to replace it, or --keep-both to keep both",
        )
    if as_json:
        print_json({**record, "status": result["status"], "superseded": result["superseded"]})
        return
    stdout.print(result["id"], markup=False)
    if result["status"] != "stored":
        warn(f"{result['status']}: an equivalent memory was already stored under this id")


def search(
    query: str = typer.Argument(..., help="The question, in your own words."),
    namespace: list[str] = typer.Option([], "--namespace", help="Only these namespaces."),  # noqa: B008
    tag: list[str] = typer.Option([], "--tag", help="Only memories with one of these tags."),  # noqa: B008
    kind: str | None = typer.Option(None, "--kind", help="Only facts or only opinions."),
    since: str | None = typer.Option(None, "--since", help="Saved on or after (YYYY-MM-DD)."),
    until: str | None = typer.Option(None, "--until", help="Saved on or before (YYYY-MM-DD)."),
    discovered_since: str | None = typer.Option(None, "--discovered-since"),
    discovered_until: str | None = typer.Option(None, "--discovered-until"),
    top_k: int | None = typer.Option(
        None, "--top-k", help="Exactly this many (default: every hit that holds up)."
    ),
    as_json: bool = JSON_OPT,
) -> None:
    """Hybrid search: what matches in meaning or in words; nothing if nothing does."""
    with _memory() as m:
        result = m.search(
            query,
            namespaces=namespace or None,
            tags=tag or None,
            kind=kind,
            saved_since=since,
            saved_until=until,
            discovered_since=discovered_since,
            discovered_until=discovered_until,
            top_k=top_k,
        )
    if as_json:
        from affidavit.recall import search_json

        print_json(search_json(result))
        return
    if not result["semantic"]:
        stdout.print("(semantic recall is off: keyword matches only)", markup=False)
    if not result["results"]:
        stdout.print("no memory matches that question", markup=False)
        return
    _memories_table(result["results"], scored=True)


def recent(
    limit: int = typer.Option(10, "--limit", help="How many."),
    namespace: str | None = typer.Option(None, "--namespace", help="Only this namespace."),
    as_json: bool = JSON_OPT,
) -> None:
    """The newest memories, newest first."""
    with _memory() as m:
        rows = m.recent(limit, namespace)
    if as_json:
        from affidavit.recall import memory_json

        print_json([memory_json(row) for row in rows])
    elif rows:
        _memories_table(rows, scored=False)
    else:
        stdout.print("no memories yet", markup=False)


def link(
    subject: str = typer.Argument(..., help="Who or what (e.g. alice)."),
    predicate: str = typer.Argument(..., help="The relation (e.g. owns)."),
    obj: str = typer.Argument(..., metavar="OBJECT", help="To whom or what (e.g. repo-x)."),
    src: str | None = typer.Option(None, "--src", help="The memory id this edge came from."),
    valid_from: str | None = typer.Option(None, "--valid-from", help="YYYY-MM-DD"),
    valid_to: str | None = typer.Option(None, "--valid-to", help="YYYY-MM-DD (inclusive)"),
    namespace: str = typer.Option("default", "--namespace"),
    as_json: bool = JSON_OPT,
) -> None:
    """Record subject -predicate-> object (the same edge twice keeps one)."""
    with _memory() as m:
        edge = m.link(
            subject,
            predicate,
            obj,
            src_id=src,
            valid_from=valid_from,
            valid_to=valid_to,
            namespace=namespace,
        )
    if as_json:
        print_json(edge)
    else:
        stdout.print(edge["id"], markup=False)


def relations(
    entity: str | None = typer.Option(None, "--entity", help="As subject or object."),
    subject: str | None = typer.Option(None, "--subject"),
    predicate: str | None = typer.Option(None, "--predicate"),
    obj: str | None = typer.Option(None, "--object"),
    as_of: str | None = typer.Option(None, "--as-of", help="Valid on this date."),
    namespace: str | None = typer.Option(None, "--namespace"),
    limit: int = typer.Option(50, "--limit"),
    as_json: bool = JSON_OPT,
) -> None:
    """Query the relation graph (case-insensitive), newest first."""
    from rich.table import Table

    with _memory() as m:
        result = m.relations(
            entity=entity,
            subject=subject,
            predicate=predicate,
            object=obj,
            as_of=as_of,
            namespace=namespace,
            limit=limit,
        )
    if as_json:
        print_json(result)
        return
    if not result["relations"]:
        stdout.print("no relation matches", markup=False)
        return
    table = Table()
    for name in ("id", "subject", "predicate", "object", "valid", "source memory"):
        table.add_column(name, overflow="fold")
    for r in result["relations"]:
        window = f"{r.get('valid_from') or '…'} → {r.get('valid_to') or '…'}"
        cells = (r["id"], r["subject"], r["predicate"], r["object"], window, r.get("src_id") or "")
        table.add_row(*map(shown, cells))
    stdout.print(table)
    if result["truncated"]:
        stdout.print(f"showing {limit} of {result['total']}; raise --limit", markup=False)


def unlink(
    edge_id: str = typer.Argument(..., help="The relation id."), as_json: bool = JSON_OPT
) -> None:
    """Delete one relation."""
    with _memory() as m:
        result = m.unlink(edge_id)
    if as_json:
        print_json(result)
    else:
        stdout.print(f"unlinked {edge_id}", markup=False)


def expire(as_json: bool = JSON_OPT) -> None:
    """Forget every memory whose expiry day has passed (this also runs after each write)."""
    with _memory() as m:
        result = m.expire()
    if as_json:
        print_json(result)
    else:
        n = len(result["expired"])
        stdout.print(f"expired {n} memor{'y' if n == 1 else 'ies'}", markup=False)


@bench_app.command("retrieval")
def bench_retrieval(
    corpus: Path = typer.Option(  # noqa: B008
        ..., "--corpus", help="JSONL: collection, id, text, date?, group?"
    ),
    queries: Path = typer.Option(  # noqa: B008
        ..., "--queries", help="JSONL: collection, id, text, relevant, category?"
    ),
    k: list[int] = typer.Option([5, 10], "--k", help="Cut-offs; repeat for several."),  # noqa: B008
    score_category: list[str] = typer.Option(  # noqa: B008
        [], "--score-category", help="Overall = only these categories (default: all)."
    ),
    json_out: Path | None = typer.Option(  # noqa: B008
        None, "--json", help="Write the report here."
    ),
) -> None:
    """Recall vs BM25 on your own corpus: fresh vault per collection, same run, same rows."""
    import json

    from rich.console import Console

    from affidavit.core.atomic import write_atomic
    from affidavit.recall import bench

    rows = bench.read_jsonl(corpus, "corpus", bench.CORPUS_FIELDS)
    asks = bench.read_jsonl(queries, "query", bench.QUERY_FIELDS)
    with bench.progress_bars(Console(stderr=True)) as progress:
        report = bench.run(
            rows, asks, ks=k, scored_categories=score_category or None, progress=progress
        )
    Console(width=max(stdout.width, 140)).print(bench.table(report))
    if json_out is not None:
        write_atomic(json_out, (json.dumps(bench.public(report), indent=2) + "\n").encode())


def register(app: typer.Typer) -> None:
    """Add the recall commands and the bench group to the root app."""
    for function, name in (
        (search, "search"),
        (recent, "recent"),
        (link, "link"),
        (relations, "relations"),
        (unlink, "unlink"),
        (expire, "expire"),
    ):
        app.command(name)(function)
    app.add_typer(bench_app)
