"""The MCP clients ``affidavit integrate`` knows: where each keeps its servers, and in what shape.

Locations are the user-level (global) config of each client on Linux, macOS and Windows, as
their documentation or source gives them (docs/integrate.md says where each was confirmed).
The environment variables a client reads to move its config (``XDG_CONFIG_HOME``,
``XDG_DATA_HOME``, ``APPDATA``, ``LOCALAPPDATA``, ``CODEX_HOME``, ``COPILOT_HOME``,
``CLAUDE_CONFIG_DIR``, ``HERMES_HOME``, ``OPENCLAW_*``, ``CRUSH_GLOBAL_CONFIG``,
``JAN_DATA_ROOT``) are honoured where the client honours them. A client counts as installed
here when the directory it keeps its config in exists (a client creates it on first run), or
the folder its ``marker`` names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.core.errors import UsageError
from affidavit.integrate.formats import JsonServerMap, ServerMap, TomlServerMap, YamlServerMap

PLATFORMS = ("linux", "darwin", "win32")
Env = Mapping[str, str]
PathRule = Callable[[Path, Env], Path]

# Entry keys that mark a server reached over the network rather than launched over stdio.
URL_KEYS = ("url", "serverUrl", "httpUrl", "uri")
REMOTE_TYPES = frozenset({"sse", "http", "streamable_http", "streamable-http", "streamableHttp"})


def _xdg(home: Path, env: Env) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config")


def _appdata(home: Path, env: Env) -> Path:
    return Path(env.get("APPDATA") or home / "AppData" / "Roaming")


def _app_support(home: Path, env: Env) -> Path:
    return home / "Library" / "Application Support"


def _localappdata(home: Path, env: Env) -> Path:
    return Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")


def _xdg_data(home: Path, env: Env) -> Path:
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")


def _electron_app_data(platform: str) -> PathRule:
    """Electron's ``appData``, under which an app keeps its ``userData`` folder."""
    return {"linux": _xdg, "darwin": _app_support, "win32": _appdata}[platform]


def _vscode_user(platform: str, product: str = "Code") -> PathRule:
    base = {"linux": _xdg, "darwin": _app_support, "win32": _appdata}[platform]
    return lambda home, env: base(home, env) / product / "User"


def _everywhere(rule: PathRule) -> dict[str, PathRule]:
    return dict.fromkeys(PLATFORMS, rule)


def _per_platform(linux: PathRule, darwin: PathRule, win32: PathRule) -> dict[str, PathRule]:
    return {"linux": linux, "darwin": darwin, "win32": win32}


@dataclass(frozen=True)
class Client:
    """One MCP client: its config file per platform and the shape of a server entry in it."""

    key: str
    name: str
    fmt: str  # "json" | "toml" | "yaml-map" | "yaml-list"
    container: tuple[str, ...]  # where the server map sits in the file
    paths: dict[str, PathRule]
    command_key: str = "command"
    new_entry_extra: dict[str, Any] = field(default_factory=dict)
    entry_has_name: bool = False
    marker: PathRule | None = None  # what proves it is installed, when not the config's folder
    projects: tuple[str, str] | None = None  # (parent, child): servers at parent.<project>.child
    argv: bool = False  # the command and its arguments are one list under command_key (opencode)
    joins_args: bool = False  # the client joins args with spaces and splits them again (Witsy)

    def config_path(
        self, *, platform: str | None = None, home: Path | None = None, env: Env | None = None
    ) -> Path:
        """The config file on ``platform`` (default: this machine) for the user at ``home``."""
        platform = _platform_key(platform or sys.platform)
        home = Path.home() if home is None else home
        return self.paths[platform](home, os.environ if env is None else env)

    def installed(self, *, home: Path | None = None, env: Env | None = None) -> bool:
        """Whether this client's config file, or the folder it keeps it in, exists here."""
        path = self.config_path(home=home, env=env)
        if path.exists():
            return True
        if self.marker is not None:
            home = Path.home() if home is None else home
            return self.marker(home, os.environ if env is None else env).is_dir()
        return path.parent.is_dir()

    def load(self, text: str) -> ServerMap:
        """Parse the config text into its server map (InputError if it does not parse)."""
        if self.fmt == "json":
            return JsonServerMap(text, self.container)
        if self.fmt == "toml":
            return TomlServerMap(text, self.container[0])
        return YamlServerMap(text, self.container[0], as_list=self.fmt == "yaml-list")

    def check_args(self, args: list[str]) -> None:
        """UsageError when this client would not pass ``args`` to the server as given."""
        if self.joins_args and any(not a or any(c.isspace() for c in a) for a in args):
            raise UsageError(
                f"{self.name} joins a server's arguments with spaces and splits them again, "
                "so an empty argument or one with a space would not arrive as written",
                "use paths without spaces (e.g. --vault), or add the server in its settings",
            )

    def stdio_entry(self, name: str, command: str, args: list[str]) -> dict[str, Any]:
        """A new server entry that launches ``command args`` over stdio."""
        entry = self.with_launch({"name": name} if self.entry_has_name else {}, command, args)
        entry.update(self.new_entry_extra)
        return entry

    def launch(self, entry: dict[str, Any]) -> tuple[str, list[str]] | None:
        """The stdio command and args of ``entry`` (Zed's older nested form and opencode's
        one-list form included); None when the entry launches nothing we can read."""
        command: Any = entry.get(self.command_key)
        args: Any = entry.get("args", [])
        if isinstance(command, dict):  # Zed's older form: {"command": {"path", "args", "env"}}
            command, args = command.get("path"), command.get("args", [])
        elif self.argv and isinstance(command, list) and command:
            command, args = command[0], command[1:]
        if not isinstance(command, str) or not command:
            return None
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return None
        return command, list(args)

    def with_launch(self, entry: dict[str, Any], command: str, args: list[str]) -> dict[str, Any]:
        """``entry`` launching ``command args`` instead, in the shape it already has."""
        new = dict(entry)
        nested = new.get(self.command_key)
        if isinstance(nested, dict):
            new[self.command_key] = {**nested, "path": command, "args": list(args)}
        elif self.argv:
            new[self.command_key] = [command, *args]
        else:
            new[self.command_key] = command
            new["args"] = list(args)
        return new

    def scopes(self, doc: ServerMap) -> list[tuple[str, ServerMap]]:
        """Every server map in a loaded config: ``("", doc)``, then one per project that has
        servers of its own (Claude Code's ``projects.<path>.mcpServers``), labelled by project."""
        found: list[tuple[str, ServerMap]] = [("", doc)]
        if self.projects is None or not isinstance(doc, JsonServerMap):
            return found
        parent, child = self.projects
        projects = doc.doc.get((parent,))
        for project, settings in (projects if isinstance(projects, dict) else {}).items():
            if isinstance(settings, dict) and isinstance(settings.get(child), dict):
                found.append((project, JsonServerMap(doc.doc, (parent, project, child))))
        return found

    def snippet(self, name: str, command: str, args: list[str]) -> str:
        """The block a user can paste by hand when we refuse to edit the file."""
        doc = self.load("")
        doc.put(name, self.stdio_entry(name, command, args))
        return doc.dumps()


def _platform_key(platform: str) -> str:
    if platform.startswith("win"):
        return "win32"
    if platform == "darwin":
        return "darwin"
    return "linux"


def _home_rule(*parts: str) -> PathRule:
    return lambda home, env: home.joinpath(*parts)


def _claude_code(home: Path, env: Env) -> Path:
    override = env.get("CLAUDE_CONFIG_DIR")
    return Path(override) / ".claude.json" if override else home / ".claude.json"


def _codex(home: Path, env: Env) -> Path:
    override = env.get("CODEX_HOME")
    return (Path(override) if override else home / ".codex") / "config.toml"


def _copilot(home: Path, env: Env) -> Path:
    override = env.get("COPILOT_HOME")
    return (Path(override) if override else home / ".copilot") / "mcp-config.json"


def _under(rule: PathRule, *parts: str) -> PathRule:
    return lambda home, env: rule(home, env).joinpath(*parts)


def _env_dir(name: str, default: PathRule) -> PathRule:
    """The folder ``$name`` names when it is set (and not blank), else ``default``."""

    def rule(home: Path, env: Env) -> Path:
        value = env.get(name, "").strip()
        return Path(value).expanduser() if value else default(home, env)

    return rule


def _openclaw(home: Path, env: Env) -> Path:
    """OpenClaw's openclaw.json: OPENCLAW_CONFIG_PATH, else in OPENCLAW_STATE_DIR, else in
    ``.openclaw`` under OPENCLAW_HOME or the home folder (src/config/paths.ts)."""
    explicit = env.get("OPENCLAW_CONFIG_PATH", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    owner = _env_dir("OPENCLAW_HOME", lambda h, e: h)
    state = _env_dir("OPENCLAW_STATE_DIR", _under(owner, ".openclaw"))
    return state(home, env) / "openclaw.json"


def _crush(platform: str) -> PathRule:
    """Crush's crush.json: in CRUSH_GLOBAL_CONFIG, else ``crush/`` under XDG_CONFIG_HOME,
    else under %LOCALAPPDATA% on Windows and ~/.config elsewhere (internal/config/load.go)."""
    default = _localappdata if platform == "win32" else _home_rule(".config")

    def base(home: Path, env: Env) -> Path:
        xdg = env.get("XDG_CONFIG_HOME")
        return Path(xdg) / "crush" if xdg else default(home, env) / "crush"

    return _under(_env_dir("CRUSH_GLOBAL_CONFIG", base), "crush.json")


def _jan(platform: str) -> PathRule:
    """Jan's mcp_config.json in its default data folder, ``Jan/data`` under the OS data root
    (``dirs::data_dir()``, moved by JAN_DATA_ROOT; src-tauri/src/core/app/paths.rs)."""
    root = {"linux": _xdg_data, "darwin": _app_support, "win32": _appdata}[platform]
    return _under(_env_dir("JAN_DATA_ROOT", root), "Jan", "data", "mcp_config.json")


def _dot_folder_client(key: str, name: str, parts: tuple[str, ...], **options: Any) -> Client:
    """A client with an ``mcpServers`` JSON file under one dot-folder of the home folder, the
    same on every platform; installed when that folder exists (it may hold the file deeper)."""
    return Client(
        key,
        name,
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(*parts)),
        marker=_home_rule(parts[0]),
        **options,
    )


_HERMES_HOME = _per_platform(
    _env_dir("HERMES_HOME", _home_rule(".hermes")),
    _env_dir("HERMES_HOME", _home_rule(".hermes")),
    _env_dir("HERMES_HOME", _under(_localappdata, "hermes")),
)
_ANYTHINGLLM = {p: _under(_electron_app_data(p), "anythingllm-desktop") for p in PLATFORMS}
_CLINE = ("globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
_ROO = ("globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json")

CLIENTS: tuple[Client, ...] = (
    Client(
        "claude-code",
        "Claude Code",
        "json",
        ("mcpServers",),
        _everywhere(_claude_code),
        new_entry_extra={"type": "stdio", "env": {}},
        marker=lambda home, env: Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude"),
        projects=("projects", "mcpServers"),
    ),
    Client(
        "claude-desktop",
        "Claude Desktop",
        "json",
        ("mcpServers",),
        _per_platform(
            _under(_xdg, "Claude", "claude_desktop_config.json"),
            _under(_app_support, "Claude", "claude_desktop_config.json"),
            _under(_appdata, "Claude", "claude_desktop_config.json"),
        ),
    ),
    Client(
        "cursor", "Cursor", "json", ("mcpServers",), _everywhere(_home_rule(".cursor", "mcp.json"))
    ),
    Client(
        "vscode",
        "VS Code",
        "json",
        ("servers",),
        {p: _under(_vscode_user(p), "mcp.json") for p in PLATFORMS},
        new_entry_extra={"type": "stdio"},
    ),
    Client(
        "windsurf",
        "Windsurf",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".codeium", "windsurf", "mcp_config.json")),
    ),
    Client(
        "zed",
        "Zed",
        "json",
        ("context_servers",),
        _per_platform(
            _under(_xdg, "zed", "settings.json"),
            _under(_xdg, "zed", "settings.json"),
            _under(_appdata, "Zed", "settings.json"),
        ),
        new_entry_extra={"env": {}},
    ),
    Client("codex", "Codex CLI", "toml", ("mcp_servers",), _everywhere(_codex)),
    Client(
        "gemini",
        "Gemini CLI",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".gemini", "settings.json")),
    ),
    Client(
        "cline",
        "Cline",
        "json",
        ("mcpServers",),
        {p: _under(_vscode_user(p), *_CLINE) for p in PLATFORMS},
        new_entry_extra={"disabled": False},
    ),
    Client(
        "continue",
        "Continue",
        "yaml-list",
        ("mcpServers",),
        _everywhere(_home_rule(".continue", "config.yaml")),
        entry_has_name=True,
    ),
    Client(
        "goose",
        "Goose",
        "yaml-map",
        ("extensions",),
        _per_platform(
            _under(_xdg, "goose", "config.yaml"),
            _under(_xdg, "goose", "config.yaml"),
            _under(_appdata, "Block", "goose", "config", "config.yaml"),
        ),
        command_key="cmd",
        new_entry_extra={
            "enabled": True,
            "envs": {},
            "type": "stdio",
            "timeout": 300,
            "description": "affidavit: encrypted local memory with sources and dates",
        },
        entry_has_name=True,
    ),
    Client(
        "lmstudio",
        "LM Studio",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".lmstudio", "mcp.json")),
    ),
    Client(
        "vscode-insiders",
        "VS Code Insiders",
        "json",
        ("servers",),
        {p: _under(_vscode_user(p, "Code - Insiders"), "mcp.json") for p in PLATFORMS},
        new_entry_extra={"type": "stdio"},
    ),
    Client(
        "roo",
        "Roo Code",
        "json",
        ("mcpServers",),
        {p: _under(_vscode_user(p), *_ROO) for p in PLATFORMS},
        new_entry_extra={"disabled": False},
    ),
    Client(
        "kiro",
        "Kiro",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".kiro", "settings", "mcp.json")),
        new_entry_extra={"disabled": False},
    ),
    Client(
        "amazon-q",
        "Amazon Q Developer CLI",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".aws", "amazonq", "mcp.json")),
    ),
    Client(
        "copilot-cli",
        "GitHub Copilot CLI",
        "json",
        ("mcpServers",),
        _everywhere(_copilot),
        new_entry_extra={"type": "stdio", "tools": ["*"]},
    ),
    Client(
        "qwen",
        "Qwen Code",
        "json",
        ("mcpServers",),
        _everywhere(_home_rule(".qwen", "settings.json")),
    ),
    Client(
        "opencode",
        "opencode",
        "json",
        ("mcp",),
        _everywhere(_under(_xdg, "opencode", "opencode.json")),
        new_entry_extra={"type": "local", "enabled": True},
        argv=True,
    ),
    Client(
        "kilo",
        "Kilo Code",
        "json",
        ("mcp",),
        _everywhere(_under(_xdg, "kilo", "kilo.jsonc")),
        new_entry_extra={"type": "local", "enabled": True},
        argv=True,
    ),
    Client(
        "hermes",
        "Hermes Agent",
        "yaml-map",
        ("mcp_servers",),
        {p: _under(_HERMES_HOME[p], "config.yaml") for p in PLATFORMS},
    ),
    Client(
        "openclaw",
        "OpenClaw",
        "json",
        ("mcp", "servers"),
        _everywhere(_openclaw),
    ),
    _dot_folder_client("junie", "Junie", (".junie", "mcp", "mcp.json")),
    _dot_folder_client(
        "factory",
        "Factory Droid",
        (".factory", "mcp.json"),
        new_entry_extra={"type": "stdio", "disabled": False},
    ),
    _dot_folder_client("omp", "Oh My Pi", (".omp", "agent", "mcp.json")),
    Client(
        "crush",
        "Crush",
        "json",
        ("mcp",),
        {p: _crush(p) for p in PLATFORMS},
        new_entry_extra={"type": "stdio"},
    ),
    Client(
        "anythingllm",
        "AnythingLLM Desktop",
        "json",
        ("mcpServers",),
        {
            p: _under(_ANYTHINGLLM[p], "storage", "plugins", "anythingllm_mcp_servers.json")
            for p in PLATFORMS
        },
        marker=lambda home, env: _ANYTHINGLLM[_platform_key(sys.platform)](home, env),
    ),
    _dot_folder_client("boltai", "BoltAI", (".boltai", "mcp.json")),
    Client(
        "jan",
        "Jan",
        "json",
        ("mcpServers",),
        {p: _jan(p) for p in PLATFORMS},
        new_entry_extra={"env": {}, "active": True},
    ),
    Client(
        "witsy",
        "Witsy",
        "json",
        ("mcpServers",),
        {p: _under(_electron_app_data(p), "Witsy", "settings.json") for p in PLATFORMS},
        joins_args=True,
    ),
)

BY_KEY: dict[str, Client] = {client.key: client for client in CLIENTS}


def client(key: str) -> Client:
    """The client called ``key``; UsageError listing the known ones otherwise."""
    found = BY_KEY.get(key.lower())
    if found is None:
        known = ", ".join(BY_KEY)
        raise UsageError(f"unknown MCP client {key!r}", f"choose one of: {known}")
    return found
