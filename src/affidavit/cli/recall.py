"""Recall commands: store, search, recent, namespaces, link, relations, unlink, expire,
``bench retrieval`` (``affidavit memory ...``).

Each body reads its options into recall's typed input (``Claim``, ``Link``, ``EdgeQuery``),
imports the recall layer lazily (it pulls in numpy and onnxruntime), opens the vault through
:mod:`affidavit.cli.opening` (same unlock rules as every vault command) as ``--caller``
(``user`` unless told otherwise: its grants, its default namespace), and prints a readable
table, or with ``--json`` the value's one wire shape (:mod:`affidavit.recall.views`), the
same JSON the memory server's tool answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from affidavit.cli.opening import open_memory
from affidavit.cli.output import print_json, shown, stdout, warn
from affidavit.cli.params import (
    DATE,
    EXISTING,
    EXPIRES,
    LIMIT,
    MANY,
    MOMENT,
    OUTPUT,
    EnumChoice,
    caller_option,
    json_option,
)
from affidavit.recall import MemoryKind

NARROW = 100
"""Below this many columns a table of memories squeezes the text to a word or two per line:
each memory is printed as a short block instead, its lines wrapped between words."""


def _memories_table(rows: Sequence[Mapping[str, Any]], *, scored: bool) -> None:
    """Memories as a table whose ids, scores and dates are never broken across lines (an id
    is copied into the next command) and whose text wraps between words; on a terminal
    narrower than :data:`NARROW`, one block per memory."""
    import textwrap

    from rich.table import Table

    cells = [_memory_cells(r) for r in rows]
    if stdout.width < NARROW:
        for r, (memory_id, text, source, date, tags) in zip(rows, cells, strict=True):
            score = f"  score {r['score']:.3f}" if scored else ""
            stdout.print(shown(f"{memory_id}  {date}{score}"))
            for line in (text, source and f"source: {source}", tags and f"tags: {tags}"):
                for part in textwrap.wrap(
                    line,
                    max(stdout.width, 20),
                    initial_indent="  ",
                    subsequent_indent="    ",
                    break_long_words=False,
                    break_on_hyphens=False,
                ):
                    stdout.print(shown(part))  # one line each: shown() would show a \n
        return
    table = Table(show_lines=False)
    if scored:
        table.add_column("score", justify="right", no_wrap=True)
    table.add_column("id", no_wrap=True, min_width=max((len(c[0]) for c in cells), default=2))
    table.add_column("memory", overflow="fold")
    table.add_column("source", overflow="fold")
    table.add_column("date", no_wrap=True, min_width=10)
    table.add_column("tags", overflow="fold")
    for r, row_cells in zip(rows, cells, strict=True):
        table.add_row(*([f"{r['score']:.3f}"] if scored else []), *map(shown, row_cells))
    stdout.print(table)


def _memory_cells(r: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    """(id, text with its warning and successor, source, date, tags) of one memory."""
    text = r["text"] + (f"  [{r['warning']}]" if r.get("warning") else "")
    if r.get("superseded_by"):
        text += f"  (superseded by {r['superseded_by']})"
    evidence = r.get("evidence")
    if evidence:
        text += f"  [{'; '.join([evidence['status'], *evidence.get('reasons', [])])}]"
    date = r.get("discovered") or r["saved_at"][:10]
    return r["id"], text, r.get("source") or "", date, ", ".join(r.get("tags", []))


@click.command("store")
@click.argument("text", help="The memory: one claim.")
@click.option("--source", required=True, help="Where it came from ('from chat', a file).")
@click.option("--namespace", help="The namespace to store in (default: the caller's own).")
@click.option("--tag", **MANY, help="A tag; repeat for several.")
@click.option("--discovered", type=DATE, help="Learned on (YYYY-MM-DD).")
@click.option("--expires", type=EXPIRES, help="Last day it holds: a date, or 14d / 2w / 3m / 1y.")
@click.option("--importance", type=float, default=0.5, help="How much it matters, 0-1 (clamped).")
@click.option(
    "--kind",
    type=EnumChoice(MemoryKind),
    default=MemoryKind.FACT.value,
    help="fact (accumulates) or opinion (replaces).",
)
@click.option(
    "--supersedes", **MANY, help="The id this replaces (repeat); it stays readable by id."
)
@click.option(
    "--keep-both", is_flag=True, help="Store an opinion beside the similar ones it conflicts with."
)
@click.option("--quarantined", is_flag=True, help="Warn on every recall of it.")
@click.option("--thread", help="Only for a turn of a recorded conversation: its name.")
@click.option(
    "--turn", type=click.IntRange(0, 1_000_000_000), help="The turn's position in its thread."
)
@click.option("--reply-to", help="The id of the memory this turn answers (needs --thread).")
@click.option(
    "--evidence",
    **MANY,
    help="What proves it (repeat), as JSON: a pack citation "
    '{"type":"pack","pack":NAME,"signer":"SHA256:...","record":"M-...","quote":"..."} or a '
    'proxy receipt {"type":"receipt","log":PATH,"entry":HASH}. Checked now; see docs/evidence.md.',
)
@caller_option
@json_option
def store(
    text: str,
    source: str,
    namespace: str | None,
    tag: tuple[str, ...],
    discovered: str | None,
    expires: str | None,
    importance: float,
    kind: MemoryKind,
    supersedes: tuple[str, ...],
    keep_both: bool,
    quarantined: bool,
    thread: str | None,
    turn: int | None,
    reply_to: str | None,
    evidence: tuple[str, ...],
    caller: str,
    as_json: bool,
) -> None:
    """Store a memory (embedded for semantic recall); prints its id.

    A similar live opinion stores nothing: the command shows it and fails, and says how to
    replace it (--supersedes ID) or keep both (--keep-both). With --json: what the store did
    and why, as memory_store answers.
    """
    from affidavit.core.errors import ConflictError
    from affidavit.recall import Claim, parse_evidence, views

    claim = Claim(
        text,
        source,
        namespace=namespace,
        tags=tag,
        discovered=discovered,
        expires=expires,
        importance=importance,
        kind=kind,
        supersedes=() if keep_both else (supersedes or None),
        quarantined=quarantined,
        thread=thread,
        turn=turn,
        reply_to=reply_to,
        evidence=parse_evidence([_json_item(text, "--evidence") for text in evidence]),
    )
    with open_memory(caller, shared_model=True) as m:
        result = m.store(claim)
    if as_json:
        print_json(views.store_json(result))
    if result["status"] == "conflict":
        if not as_json:
            _memories_table(result.get("conflicts", []), scored=False)
        ids = ", ".join(c["id"] for c in result.get("conflicts", []))
        raise ConflictError(
            f"a similar live opinion exists ({ids}); nothing was stored",
            "resend with --supersedes ID to replace it, or --keep-both to keep both",
        )
    if as_json:
        return
    stdout.print(result["id"], markup=False)
    if result["status"] != "stored":
        warn(f"{result['status']}: an equivalent memory was already stored under this id")


def _json_item(text: str, flag: str) -> Any:
    """One JSON value given on the command line; InputError names the flag."""
    import json

    from affidavit.core.errors import InputError

    try:
        return json.loads(text)
    except ValueError as exc:
        hint = f"quote the object, e.g. {flag} '{{...}}'"
        raise InputError(f"{flag} is not JSON: {exc}", hint) from None


@click.command("search")
@click.argument("query", help="The question, in your own words.")
@click.option("--namespace", **MANY, help="Only these namespaces.")
@click.option("--tag", **MANY, help="Only memories with one of these tags.")
@click.option("--kind", type=EnumChoice(MemoryKind), help="Only facts or only opinions.")
@click.option("--since", type=DATE, help="Saved on or after (YYYY-MM-DD).")
@click.option("--until", type=DATE, help="Saved on or before (YYYY-MM-DD).")
@click.option("--discovered-since", type=DATE, help="Learned on or after (YYYY-MM-DD).")
@click.option("--discovered-until", type=DATE, help="Learned on or before (YYYY-MM-DD).")
@click.option(
    "--top-k",
    type=click.IntRange(min=1),
    help="Exactly this many (default: every hit that holds up).",
)
@click.option("--proven-only", is_flag=True, help="Only memories whose evidence is proven now.")
@caller_option
@json_option
def search(
    query: str,
    namespace: tuple[str, ...],
    tag: tuple[str, ...],
    kind: MemoryKind | None,
    since: str | None,
    until: str | None,
    discovered_since: str | None,
    discovered_until: str | None,
    top_k: int | None,
    proven_only: bool,
    caller: str,
    as_json: bool,
) -> None:
    """Find what matches the question in meaning or in words.

    Hybrid search over every namespace the caller may read: nothing comes back if nothing
    holds up.
    """
    with open_memory(caller, shared_model=True) as m:
        result = m.search(
            query,
            namespaces=list(namespace) or None,
            tags=list(tag) or None,
            kind=kind,
            saved_since=since,
            saved_until=until,
            discovered_since=discovered_since,
            discovered_until=discovered_until,
            top_k=top_k,
            proven_only=proven_only,
        )
    if as_json:
        from affidavit.recall import views

        print_json(views.search_json(result))
        return
    if not result["semantic"]:
        stdout.print("(semantic recall is off: keyword matches only)", markup=False)
    if not result["results"]:
        stdout.print("no memory matches that question", markup=False)
        return
    _memories_table(result["results"], scored=True)


@click.command("recent")
@click.option("--limit", type=LIMIT, default=10, help="How many.")
@click.option("--namespace", help="Only this namespace.")
@caller_option
@json_option
def recent(limit: int, namespace: str | None, caller: str, as_json: bool) -> None:
    """The newest memories the caller may read, newest first."""
    with open_memory(caller) as m:
        rows = m.recent(limit, namespace)
    if as_json:
        from affidavit.recall import views

        print_json(views.memories_json(rows))
    elif rows:
        _memories_table(rows, scored=False)
    else:
        stdout.print("no memories yet", markup=False)


@click.command("namespaces")
@caller_option
@json_option
def namespaces(caller: str, as_json: bool) -> None:
    """The namespaces you may read: memories, relations, access."""
    from rich.table import Table

    with open_memory(caller) as m:
        listing = m.namespaces()
    if as_json:
        print_json(listing)
        return
    table = Table()
    for name in ("namespace", "memories", "relations", "access"):
        table.add_column(name, overflow="fold")
    for row in listing["namespaces"]:
        own = " (default)" if row["name"] == listing["default_namespace"] else ""
        cells = (row["name"] + own, str(row["memories"]), str(row["relations"]), row["access"])
        table.add_row(*map(shown, cells))
    stdout.print(table)


@click.command("link")
@click.argument("subject", help="Who or what (e.g. alice).")
@click.argument("predicate", help="The relation (e.g. owns).")
@click.argument("obj", metavar="OBJECT", help="To whom or what (e.g. repo-x).")
@click.option("--src", help="The memory id this edge came from.")
@click.option("--valid-from", type=MOMENT, help="YYYY-MM-DD (or an ISO time)")
@click.option("--valid-to", type=MOMENT, help="YYYY-MM-DD (inclusive; or an ISO time)")
@click.option("--namespace", help="The namespace to store in (default: the caller's own).")
@caller_option
@json_option
def link(
    subject: str,
    predicate: str,
    obj: str,
    src: str | None,
    valid_from: str | None,
    valid_to: str | None,
    namespace: str | None,
    caller: str,
    as_json: bool,
) -> None:
    """Record a relation: SUBJECT -PREDICATE-> OBJECT.

    The same edge twice keeps one.
    """
    from affidavit.recall import Link, views

    edge = Link(
        subject,
        predicate,
        obj,
        src_id=src,
        valid_from=valid_from,
        valid_to=valid_to,
        namespace=namespace,
    )
    with open_memory(caller) as m:
        made = m.link(edge)
    if as_json:
        print_json(views.link_json(made))
    else:
        stdout.print(made["id"], markup=False)


@click.command("relations")
@click.option("--entity", help="As subject or object.")
@click.option("--subject", help="As subject.")
@click.option("--predicate", help="This relation.")
@click.option("--object", "obj", help="As object.")
@click.option("--as-of", type=MOMENT, help="Valid on this date (or ISO time).")
@click.option("--namespace", help="Only this namespace.")
@click.option("--limit", type=LIMIT, default=50, help="How many.")
@caller_option
@json_option
def relations(
    entity: str | None,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    as_of: str | None,
    namespace: str | None,
    limit: int,
    caller: str,
    as_json: bool,
) -> None:
    """Query the relation graph (case-insensitive), newest first."""
    from rich.table import Table

    from affidavit.recall import EdgeQuery, views

    query = EdgeQuery(
        entity=entity,
        subject=subject,
        predicate=predicate,
        object=obj,
        as_of=as_of,
        namespace=namespace,
        limit=limit,
    )
    with open_memory(caller) as m:
        result = m.relations(query)
    if as_json:
        print_json(views.relations_json(result))
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


@click.command("unlink")
@click.argument("edge_id", metavar="ID", help="The relation id.")
@caller_option
@json_option
def unlink(edge_id: str, caller: str, as_json: bool) -> None:
    """Delete one relation."""
    with open_memory(caller) as m:
        result = m.unlink(edge_id)
    if as_json:
        print_json(result)
    else:
        stdout.print(f"unlinked {edge_id}", markup=False)


@click.command("expire")
@json_option
def expire(as_json: bool) -> None:
    """Forget every memory whose expiry day has passed.

    This also runs after each write.
    """
    with open_memory() as m:
        result = m.expire()
    if as_json:
        print_json(result)
    else:
        n = len(result["expired"])
        stdout.print(f"expired {n} memor{'y' if n == 1 else 'ies'}", markup=False)


@click.command("retrieval")
@click.option("--corpus", type=EXISTING, required=True, help="The memories, one JSON row a line.")
@click.option("--queries", type=EXISTING, required=True, help="The questions, one JSON row a line.")
@click.option("--k", type=int, multiple=True, default=(5, 10), help="Cut-offs; repeat for several.")
@click.option("--score-category", **MANY, help="Overall = only these categories (default: all).")
@click.option("--json", "json_out", type=OUTPUT, help="Write the report here.")
def bench_retrieval(
    corpus: Path,
    queries: Path,
    k: tuple[int, ...],
    score_category: tuple[str, ...],
    json_out: Path | None,
) -> None:
    """Recall vs BM25 on your own corpus.

    A fresh vault per collection; both rankers in the same run, on the same rows.

    \b
    corpus rows:  collection, id, text; optional: date, group, thread, turn, reply_to
    query rows:   collection, id, text, relevant (ids); optional: category
    """
    import json

    from rich.console import Console

    from affidavit.core.atomic import write_atomic
    from affidavit.recall import bench

    rows = bench.read_jsonl(corpus, "corpus", bench.CORPUS_FIELDS)
    asks = bench.read_jsonl(queries, "query", bench.QUERY_FIELDS)
    with bench.progress_bars(Console(stderr=True)) as progress:
        report = bench.run(
            rows,
            asks,
            ks=list(k),
            scored_categories=list(score_category) or None,
            progress=progress,
        )
    Console(width=max(stdout.width, 140)).print(bench.table(report))
    if json_out is not None:
        write_atomic(json_out, (json.dumps(bench.public(report), indent=2) + "\n").encode())
