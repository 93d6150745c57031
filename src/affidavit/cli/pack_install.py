"""``affidavit pack install DIR [trust flags] [--name NAME] [--json]`` and ``pack uninstall NAME``.

Install verifies the pack with exactly the checks and trust flags of ``pack verify`` (the
evidence plane's reader parses the same raw command line) and seals the install in the
vault; from then on ``search`` and ``memory_search`` find its records, read-only, in the
namespace ``pack:<name>`` (:mod:`affidavit.recall.installed_packs`).
"""

from __future__ import annotations

import sys

import click

from affidavit.cli.output import print_json, visible, warn
from affidavit.cli.params import parse_pack_args
from affidavit.core.wording import counted

HELP = """Verify a pack and install it into the vault: its records become searchable next to
your memories, read-only, in the namespace pack:NAME.

\b
DIR                         the pack directory (an absolute path)
--name NAME                 the installed name (default: the directory's name)
--allow-unsigned            install a pack no key this host trusts signed (unsigned, or
                            signed by a key not pinned); every hit from it is marked so
--json                      print the install as JSON
trust flags                 exactly as `affidavit pack verify` (see its --help); they are
                            applied again whenever a process loads the pack

A pack no trusted key signed is refused unless --allow-unsigned is given. A pack that changes
on disk, or whose key the --revoked-keys file later names, drops out of recall with a warning
until it is installed again.
"""
USAGE = "DIR [TRUST FLAGS] [--name NAME] [--allow-unsigned] [--json]"


@click.command(
    "install",
    help=HELP,
    short_help="Verify a pack and make it searchable beside your memories.",
    options_metavar=USAGE,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.pass_context
def install(ctx: click.Context) -> None:
    """Verify, then seal the install; PackRefused (nothing written) when refused."""
    from affidavit.cli.opening import open_vault
    from affidavit.recall import installed_packs

    allow_unsigned, rest = _allow_unsigned(list(ctx.args))
    options, pack_dir, name, as_json = parse_pack_args(rest, "install", "--name", str)
    with open_vault() as vault:
        done = installed_packs.install(
            vault, pack_dir, options, name, allow_unsigned=allow_unsigned
        )
    if as_json:
        print_json(done.as_dict())
        return
    if done.signature != installed_packs.SIGNED:
        warn(
            f"pack {done.name} is {done.signature}: no key this host trusts signed it; "
            "every hit from it is marked so"
        )
    who = done.signer or done.fingerprint or "nobody"
    sequence = f", sequence {done.sequence}" if done.sequence is not None else ""
    sys.stdout.write(
        visible(
            f"installed pack {done.name}: {counted(done.records, 'record')} in {done.namespace} "
            f"({done.signature}, signed by {who}{sequence})"
        )
        + "\n"
    )


def _allow_unsigned(args: list[str]) -> tuple[bool, list[str]]:
    """``--allow-unsigned`` (or ``=true``/``=false``) taken out of the raw command line."""
    from affidavit.packs import parse_bool, take_flag
    from affidavit.recall import installed_packs

    flag = installed_packs.ALLOW_UNSIGNED
    allowed, rest, index = False, [], 0
    while index < len(args):
        taken = take_flag(args, index, flag)
        if taken is None:
            rest.append(args[index])
            index += 1
        else:
            allowed, index = parse_bool(flag, taken[0]), taken[1]
    return allowed, rest


@click.command("uninstall")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print what was uninstalled as JSON.")
def uninstall(name: str, as_json: bool) -> None:
    """Take an installed pack out of recall (its folder stays)."""
    from affidavit.cli.opening import open_vault
    from affidavit.recall import installed_packs

    with open_vault() as vault:
        gone = installed_packs.uninstall(vault, name)
    if as_json:
        print_json(gone.as_dict())
    else:
        sys.stdout.write(visible(f"uninstalled pack {gone.name}") + "\n")
