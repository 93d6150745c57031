"""Maintenance commands: reindex, retag, atomize, selftest, settings (``affidavit memory ...``).

Each opens the vault like every vault command (:mod:`affidavit.cli.opening`) and calls
:mod:`affidavit.recall.maintenance`, where every change is one vault transaction.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from affidavit.cli.opening import open_memory
from affidavit.cli.output import print_json, stdout, visible
from affidavit.cli.params import json_option
from affidavit.core.wording import counted


@click.command("reindex")
@click.option(
    "--re-embed", is_flag=True, help="Embed every memory again even if the model is unchanged."
)
@json_option
def reindex(re_embed: bool, as_json: bool) -> None:
    """Rebuild the index; re-embed every memory if the model changed.

    The model the vault's vectors came from is recorded in the vault; when the installed
    model differs, every memory is embedded again (one transaction, with a progress bar).
    """
    from affidavit.cli.vault import _progress
    from affidavit.recall import maintenance

    with open_memory() as m:
        total = sum(1 for _ in m.vault.items("memory"))
        with _progress(total, "embedding memories") as report:
            done = maintenance.reindex(m, re_embed=re_embed, progress=report)
    if as_json:
        print_json(done)
        return
    model = done["model"]["id"] if done["model"] else "none (keyword recall only)"
    sys.stdout.write(
        f"indexed {counted(done['indexed'], 'record')}; "
        f"re-embedded {counted(done['re_embedded'], 'memory', 'memories')}; "
        f"model {model}\n"
    )


@click.command("retag")
@click.argument("old")
@click.argument("new")
@click.option("--namespace", help="Only memories in this namespace.")
@json_option
def retag(old: str, new: str, namespace: str | None, as_json: bool) -> None:
    """Rename tag OLD to NEW (or merge it into NEW) on every memory."""
    from affidavit.recall import maintenance

    with open_memory() as m:
        done = maintenance.retag(m, old, new, namespace=namespace)
    if as_json:
        print_json(done)
        return
    sys.stdout.write(
        visible(
            f"retagged {counted(len(done['retagged']), 'memory', 'memories')}: "
            f"{done['old']} -> {done['new']}"
        )
        + "\n"
    )


@click.command("atomize")
@click.argument("memory_id")
@click.option("--yes", is_flag=True, help="Store the claims without asking.")
@json_option
def atomize(memory_id: str, yes: bool, as_json: bool) -> None:
    """Split a long memory into single claims, after review.

    The claims are stored as corrections that supersede the memory: it leaves search and
    stays readable by id. Without --yes (and without a terminal to ask on) nothing is stored.
    """
    from affidavit.recall import maintenance

    with open_memory() as m:
        plan = maintenance.plan_atomize(m, memory_id)
        if not as_json:
            stdout.print(f"{memory_id} splits into {len(plan.pieces)} claims:", markup=False)
            for number, piece in enumerate(plan.pieces, 1):
                stdout.print(visible(f"  {number}. {piece}"), markup=False)
        confirmed = yes or (
            sys.stdin.isatty() and click.confirm("store them and retire the original?")
        )
        stored = maintenance.apply_atomize(m, plan) if confirmed else []
    if as_json:
        print_json({**plan.as_dict(), "stored": stored})
        return
    if not confirmed:
        sys.stdout.write("nothing stored (pass --yes to store the claims)\n")
        return
    ids = ", ".join(str(s["id"]) for s in stored)
    sys.stdout.write(f"stored {len(stored)} claims ({ids}); {memory_id} is superseded\n")


@click.command("selftest")
@json_option
def selftest(as_json: bool) -> None:
    """Check this installation end to end.

    The model's sha256, that the vault opens, and a store/search round trip in a temporary
    vault (yours is only opened, never written).
    """
    from affidavit.core.errors import AffidavitError, IntegrityError
    from affidavit.recall import availability, run_selftest

    model = availability()
    vault: dict[str, Any]
    try:
        with open_memory() as m:
            vault = {"opened": True, "records": len(m.vault)}
    except AffidavitError as exc:
        vault = {"opened": False, "error": exc.message}
    recall = run_selftest()
    report = {
        "model": model,
        "vault": vault,
        "recall": recall,
        "passed": bool(recall["passed"] and vault["opened"]),
    }
    if as_json:
        print_json(report)
    else:
        lines = [
            f"model   {model.get('model') or 'off'}"
            + (" (sha256 verified)" if model.get("semantic") else f": {model.get('reason')}"),
            f"vault   {'opens' if vault['opened'] else 'does not open: ' + str(vault['error'])}",
            f"recall  {sum(c['found'] for c in recall['checks'])}/{len(recall['checks'])} "
            f"checks passed, search p50 {recall.get('search_p50_ms', 0):.1f} ms",
        ]
        sys.stdout.write("".join(visible(line) + "\n" for line in lines))  # real line breaks
    if not report["passed"]:
        raise IntegrityError("the self-test failed", "see the lines above")


@click.command("settings")
@click.argument("key", required=False)
@click.argument("value", required=False)
@json_option
def settings(key: str | None, value: str | None, as_json: bool) -> None:
    """List the sealed settings, or show or set one.

    Booleans take on/off; numbers are whole numbers; auto_lock_minutes takes none.
    """
    from affidavit.recall import maintenance

    if key is not None:
        maintenance.setting(key)  # an unknown key fails before the vault is opened
    with open_memory() as m:
        if value is not None and key is not None:
            rows = [maintenance.set_setting(m, key, value)]
        else:
            rows = [r for r in maintenance.list_settings(m) if key is None or r["key"] == key]
    if as_json:
        print_json(rows if key is None else rows[0])
        return
    for row in rows:
        shown_value = {True: "on", False: "off", None: "none"}.get(row["value"], row["value"])
        meaning = f"  ({row['meaning']})" if "meaning" in row else ""
        sys.stdout.write(visible(f"{row['key']} = {shown_value}{meaning}") + "\n")
