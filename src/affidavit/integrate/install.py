"""``affidavit integrate``: add affidavit's memory server to a client config, or take it out.

Adding merges one entry into the server map (other servers and settings stay as they are; an
existing ``affidavit`` entry keeps the keys the user added to it, such as ``env``). Removing
restores the backup byte for byte when the file is still exactly what we wrote; when the user
edited it since, only our entry is removed, so their edits survive.

The entry names the vault by absolute path (``serve --vault PATH``): a client starts the server
with a minimal environment (no ``AFFIDAVIT_VAULT``, sometimes another ``HOME``), so a server
left to find the vault itself could open a different one than the user chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from affidavit.integrate import configfile
from affidavit.integrate.clients import Client, Env
from affidavit.integrate.launcher import affidavit_command

SERVER_NAME = "affidavit"


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one client's config."""

    client: str
    path: Path
    action: str  # "added" | "updated" | "unchanged" | "restored" | "removed" | "absent"
    detail: str = ""
    entry_text: str | None = None  # our entry alone, as the file would hold it (dry runs)


def server_args(caller: str | None, vault: Path | None = None) -> tuple[str, list[str]]:
    """The absolute command and arguments of the ``affidavit serve`` entry."""
    command, prefix = affidavit_command()
    args = [*prefix, "serve"]
    if caller:
        args += ["--caller", caller]
    if vault is not None:
        args += ["--vault", str(Path(vault).expanduser().absolute())]
    return command, args


def add(
    client: Client,
    *,
    caller: str | None = None,
    vault: Path | None = None,
    dry_run: bool = False,
    home: Path | None = None,
    env: Env | None = None,
) -> Outcome:
    """Write (or update) the affidavit server entry in ``client``'s config."""
    path = client.config_path(home=home, env=env)
    command, args = server_args(caller, vault)
    snippet = client.snippet(SERVER_NAME, command, args)
    loaded = configfile.load(client, path, snippet)
    wanted = client.stdio_entry(SERVER_NAME, command, args)
    existing = loaded.doc.servers().get(SERVER_NAME)
    merged = {**existing, **wanted} if existing else wanted
    if existing == merged:
        return Outcome(client.key, path, "unchanged", "already configured")
    loaded.doc.put(SERVER_NAME, merged)
    action = "updated" if existing else "added"
    if not dry_run:
        configfile.write(loaded, "integrate", loaded.doc.dumps().encode("utf-8"))
    # Only our entry is shown: the rest of the file may hold other servers' tokens.
    shown = client.load("")
    shown.put(SERVER_NAME, merged)
    return Outcome(client.key, path, action, f"{command} {' '.join(args)}", shown.dumps())


def remove(
    client: Client, *, dry_run: bool = False, home: Path | None = None, env: Env | None = None
) -> Outcome:
    """Undo ``add``: restore the backup if the file is untouched since, else drop our entry."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    if SERVER_NAME not in loaded.doc.servers():
        return Outcome(client.key, path, "absent", "no affidavit entry in this file")
    if dry_run:
        return Outcome(client.key, path, "removed", "would remove the affidavit entry")
    if configfile.undo_chain("integrate", path):
        restored = configfile.load(client, path, snippet="")
        if SERVER_NAME not in restored.doc.servers():
            return Outcome(client.key, path, "restored", "backup restored byte for byte")
        loaded = restored
    loaded.doc.remove(SERVER_NAME)
    configfile.write(loaded, "integrate-remove", loaded.doc.dumps().encode("utf-8"))
    return Outcome(
        client.key, path, "removed", "file was edited since; removed only the affidavit entry"
    )
