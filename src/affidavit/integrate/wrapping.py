"""``affidavit wrap`` / ``unwrap``: put the verifying proxy in front of a client's stdio servers.

A stdio entry ``CMD ARGS`` becomes ``affidavit proxy --receipts --root DIR... -- CMD ARGS``: the
roots are the directories the server is given in its own arguments (an absolute or ``~`` path
to an existing directory, alone or as ``--option=DIR``), so the verifiers can look where the
server works instead of answering every file claim ``unchecked``; ``--receipts`` shows each
verdict to the model. GitHub's own MCP server also gets ``--github-api URL``, which turns the
GitHub verifier on with the token the server is already given (:mod:`.github_server`). Every
other key of the entry (``env``, ``cwd``, timeouts, approvals)
stays as it was, so secrets stay in ``env`` and never move into argv. Claude Code's
per-project servers (``projects.<path>.mcpServers`` in ``~/.claude.json``) are fronted like
the user-level ones. Entries we cannot front are left alone and reported: remote servers (a URL,
Streamable HTTP, legacy SSE, OAuth), entries with no command (extension-provided, built-in) and
affidavit's own memory and pack servers (``affidavit devserver`` is a backend like any other
and is fronted). An entry already fronted is recognised, so wrapping twice changes
nothing. ``unwrap`` restores the backup byte for byte while the file is still what ``wrap``
wrote; after later edits it rewrites each wrapped entry back to the command after ``--``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from affidavit.integrate import configfile
from affidavit.integrate.clients import REMOTE_TYPES, URL_KEYS, Client, Env
from affidavit.integrate.formats import ServerMap
from affidavit.integrate.github_server import entry_env, github_api_for
from affidavit.integrate.launcher import affidavit_command, affidavit_subcommand


@dataclass(frozen=True)
class Decision:
    """What wrap does with one server entry (``scope``: its project, "" for the user's own)."""

    server: str
    action: str  # "wrap" | "skip" | "already" | "unwrap"
    reason: str
    entry: dict[str, Any] | None = None  # the new entry when action == "wrap"
    scope: str = ""


@dataclass(frozen=True)
class FileResult:
    """What wrap/unwrap did (or would do) to one client's config."""

    client: str
    path: Path
    decisions: list[Decision]
    written: bool
    note: str = ""


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


def inferred_roots(args: list[str]) -> list[str]:
    """The directories a server is given in its arguments, as written: absolute (or ``~``)
    paths to directories that exist, alone or as ``--option=DIR``; first seen first."""
    roots: list[str] = []
    for arg in args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        path = Path(value).expanduser()  # relative paths depend on the client's cwd: skipped
        if path.is_absolute() and path.is_dir() and value not in roots:
            roots.append(value)
    return roots


def proxy_args(command: str, args: list[str], env: Mapping[str, str] | None = None) -> list[str]:
    """The arguments of ``affidavit`` that front ``command args`` (started with ``env`` added
    to its environment) with the proxy. Nothing of ``env`` is copied into them."""
    options = ["--receipts"]
    for root in inferred_roots(args):
        options += ["--root", root]
    github_api = github_api_for(command, args, env or {})
    if github_api is not None:
        options += ["--github-api", github_api]
    return ["proxy", *options, "--", command, *args]


def decide(client: Client, server: str, entry: dict[str, Any]) -> Decision:
    """Whether and how to front one entry."""
    remote = _remote_reason(entry)
    if remote:
        return Decision(server, "skip", remote)
    launch = client.launch(entry)
    if launch is None:
        return Decision(server, "skip", "no stdio command (built-in or extension-provided)")
    command, args = launch
    sub = affidavit_subcommand(command, args)
    if sub is not None:
        if sub[:1] == ["proxy"]:
            return Decision(server, "already", "already behind affidavit proxy")
        if sub[:1] == ["serve"] or sub[:2] in (["memory", "serve"], ["pack", "serve"]):
            return Decision(server, "skip", "affidavit's own server (its answers need no proxy)")
    program, prefix = affidavit_command()
    fronted = proxy_args(command, args, entry_env(entry))
    new = client.with_launch(entry, program, [*prefix, *fronted])
    return Decision(server, "wrap", f"{command} -> affidavit proxy -- {command}", new)


def unwrapped(client: Client, entry: dict[str, Any]) -> dict[str, Any] | None:
    """``entry`` with the proxy taken out, or None if it is not a wrapped entry."""
    launch = client.launch(entry)
    if launch is None:
        return None
    sub = affidavit_subcommand(*launch)
    if sub is None or sub[:1] != ["proxy"] or "--" not in sub:
        return None
    inner = sub[sub.index("--") + 1 :]
    if not inner:
        return None
    return client.with_launch(entry, inner[0], inner[1:])


def _unwrapped_entries(client: Client, doc: ServerMap) -> list[tuple[ServerMap, Decision]]:
    """Every wrapped entry in every scope, with the entry it becomes without the proxy."""
    found = []
    for scope, servers in client.scopes(doc):
        for name, entry in servers.servers().items():
            new = unwrapped(client, entry)
            if new is not None:
                found.append((servers, Decision(name, "unwrap", "proxy removed", new, scope)))
    return found


def wrap(
    client: Client, *, dry_run: bool = False, home: Path | None = None, env: Env | None = None
) -> FileResult:
    """Front every stdio server in ``client``'s config (every project's too) with the proxy."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    todo: list[tuple[ServerMap, Decision]] = []
    decisions = []
    for scope, servers in client.scopes(loaded.doc):
        for name, entry in servers.servers().items():
            decision = replace(decide(client, name, entry), scope=scope)
            decisions.append(decision)
            if decision.action == "wrap":
                todo.append((servers, decision))
    if not todo or dry_run:
        return FileResult(client.key, path, decisions, written=False)
    for servers, decision in todo:
        servers.put(decision.server, decision.entry or {})
    configfile.write(loaded, "wrap", loaded.doc.dumps().encode("utf-8"))
    return FileResult(client.key, path, decisions, written=True)


def unwrap(
    client: Client, *, dry_run: bool = False, home: Path | None = None, env: Env | None = None
) -> FileResult:
    """Take the proxy out again: byte-exact restore when possible, else entry by entry."""
    path = client.config_path(home=home, env=env)
    loaded = configfile.load(client, path, snippet="")
    decisions = [d for _, d in _unwrapped_entries(client, loaded.doc)]
    if not decisions or dry_run:
        return FileResult(client.key, path, decisions, written=False)
    restored = configfile.undo_chain("wrap", path)
    loaded = configfile.load(client, path, snippet="")
    left = _unwrapped_entries(client, loaded.doc)
    if not left:
        return FileResult(client.key, path, decisions, True, "backup restored byte for byte")
    for servers, decision in left:
        servers.put(decision.server, decision.entry or {})
    configfile.write(loaded, "unwrap", loaded.doc.dumps().encode("utf-8"))
    note = "file was edited since wrap; entries unwrapped one by one"
    if restored:
        note = "older wrap restored byte for byte; later entries unwrapped one by one"
    return FileResult(client.key, path, decisions, True, note)
