"""``affidavit hook install|remove claude-code``: the capture hook in Claude Code's settings.

Claude Code runs the commands listed under ``hooks.Stop`` in ``~/.claude/settings.json``
(``$CLAUDE_CONFIG_DIR/settings.json`` when set) each time the agent finishes answering, with a
JSON object on stdin naming the session's ``transcript_path``. We add one such command,
``affidavit hook run claude-code``, next to whatever hooks the user already has.

The edit is integrate's: the file is parsed into spans and only the ``Stop`` list changes
(comments and every other byte stay), the old bytes are backed up first, and removing restores
that backup byte for byte while the file is still exactly what we wrote; after the user edited
it, only our command is taken out.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError
from affidavit.integrate import configfile
from affidavit.integrate.clients import Client, Env
from affidavit.integrate.formats import JsonServerMap
from affidavit.integrate.install import Outcome
from affidavit.integrate.launcher import affidavit_command, affidavit_subcommand

OP = "hook"
_RUN = ["hook", "run", "claude-code"]
_STOP = ("hooks", "Stop")


def _settings(home: Path, env: Env) -> Path:
    override = env.get("CLAUDE_CONFIG_DIR")
    return (Path(override) if override else home / ".claude") / "settings.json"


SETTINGS = Client(
    "claude-code-hooks",
    "Claude Code settings",
    "json",
    ("hooks",),
    {platform: _settings for platform in ("linux", "darwin", "win32")},
)


def hook_command(vault: Path | None = None) -> str:
    """The shell command the hook runs: affidavit by absolute path (hooks get a bare PATH)."""
    command, prefix = affidavit_command()
    args = [command, *prefix, *_RUN]
    if vault is not None:
        args += ["--vault", str(Path(vault).expanduser().absolute())]
    return shlex.join(args)


def _ours(entry: Any) -> bool:
    """Whether a ``Stop`` matcher group runs ``affidavit hook run claude-code``."""
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    for hook in hooks if isinstance(hooks, list) else ():
        command = hook.get("command") if isinstance(hook, dict) else None
        try:
            words = shlex.split(command) if isinstance(command, str) else []
        except ValueError:
            continue
        rest = affidavit_subcommand(words[0], words[1:]) if words else None
        if rest is not None and rest[:3] == _RUN:
            return True
    return False


def _stop_list(loaded: configfile.Loaded) -> tuple[JsonServerMap, list[Any]]:
    doc = loaded.doc
    assert isinstance(doc, JsonServerMap)
    stop = doc.doc.get(_STOP)
    if stop is not None and not isinstance(stop, list):
        raise InputError(
            f"{loaded.path}: 'hooks.Stop' is not a list; affidavit left the file untouched",
            "fix the file, or add the hook by hand",
        )
    return doc, list(stop or [])


def _snippet(command: str) -> str:
    """The block a user can paste by hand when the file will not be edited."""
    hook = {"type": "command", "command": command}
    return json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}, indent=2)


def install(
    *,
    vault: Path | None = None,
    dry_run: bool = False,
    home: Path | None = None,
    env: Env | None = None,
) -> Outcome:
    """Add the capture hook to Claude Code's settings (unchanged if it is there)."""
    path = SETTINGS.config_path(home=home, env=env)
    command = hook_command(vault)
    loaded = configfile.load(SETTINGS, path, _snippet(command))
    doc, stop = _stop_list(loaded)
    if any(_ours(entry) for entry in stop):
        return Outcome(SETTINGS.key, path, "unchanged", "the capture hook is already there")
    doc.doc.set(_STOP, [*stop, {"hooks": [{"type": "command", "command": command}]}])
    if not dry_run:
        configfile.write(loaded, OP, doc.dumps().encode("utf-8"))
    return Outcome(SETTINGS.key, path, "added", command)


def remove(*, dry_run: bool = False, home: Path | None = None, env: Env | None = None) -> Outcome:
    """Undo :func:`install`: the backup byte for byte if untouched since, else our entry only."""
    path = SETTINGS.config_path(home=home, env=env)
    loaded = configfile.load(SETTINGS, path, snippet="")
    _, stop = _stop_list(loaded)
    if not any(_ours(entry) for entry in stop):
        return Outcome(SETTINGS.key, path, "absent", "no affidavit hook in this file")
    if dry_run:
        return Outcome(SETTINGS.key, path, "removed", "would remove the affidavit hook")
    if configfile.undo_chain(OP, path):
        loaded = configfile.load(SETTINGS, path, snippet="")
        _, stop = _stop_list(loaded)
        if not any(_ours(entry) for entry in stop):
            return Outcome(SETTINGS.key, path, "restored", "backup restored byte for byte")
    doc, stop = _stop_list(loaded)
    kept = [entry for entry in stop if not _ours(entry)]
    if kept:
        doc.doc.set(_STOP, kept)
    else:
        doc.doc.delete(_STOP)
        if doc.doc.get(("hooks",)) == {}:
            doc.doc.delete(("hooks",))
    configfile.write(loaded, f"{OP}-remove", doc.dumps().encode("utf-8"))
    return Outcome(
        SETTINGS.key, path, "removed", "file was edited since; removed only the affidavit hook"
    )
