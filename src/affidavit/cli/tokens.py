"""``affidavit memory token``: the bearer tokens HTTP clients of the memory server send.

A token is printed once, on stdout, and never again (the vault keeps only its hash), so the
command is the one place a token exists in clear; put it straight into the client's secret
store or a 0600 file. See :mod:`affidavit.access.tokens`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from affidavit.cli.params import json_option

if TYPE_CHECKING:
    from affidavit.access import tokens as token_store


@click.command("token")
@click.argument("caller", required=False, help="The caller (agent) the token stands for.")
@click.option("--list", "list_", is_flag=True, help="Show which callers hold a token.")
@click.option("--revoke", is_flag=True, help="Revoke CALLER's token (refused at once).")
@json_option
def token(caller: str | None, list_: bool, revoke: bool, as_json: bool) -> None:
    """Issue CALLER a bearer token for `serve --http`, shown once.

    Only its SHA-256 is kept, sealed in the vault; a new token replaces the caller's old one.
    """
    from affidavit.access import tokens
    from affidavit.cli.opening import open_vault
    from affidavit.cli.output import print_json, stdout
    from affidavit.core.errors import UsageError

    if list_ == bool(caller):
        raise UsageError("pass CALLER, or --list", "e.g. `affidavit token cursor`")
    with open_vault() as vault:
        if caller is None:
            _show(tokens.listing(vault), as_json)
            return
        if revoke:
            tokens.revoke(vault, caller)
            stdout.print(f"revoked the token of {caller}", markup=False)
            return
        issued = tokens.issue(vault, caller)
    if as_json:
        print_json({"caller": caller, "token": issued})
        return
    stdout.print(issued, markup=False, soft_wrap=True)
    click.echo(
        f"affidavit: the token of {caller}; it is shown only this once. Clients send it as "
        "'Authorization: Bearer <token>'.",
        err=True,
    )


def _show(found: list[token_store.TokenInfo], as_json: bool) -> None:
    from affidavit.cli.output import print_json, stdout

    if as_json:
        print_json([info.to_json() for info in found])
        return
    for info in found:
        stdout.print(f"{info.caller} (issued {info.created})", markup=False)
    if not found:
        stdout.print("no tokens issued")
