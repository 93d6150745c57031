"""Memories in: ``hook install|remove|run``, ``review [accept|drop]`` and ``import --from``.

The hook is what Claude Code runs after every answer: it must never break the agent, so
``hook run`` turns every problem (locked vault, unreadable stdin, a bug) into one line and exit
status 0. ``import`` keeps reading affidavit's own export (``--from affidavit``, the default, as
``memory import`` always did) and adds the other tools' formats (:mod:`affidavit.intake`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from affidavit.cli.opening import open_memory
from affidavit.cli.output import print_json, shown, stdout
from affidavit.cli.params import EXISTING_OR_STDIN, PATH, EnumChoice, json_option
from affidavit.core.errors import UsageError
from affidavit.core.wording import counted
from affidavit.intake import Format

if TYPE_CHECKING:
    from affidavit.intake import Plan, Stored
    from affidavit.integrate.install import Outcome

AGENT = click.Choice(["claude-code"])
#: Notes from which ``import`` shows a progress bar (smaller batches finish before it draws).
PROGRESS_FROM = 100


# -- hook -----------------------------------------------------------------------------------


@click.group("hook", no_args_is_help=True)
def hook() -> None:
    """Capture an agent's new facts as candidates to review."""


def _outcome_line(outcome: Outcome) -> str:
    return f"{outcome.action}: {outcome.path} ({outcome.detail})"


@hook.command("install")
@click.argument("agent", type=AGENT, help="The agent whose settings get the hook.")
@click.option("--vault", type=PATH, help="The vault the hook stores into (default: as now).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
def hook_install(agent: str, vault: Path | None, dry_run: bool) -> None:
    """Add the capture hook (a Stop hook) to the agent's settings.

    The settings file is backed up first; only its hooks.Stop list changes.
    """
    from affidavit.integrate import hooks

    del agent  # one agent so far: the choice validates it
    stdout.print(shown(_outcome_line(hooks.install(vault=vault, dry_run=dry_run))))


@hook.command("remove")
@click.argument("agent", type=AGENT, help="The agent whose settings lose the hook.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
def hook_remove(agent: str, dry_run: bool) -> None:
    """Take the capture hook out of the agent's settings.

    The backed-up file comes back byte for byte if it is untouched since the install.
    """
    from affidavit.integrate import hooks

    del agent
    stdout.print(shown(_outcome_line(hooks.remove(dry_run=dry_run))))


def _capture(vault: Path | None, payload: str) -> str:
    from affidavit.intake import capture_transcript
    from affidavit.recall import Memory
    from affidavit.vault import Vault

    try:
        event = json.loads(payload)
    except ValueError:
        return "affidavit: the hook's input was not JSON; nothing captured"
    transcript = event.get("transcript_path") if isinstance(event, dict) else None
    if not isinstance(transcript, str) or not Path(transcript).is_file():
        return "affidavit: the hook's input names no transcript file; nothing captured"
    opened = Vault.open(vault)  # never prompts: a hook has no terminal
    try:
        return capture_transcript(Memory(opened), Path(transcript)).line()
    finally:
        opened.close()


@hook.command("run")
@click.argument("agent", type=AGENT, help="The agent whose hook event is on stdin.")
@click.option(
    "--vault", type=PATH, help="Vault directory (default: AFFIDAVIT_VAULT or ~/.affidavit/vault)."
)
def hook_run(agent: str, vault: Path | None) -> None:
    """What the hook runs: capture the transcript's new claims.

    Always exits 0 with one line: a problem must never break the agent.
    """
    from affidavit.core.errors import AffidavitError

    del agent
    try:
        line = _capture(vault, sys.stdin.read())
    except AffidavitError as exc:
        line = f"affidavit: nothing captured: {exc.message}" + (
            f" ({exc.hint})" if exc.hint else ""
        )
    except Exception as exc:  # the agent must never break on us
        line = f"affidavit: nothing captured: unexpected {type(exc).__name__}"
    click.echo(line.replace("\n", " "))


# -- review ----------------------------------------------------------------------------------


@click.group("review", invoke_without_command=True)
@json_option
@click.pass_context
def review(ctx: click.Context, as_json: bool) -> None:
    """List the captured candidates waiting for review.

    `review accept ID` stores one as a memory, `review drop ID` forgets it. Candidates are
    quarantined: search, recent and the MCP tools never return them.
    """
    if ctx.invoked_subcommand is not None:
        return
    from affidavit.intake import candidates

    with open_memory() as memory:
        waiting = candidates(memory)
    if as_json:
        print_json({"candidates": [c.as_json() for c in waiting]})
        return
    if not waiting:
        stdout.print("no candidates waiting", markup=False)
        return
    from rich.table import Table

    table = Table()
    for name in ("id", "candidate", "kind", "source"):
        table.add_column(name, overflow="fold")
    for c in waiting:
        table.add_row(*map(shown, (c.id, c.text, c.category, c.source)))
    stdout.print(table)


@review.command("accept")
@click.argument("candidate_id", metavar="ID", help="The candidate's id (from `review`).")
@click.option("--edit", "text", help="Store this wording instead (one claim).")
@click.option("--namespace", help="The namespace it goes to (default: your own).")
@json_option
def review_accept(
    candidate_id: str, text: str | None, namespace: str | None, as_json: bool
) -> None:
    """Store a candidate as a memory (optionally reworded)."""
    from affidavit.intake import accept
    from affidavit.recall import views

    with open_memory() as memory:
        outcome = accept(memory, candidate_id, text=text, namespace=namespace)
    if as_json:
        print_json(views.store_json(outcome))
        return
    if outcome["id"] is None:
        stdout.print(shown(f"not stored ({outcome['status']}): {outcome.get('hint', '')}"))
        return
    stdout.print(shown(f"{outcome['status']}: {outcome['id']} in {outcome['namespace']}"))


@review.command("drop")
@click.argument("candidate_id", metavar="ID", help="The candidate's id (from `review`).")
def review_drop(candidate_id: str) -> None:
    """Forget a candidate without storing it."""
    from affidavit.intake import drop

    with open_memory() as memory:
        drop(memory, candidate_id)
    stdout.print(shown(f"dropped {candidate_id}"))


# -- import ----------------------------------------------------------------------------------


@contextmanager
def _bar(total: int) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr, one task per phase of the store (none for small batches)."""
    if total < PROGRESS_FROM:
        yield None
        return
    from affidavit.cli.output import stderr
    from affidavit.recall import bench

    with bench.progress_bars(stderr) as report:
        yield report


def _show_plan(plan: Plan, stored: Stored | None, *, namespace: str) -> None:
    from collections import Counter

    if stored is None:
        for note in plan.notes:
            tags = f"  [{', '.join(note.tags)}]" if note.tags else ""
            stdout.print(shown(f"would store: {note.text}{tags}"))
        stdout.print(
            shown(f"{counted(len(plan.notes), 'claim')} would be stored in {namespace} (dry run)")
        )
    else:
        stdout.print(
            shown(
                f"stored {stored.stored} new memories in {namespace} "
                f"({stored.duplicates} already there, {stored.conflicts} opinion conflicts)"
            )
        )
    reasons = Counter(s.reason for s in plan.skipped)
    for reason, count in reasons.most_common():
        first = next(s.where for s in plan.skipped if s.reason == reason)
        stdout.print(shown(f"skipped {count}: {reason} (first: {first})"))


def _plan_json(plan: Plan, stored: Stored | None, namespace: str) -> dict[str, Any]:
    out: dict[str, Any] = {"format": plan.format.value, "namespace": namespace}
    if stored is None:
        out["dry_run"] = True
        out["would_store"] = [
            {"text": n.text, "source": n.source, "tags": list(n.tags), "discovered": n.discovered}
            for n in plan.notes
        ]
    else:
        out.update(
            {
                "stored": stored.stored,
                "duplicates": stored.duplicates,
                "conflicts": stored.conflicts,
            }
        )
    out["skipped"] = [{"where": s.where, "reason": s.reason} for s in plan.skipped]
    return out


@click.command("import")
@click.argument(
    "source",
    metavar="FILE",
    type=EXISTING_OR_STDIN,
    help="The file (or folder, for claude-memory); - for stdin (affidavit).",
)
@click.option(
    "--from",
    "fmt",
    type=EnumChoice(Format),
    default=Format.AFFIDAVIT.value,
    help="What the file is: affidavit's own export, or another tool's notes or chats.",
)
@click.option("--namespace", help="The namespace imported claims go to (default: your own).")
@click.option("--dry-run", is_flag=True, help="Print what would be stored; store nothing.")
@json_option
@click.pass_context
def import_(
    ctx: click.Context,
    source: str,
    fmt: Format,
    namespace: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Import memories from a file: all or nothing, idempotent.

    Claims that break the one-claim rule, and pieces that are not claims, are skipped and
    reported with the reason.
    """
    if fmt is Format.AFFIDAVIT:
        if namespace or dry_run:
            raise UsageError(
                "--namespace and --dry-run are for other tools' files",
                "an affidavit export keeps each record's own namespace",
            )
        from affidavit.cli.vault import import_ as import_export

        ctx.invoke(import_export, source=source, as_json=as_json)
        return
    from affidavit.intake import read_plan, store_plan

    with open_memory() as memory:
        namespace = namespace or memory.namespace
        plan = read_plan(fmt, Path(source), memory.max_chars)
        stored = None
        if not dry_run:
            with _bar(len(plan.notes)) as report:
                stored = store_plan(memory, plan, namespace=namespace, progress=report)
    if as_json:
        print_json(_plan_json(plan, stored, namespace))
    else:
        _show_plan(plan, stored, namespace=namespace)
