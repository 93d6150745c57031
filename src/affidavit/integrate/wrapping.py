"""``affidavit wrap`` / ``unwrap``: put the verifying proxy in front of a client's stdio servers.

A stdio entry ``CMD ARGS`` becomes ``affidavit proxy -- CMD ARGS``; every other key of the entry
(``env``, ``cwd``, timeouts, approvals) stays as it was, so secrets stay in ``env`` and never
move into argv. Entries we cannot front are left alone and reported: remote servers (a URL,
Streamable HTTP, legacy SSE, OAuth), entries with no command (extension-provided, built-in) and
affidavit's own memory and pack servers (``affidavit devserver`` is a backend like any other
and is fronted). An entry already fronted is recognised, so wrapping twice changes
nothing. ``unwrap`` restores the backup byte for byte while the file is still what ``wrap``
wrote; after later edits it rewrites each wrapped entry back to the command after ``--``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.integrate import configfile
from affidavit.integrate.clients import REMOTE_TYPES, URL_KEYS, Client, Env
from affidavit.integrate.launcher import affidavit_command, affidavit_subcommand


@dataclass(frozen=True)
class Decision:
    """What wrap does with one server entry."""

    server: str
    action: str  # "wrap" | "skip" | "already"
    reason: str
    entry: dict[str, Any] | None = None  # the new entry when action == "wrap"


@dataclass(frozen=True)
class FileResult:
    """What wrap/unwrap did (or would do) to one client's config."""

    client: str
    path: Path
    decisions: list[Decision]
    written: bool
    note: str = ""


def _launch(client: Client, entry: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The stdio command and args of ``entry`` (Zed's older nested form included)."""
    command: Any = entry.get(client.command_key)
    args: Any = entry.get("args", [])
    if isinstance(command, dict):  # Zed's older form: {"command": {"path", "args", "env"}}
        command, args = command.get("path"), command.get("args", [])
    if not isinstance(command, str) or not command:
        return None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return command, list(args)


def _with_launch(
    client: Client, entry: dict[str, Any], command: str, args: list[str]
) -> dict[str, Any]:
    new = dict(entry)
    nested = new.get(client.command_key)
    if isinstance(nested, dict):
        new[client.command_key] = {**nested, "path": command, "args": args}
    else:
        new[client.command_key] = command
        new["args"] = args
    return new


def _remote_reason(entry: dict[str, Any]) -> str | None:
    for key in URL_KEYS:
        if entry.get(key):
            label = str(entry.get("type") or entry.get("transport") or "remote")
            return f"a {label} server at a URL; only stdio servers can be fronted"
    kind = entry.get("type") or entry.get("transport")
    if isinstance(kind, str) and kind in REMOTE_TYPES:
        return f"a {kind} server; only stdio servers can be fronted"
    if entry.get("oauth") or entry.get("auth"):
        return "an OAuth server; only stdio servers can be fronted"
    return None


def decide(client: Client, server: str, entry: dict[str, Any]) -> Decision:
    """Whether and how to front one entry."""
    remote = _remote_reason(entry)
    if remote:
        return Decision(server, "skip", remote)
    launch = _launch(client, entry)
    if launch is None:
        return Decision(server, "skip", "no stdio command (built-in or extension-provided)")
    command, args = launch
    sub = affidavit_subcommand(command, args)
    if sub is not None:
        if sub[:1] == ["proxy"]:
            return Decision(server, "already", "already behind affidavit proxy")
        if sub[:1] == ["serve"] or sub[:2] == ["pack", "serve"]:
            return Decision(server, "skip", "affidavit's own server (its answers need no proxy)")
    program, prefix = affidavit_command()
    new = _with_launch(client, entry, program, [*prefix, "proxy", "--", command, *args])
    return Decision(server, "wrap", f"{command} -> affidavit proxy -- {command}", new)


def unwrapped(client: Client, entry: dict[str, Any]) -> dict[str, Any] | None:
    """``entry`` with the proxy taken out, or None if it is not a wrapped entry."""
    launch = _launch(client, entry)
    if launch is None:
        return None
    sub = affidavit_subcommand(*launch)
    if sub is None or sub[:1] != ["proxy"] or "--" not in sub:
        return None
    inner = sub[sub.index("--") + 1 :]
    if not inner:
        return None
    return _with_launch(client, entry, inner[0], inner[1:])


def wrap(
    client: Client, *, dry_run: bool = False, home: Path | None = None, env: Env | None = None
) -> FileResult:
    """Front every stdio server in ``client``'s config with the proxy."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    decisions = [decide(client, name, entry) for name, entry in loaded.doc.servers().items()]
    todo = [d for d in decisions if d.action == "wrap" and d.entry is not None]
    if not todo or dry_run:
        return FileResult(client.key, path, decisions, written=False)
    for decision in todo:
        loaded.doc.put(decision.server, decision.entry or {})
    configfile.write(loaded, "wrap", loaded.doc.dumps().encode("utf-8"))
    return FileResult(client.key, path, decisions, written=True)


def unwrap(
    client: Client, *, dry_run: bool = False, home: Path | None = None, env: Env | None = None
) -> FileResult:
    """Take the proxy out again: byte-exact restore when possible, else entry by entry."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    wrapped = {
        name: new
        for name, entry in loaded.doc.servers().items()
        if (new := unwrapped(client, entry)) is not None
    }
    decisions = [Decision(name, "unwrap", "proxy removed") for name in wrapped]
    if not wrapped or dry_run:
        return FileResult(client.key, path, decisions, written=False)
    restored = configfile.undo_chain("wrap", path)
    loaded = configfile.load(client, path, snippet="")
    left = {
        name: new
        for name, entry in loaded.doc.servers().items()
        if (new := unwrapped(client, entry)) is not None
    }
    if not left:
        return FileResult(client.key, path, decisions, True, "backup restored byte for byte")
    for name, entry in left.items():
        loaded.doc.put(name, entry)
    configfile.write(loaded, "unwrap", loaded.doc.dumps().encode("utf-8"))
    note = "file was edited since wrap; entries unwrapped one by one"
    if restored:
        note = "older wrap restored byte for byte; later entries unwrapped one by one"
    return FileResult(client.key, path, decisions, True, note)
