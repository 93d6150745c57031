"""``affidavit integrate``: add one of affidavit's servers to a client config, or take it out.

Three kinds of entry, each under its own name: the memory server (``affidavit``, running
``serve --vault PATH``), a verified pack (``pack serve --pack DIR`` with its trust flags) and
any stdio server fronted by the verifying proxy (``proxy --receipts -- CMD ARGS``). Adding
merges one entry into the server map (other servers and settings stay as they are; an existing
entry of ours keeps the keys the user added to it, such as ``env``); a name already taken by a
server that is not affidavit's is refused. Removing restores the backup byte for byte when the
file is still exactly what we wrote; when the user edited it since, only our entry is removed,
so their edits survive. Each name has its own backup chain, so removing one entry never undoes
another.

The memory entry names the vault by absolute path: a client starts the server with a minimal
environment (no ``AFFIDAVIT_VAULT``, sometimes another ``HOME``), so a server left to find the
vault itself could open a different one than the user chose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.errors import ConflictError, InputError, UsageError
from affidavit.integrate import configfile
from affidavit.integrate.clients import Client, Env
from affidavit.integrate.formats import JsonServerMap
from affidavit.integrate.launcher import affidavit_command, affidavit_subcommand
from affidavit.integrate.wrapping import proxy_args

SERVER_NAME = "affidavit"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Entry:
    """One server entry to wire: its name in the client's map and affidavit's arguments."""

    name: str
    args: tuple[str, ...]  # after the absolute affidavit command


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one client's config."""

    client: str
    path: Path
    action: str  # "added" | "updated" | "unchanged" | "restored" | "removed" | "absent"
    detail: str = ""
    entry_text: str | None = None  # our entry alone, as the file would hold it (dry runs)


def check_name(name: str) -> str:
    """``name`` if it can name a server entry in every client format, else UsageError."""
    if not _NAME.match(name):
        raise UsageError(
            f"{name!r} cannot name a server entry",
            "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    return name


def memory_entry(caller: str | None, vault: Path | None = None) -> Entry:
    """The memory server, as ``caller``, on ``vault`` (absolute)."""
    args = ["serve"]
    if caller:
        args += ["--caller", caller]
    if vault is not None:
        args += ["--vault", str(Path(vault).expanduser().absolute())]
    return Entry(SERVER_NAME, tuple(args))


def pack_entry(name: str, pack: Path, trust_args: list[str]) -> Entry:
    """The read-only server of one pack, checked with ``trust_args`` at every start."""
    return Entry(check_name(name), ("pack", "serve", "--pack", str(pack), *trust_args))


def proxy_entry(name: str, backend: list[str]) -> Entry:
    """``backend`` (a stdio server command line) behind the verifying proxy."""
    if not backend:
        raise UsageError("--proxy needs the server to front after --", "e.g. -- uvx mcp-server-git")
    return Entry(check_name(name), tuple(proxy_args(backend[0], backend[1:])))


def paste_block(entry: Entry) -> str:
    """``entry`` as the ``mcpServers`` JSON block most apps accept when pasted into their MCP
    settings: for clients that keep their servers in app storage, not a file we can merge."""
    program, prefix = affidavit_command()
    doc = JsonServerMap("", ("mcpServers",))
    doc.put(entry.name, {"command": program, "args": [*prefix, *entry.args]})
    return doc.dumps()


def is_wired(client: Client, *, home: Path | None = None, env: Env | None = None) -> bool:
    """Whether ``client``'s config already has affidavit's memory entry (False when the file
    does not parse: wiring it then reports why)."""
    path = client.config_path(home=home, env=env)
    try:
        return SERVER_NAME in configfile.load(client, path, snippet="").doc.servers()
    except InputError:
        return False


def _op(name: str) -> str:
    """The backup-chain name of writes for entry ``name`` (the memory entry keeps the old one)."""
    return "integrate" if name == SERVER_NAME else f"integrate:{name}"


def _is_ours(client: Client, entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    launch = client.launch(entry)
    return launch is not None and affidavit_subcommand(*launch) is not None


def _refuse_foreign(client: Client, name: str, existing: object) -> None:
    if existing is not None and name != SERVER_NAME and not _is_ours(client, existing):
        raise ConflictError(
            f"{client.name} already has a server named {name!r} that is not affidavit's",
            "choose another --name",
        )


def add(
    client: Client,
    entry: Entry,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    env: Env | None = None,
) -> Outcome:
    """Write (or update) ``entry`` in ``client``'s config."""
    path = client.config_path(home=home, env=env)
    program, prefix = affidavit_command()
    args = [*prefix, *entry.args]
    client.check_args(args)
    snippet = client.snippet(entry.name, program, args)
    loaded = configfile.load(client, path, snippet)
    wanted = client.stdio_entry(entry.name, program, args)
    existing = loaded.doc.servers().get(entry.name)
    _refuse_foreign(client, entry.name, existing)
    merged = {**existing, **wanted} if existing else wanted
    if existing == merged:
        return Outcome(client.key, path, "unchanged", "already configured")
    loaded.doc.put(entry.name, merged)
    action = "updated" if existing else "added"
    if not dry_run:
        configfile.write(loaded, _op(entry.name), loaded.doc.dumps().encode("utf-8"))
    # Only our entry is shown: the rest of the file may hold other servers' tokens.
    shown = client.load("")
    shown.put(entry.name, merged)
    return Outcome(client.key, path, action, f"{program} {' '.join(args)}", shown.dumps())


def remove(
    client: Client,
    name: str = SERVER_NAME,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    env: Env | None = None,
) -> Outcome:
    """Undo ``add``: restore the backup if the file is untouched since, else drop our entry."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    existing = loaded.doc.servers().get(name)
    if existing is None:
        return Outcome(client.key, path, "absent", f"no {name} entry in this file")
    _refuse_foreign(client, name, existing)
    if dry_run:
        return Outcome(client.key, path, "removed", f"would remove the {name} entry")
    if configfile.undo_chain(_op(name), path):
        restored = configfile.load(client, path, snippet="")
        if name not in restored.doc.servers():
            return Outcome(client.key, path, "restored", "backup restored byte for byte")
        loaded = restored
    loaded.doc.remove(name)
    configfile.write(loaded, "integrate-remove", loaded.doc.dumps().encode("utf-8"))
    return Outcome(
        client.key, path, "removed", f"file was edited since; removed only the {name} entry"
    )
