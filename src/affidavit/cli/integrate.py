"""``affidavit integrate`` (wire affidavit into MCP clients) and ``proxy wrap`` / ``unwrap``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from affidavit.cli.output import print_json, stderr, stdout, warn
from affidavit.cli.params import EXISTING, PATH, json_option
from affidavit.core.errors import AffidavitError, InputError, UsageError

if TYPE_CHECKING:
    from affidavit.integrate.clients import Client
    from affidavit.integrate.install import Entry
    from affidavit.integrate.wrapping import FileResult


def _installed() -> list[Client]:
    from affidavit.integrate.clients import CLIENTS

    return [c for c in CLIENTS if c.installed()]


def _with_config() -> list[Client]:
    from affidavit.integrate.clients import CLIENTS

    return [c for c in CLIENTS if c.config_path().exists()]


def _client_rows() -> list[dict[str, object]]:
    """Every known client: what ``integrate --list`` shows, and its ``--json``."""
    from affidavit.integrate.clients import CLIENTS

    return [
        {
            "client": c.key,
            "name": c.name,
            "installed": c.installed(),
            "format": {"yaml-map": "yaml", "yaml-list": "yaml"}.get(c.fmt, c.fmt),
            "config_file": str(c.config_path()),
        }
        for c in CLIENTS
    ]


def _show_list(as_json: bool) -> None:
    rows = _client_rows()
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    table = Table("client", "name", "installed", "format", box=None)
    table.add_column("config file", overflow="fold")
    for r in rows:
        installed = "yes" if r["installed"] else "-"
        cells = (r["client"], r["name"], installed, r["format"], r["config_file"])
        table.add_row(*map(str, cells))
    stdout.print(table)


def _run_each(clients: list[Client], action: str, job: object) -> None:
    """Run ``job(client)`` for each client; report every failure, raise the first at the end."""
    from affidavit.integrate.configfile import UnparsableConfig

    first: AffidavitError | None = None
    for c in clients:
        try:
            job(c)  # type: ignore[operator]
        except UnparsableConfig as exc:
            if exc.snippet:
                stdout.print(f"# {c.name}: add this to {c.config_path()}", markup=False)
                stdout.print(exc.snippet, markup=False, end="")
            if len(clients) == 1:
                raise
            warn(f"{c.key}: {exc}")
            first = first or exc
        except AffidavitError as exc:
            if len(clients) == 1:
                raise
            warn(f"{c.key}: {exc}")
            first = first or exc
    if first is not None:
        kind = InputError if isinstance(first, UnparsableConfig) else type(first)
        raise kind(f"{action} failed for some clients (see above)", first.hint)


_DRY_RUN = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
_CLIENT = click.option("--client", help="Only this client's config.")


@click.command("integrate")
@click.argument("client", required=False, help="Client to wire, e.g. claude-code, cursor.")
@click.argument(
    "command",
    nargs=-1,
    type=click.UNPROCESSED,
    help="After --: the server to front (--proxy) or pack serve's trust flags (--pack).",
)
@click.option("--list", "list_", is_flag=True, help="List the known clients and their files.")
@click.option("--all", "all_", is_flag=True, help="Wire every known client installed here.")
@click.option(
    "--print",
    "print_",
    is_flag=True,
    help="Print the mcpServers block to paste into an app that keeps its servers itself.",
)
@click.option("--remove", metavar="CLIENT", help="Take affidavit out of CLIENT's config again.")
@click.option("--caller", help="Connect as this caller (its own namespace); default: user.")
@click.option(
    "--vault",
    type=PATH,
    help="The vault the server opens (default: AFFIDAVIT_VAULT, else yours).",
)
@click.option("--pack", type=EXISTING, help="Wire `pack serve` for this verified pack instead.")
@click.option("--proxy", is_flag=True, help="Wire the server after -- behind the proxy instead.")
@click.option("--name", help="The entry's name (default: affidavit; pack-DIRNAME for --pack).")
@_DRY_RUN
@json_option
def integrate(
    client: str | None,
    command: tuple[str, ...],
    list_: bool,
    all_: bool,
    print_: bool,
    remove: str | None,
    caller: str | None,
    vault: Path | None,
    pack: Path | None,
    proxy: bool,
    name: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Add affidavit's servers to an MCP client's config.

    By default the memory server; `--pack DIR [-- TRUST FLAGS]` wires the pack's read-only
    server instead (verified now, and at every start), `--proxy --name N -- CMD ARGS` wires
    CMD behind the verifying proxy. The config is backed up first, merged (your other
    servers and keys stay) and written atomically; --remove CLIENT [--name N] takes it out
    again.
    """
    from affidavit.integrate import install
    from affidavit.integrate.clients import client as lookup

    if list_:
        _show_list(as_json)
        return
    if as_json:
        raise UsageError("--json goes with --list", "e.g. affidavit integrate --list --json")
    if (all_ or print_) and client and proxy:
        command, client = (client, *command), None  # after --, click filled CLIENT first
    if sum(bool(x) for x in (client, all_, remove, print_)) != 1:
        raise UsageError("name one CLIENT, or pass --all, --print, --remove CLIENT or --list")
    if remove:
        target = lookup(remove)
        gone = install.remove(target, install.check_name(name or "affidavit"), dry_run=dry_run)
        if dry_run and gone.action == "removed":
            stdout.print(f"{target.key}: would remove: {gone.path} (dry run)", markup=False)
        else:
            stdout.print(f"{target.key}: {gone.action}: {gone.path} ({gone.detail})", markup=False)
        return
    entry, chosen = _entry(command, caller, vault, pack, proxy, name)
    if print_:
        stdout.print(install.paste_block(entry), markup=False, end="")
        return
    targets = [lookup(client)] if client else _installed()
    if not targets:
        stdout.print("no known MCP client is installed here (see affidavit integrate --list)")
        return

    def job(c: Client) -> None:
        outcome = install.add(c, entry, dry_run=dry_run)
        prefix = "would be " if dry_run and outcome.action != "unchanged" else ""
        stdout.print(f"{c.key}: {prefix}{outcome.action}: {outcome.path}", markup=False)
        if dry_run and outcome.entry_text is not None:
            stdout.print(outcome.entry_text, markup=False, end="")

    _run_each(targets, "integrate", job)
    if chosen is not None:
        _warn_if_no_vault(chosen)


def _entry(
    command: tuple[str, ...],
    caller: str | None,
    vault: Path | None,
    pack: Path | None,
    proxy: bool,
    name: str | None,
) -> tuple[Entry, Path | None]:
    """The entry to wire, and the vault it opens (memory server only); usage errors first."""
    from affidavit.integrate import install

    if pack is not None and proxy:
        raise UsageError("--pack and --proxy each wire one server", "give one of them")
    if (pack is not None or proxy) and (caller or vault):
        raise UsageError("--caller and --vault are the memory server's", "leave them out")
    if pack is not None:
        return _pack_entry(pack, list(command), name), None
    if proxy:
        if not name:
            raise UsageError("--proxy needs --name", "e.g. --name git")
        return install.proxy_entry(name, list(command)), None
    if command or name:
        raise UsageError(
            "arguments after -- and --name go with --pack or --proxy",
            "the memory server's entry is always called affidavit",
        )
    if caller is not None:
        from affidavit import access

        access.check_name(caller, "caller")
    from affidavit.core import paths

    chosen = (vault or paths.vault_dir()).expanduser().absolute()
    return install.memory_entry(caller, chosen), chosen


def _pack_entry(pack: Path, trust_args: list[str], name: str | None) -> Entry:
    """Verify the pack with the flags `pack serve` will be given, then name its entry."""
    import re

    from affidavit.cli.pack_serve import PACK_FLAG, parse_serve_args
    from affidavit.integrate import install
    from affidavit.packs import verify_pack

    directory = pack.expanduser().absolute()
    pack_dir, trust = parse_serve_args([PACK_FLAG, str(directory), *trust_args])
    for message in verify_pack(pack_dir, trust).warnings:
        warn(message)
    default = "pack-" + re.sub(r"[^A-Za-z0-9._-]+", "-", directory.name).strip("-")[:59]
    return install.pack_entry(name or default, pack_dir, trust_args)


def offer_clients(vault: Path, choice: bool | None) -> None:
    """After ``init``: add the memory server to the MCP clients installed here that lack it.

    ``choice`` is the user's ``--integrate`` / ``--no-integrate``; without one, a person at a
    terminal is asked, and a script is only told what it could run. Messages go to stderr so
    ``init --json`` keeps stdout to its one JSON value.
    """
    from affidavit.integrate import install

    found = [c for c in _installed() if not install.is_wired(c)]
    if not found:
        return
    names = ", ".join(c.name for c in found)
    if choice is None and sys.stdin.isatty():
        choice = click.confirm(
            f"Found {names}. Add affidavit's memory server to them?", default=True, err=True
        )
    if not choice:
        if choice is None:
            warn(f"found MCP clients: {names}; wire them with `affidavit integrate --all`")
        return
    entry = install.memory_entry(None, vault)

    def job(c: Client) -> None:
        outcome = install.add(c, entry)
        stderr.print(f"{c.key}: {outcome.action}: {outcome.path}", markup=False)

    _run_each(found, "integrate", job)


def _warn_if_no_vault(chosen: Path) -> None:
    """Say so when the vault the wired server will open does not exist yet."""
    import shlex

    from affidavit.core import paths
    from affidavit.vault import DB_NAME, store

    if (chosen / DB_NAME).is_file() or (chosen / store.POINTER_NAME).is_file():
        return  # a file vault, or the pointer to a team vault
    init = "affidavit init"
    if chosen != (paths.affidavit_home() / "vault").expanduser().absolute():
        init = f"AFFIDAVIT_VAULT={shlex.quote(str(chosen))} {init}"
    warn(f"no vault at {chosen} yet: run `{init}` before the client starts the server")


def _report(result: FileResult, dry_run: bool, empty: str) -> None:
    stdout.print(f"{result.client}: {result.path}", markup=False)
    if not result.decisions:
        stdout.print(f"  ({empty})")
    for d in result.decisions:
        label = {"wrap": "wrapped", "unwrap": "unwrapped"}.get(d.action, d.action)
        if dry_run and d.action in {"wrap", "unwrap"}:
            label = f"would {d.action}"
        where = f"{d.scope}: " if d.scope else ""
        stdout.print(f"  {where}{d.server}: {label}: {d.reason}", markup=False)
    if result.note:
        stdout.print(f"  {result.note}", markup=False)


def _result_json(result: FileResult, dry_run: bool) -> dict[str, object]:
    """One client's file as ``proxy wrap/unwrap --json`` prints it: what was (or, with
    --dry-run, would be) done to each server entry, and why."""
    return {
        "client": result.client,
        "path": str(result.path),
        "written": result.written,
        "dry_run": dry_run,
        "servers": [
            {"scope": d.scope, "server": d.server, "action": d.action, "reason": d.reason}
            for d in result.decisions
        ],
        "note": result.note,
    }


def _wrap_targets(client: str | None, as_json: bool) -> list[Client]:
    from affidavit.integrate.clients import client as lookup

    if client:
        return [lookup(client)]
    found = _with_config()
    if not found and not as_json:
        stdout.print("no MCP client config found here (see affidavit integrate --list)")
    return found


def _rewrite_each(
    client: str | None, dry_run: bool, as_json: bool, action: str, empty: str
) -> None:
    """``proxy wrap`` / ``unwrap`` (``action``) over the chosen clients' configs; a line per
    server, or with --json one list of every file's result."""
    from affidavit.integrate import wrapping

    rewrite = wrapping.wrap if action == "wrap" else wrapping.unwrap
    results: list[dict[str, object]] = []

    def job(c: Client) -> None:
        result = rewrite(c, dry_run=dry_run)
        if as_json:
            results.append(_result_json(result, dry_run))
        else:
            _report(result, dry_run, empty)

    try:
        _run_each(_wrap_targets(client, as_json), action, job)
    finally:
        if as_json:
            print_json(results)


@click.command("wrap")
@_CLIENT
@_DRY_RUN
@json_option
def wrap(client: str | None, dry_run: bool, as_json: bool) -> None:
    """Put the proxy in front of your clients' MCP servers.

    Every stdio server in the client configs found here (or --client's) is rewritten to run
    through `affidavit proxy`; `unwrap` restores the original entries.
    """
    _rewrite_each(client, dry_run, as_json, "wrap", "no servers")


@click.command("unwrap")
@_CLIENT
@_DRY_RUN
@json_option
def unwrap(client: str | None, dry_run: bool, as_json: bool) -> None:
    """Take the proxy out of your clients' configs again.

    The original entries are restored byte for byte.
    """
    _rewrite_each(client, dry_run, as_json, "unwrap", "nothing wrapped")
