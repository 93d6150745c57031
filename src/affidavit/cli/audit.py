"""``affidavit audit verify``: walk a hash chain and name its first broken link.

Without ``--log`` it checks the vault's sealed audit chain (needs the vault unlocked); with
``--log FILE`` it checks a proxy audit log (plain JSONL, no key needed). Exit 0 when intact,
the IntegrityError exit code when not. A verimcp audit log is read too: its entries are
counted and it is reported as not hash-chained (nothing in it can show a change).
"""

from __future__ import annotations

from pathlib import Path

import click

from affidavit.cli.output import print_json, stdout
from affidavit.cli.params import EXISTING
from affidavit.core.errors import IntegrityError
from affidavit.core.wording import counted


@click.command("verify")
@click.option(
    "--log",
    type=EXISTING,
    help="Verify this proxy audit log instead of the vault's chain.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify(log: Path | None, as_json: bool) -> None:
    """Walk the chain: its length and head, or the first broken entry.

    Exit 0 when the chain is intact; otherwise the integrity exit code (5) and the entry.
    """
    if log is not None:
        _verify_proxy_log(log, as_json)
        return
    from affidavit.cli.opening import open_vault

    vault = open_vault()
    try:
        report = vault.verify_audit()
    finally:
        vault.close()
    if as_json:
        print_json(report.as_dict())
    if not report.ok:
        raise IntegrityError(
            f"vault audit chain broken: {report.problem}",
            "restore the vault from a backup taken before the damage",
        )
    if not as_json:
        stdout.print(
            f"audit chain OK: {counted(report.entries, 'entry', 'entries')}, head {report.head}",
            markup=False,
        )


def _verify_proxy_log(log: Path, as_json: bool) -> None:
    from affidavit.proxy import verify_log

    report = verify_log(log)
    brk = report.first_break
    if as_json:
        print_json(
            {
                "ok": report.ok,
                "entries": report.entries,
                "head": report.head if report.chained else None,
                "broken_at": brk.index + 1 if brk else None,
                "reason": brk.reason if brk else None,
                "format": report.format,
                "chained": report.chained,
            }
        )
    if brk is not None:
        raise IntegrityError(
            f"audit log {log} is broken at entry {brk.index + 1}: {brk.reason}",
            "entries before it are intact; keep the file as evidence",
        )
    if as_json:
        return
    if not report.chained:
        stdout.print(
            f"{report.format} audit log: {counted(report.entries, 'entry', 'entries')} read; "
            "it is not hash-chained, "
            "so a changed or removed entry cannot be detected",
            markup=False,
        )
        return
    stdout.print(
        f"audit log OK: {counted(report.entries, 'entry', 'entries')}, head {report.head}",
        markup=False,
    )
