"""``affidavit migrate --to postgresql://...|DIR``: move the vault to another store, verified.

The copy is all or nothing and checked record by record (:mod:`affidavit.vault.migrate`);
the command only opens the vault, runs it and says where the vault is now.
"""

from __future__ import annotations

from dataclasses import asdict

import click

from affidavit.cli.opening import open_vault
from affidavit.cli.output import print_json, stderr, stdout
from affidavit.cli.params import json_option
from affidavit.core.wording import counted


@click.command("migrate")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="URL|DIR",
    help="A PostgreSQL URL (an empty database, or one already holding this vault's very log: "
    "a rerun, or a team's copied database; this vault directory then points there and "
    "keeps its SQLite file as vault.db.before-migrate), or a new directory for a file "
    "vault. A team vault is never copied into an empty database (that would move only "
    "this member). No password in the URL: use ~/.pgpass or PGPASSWORD.",
)
@json_option
def migrate(target: str, as_json: bool) -> None:
    """Move the vault to PostgreSQL, or copy it to a file vault.

    Lock the vault first (`affidavit lock`) so no agent keeps writing to the old place.
    """
    from affidavit.vault import migrate as moving
    from affidavit.vault import store as stores

    if stores.is_url(target):
        stores.check_url(target)  # a password is refused before anything is opened
    with open_vault() as vault:
        done = moving.migrate(vault, target)
    if as_json:
        print_json(asdict(done))
        return
    stdout.print(
        f"moved {counted(done.records, 'record')} and "
        f"{counted(done.audit_entries, 'audit entry', 'audit entries')} from "
        f"{done.source} to {done.target}; every row verified",
        markup=False,
    )
    if done.directory != str(vault.path):
        stderr.print(f"next: set AFFIDAVIT_VAULT={done.directory} to use it", markup=False)
