"""Fronting GitHub's MCP server: the proxy's GitHub verifier is turned on for it.

The GitHub verifier answers every claim ``unchecked`` until a GitHub REST API is named. A user
who runs GitHub's MCP server has already chosen to let it talk to GitHub with their token, so
when ``wrap`` (or ``integrate --proxy``) fronts that server it adds ``--github-api URL`` for
the API that server uses: ``GITHUB_HOST`` (from the entry's ``env``, a ``docker -e
GITHUB_HOST=…`` or ``--gh-host``) mapped to its API, else ``https://api.github.com``.

The token is never copied: only ``command`` and ``args`` change, and the URL is all they gain.
The client keeps handing the entry's ``env`` (``GITHUB_PERSONAL_ACCESS_TOKEN``) to the
process it starts — now the proxy — which reads the token from its environment and passes
that environment on to the server, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

PUBLIC_API = "https://api.github.com"
_SERVER = re.compile(r"(?:^|/)(?:github-mcp-server|server-github)(?:[:@].*)?$")
"""The official server's binary or image (``ghcr.io/github/github-mcp-server[:tag]``), or the
older npm package ``@modelcontextprotocol/server-github[@version]``."""
_HOST_OPTIONS = ("--gh-host",)


def is_github_server(command: str, args: Sequence[str]) -> bool:
    """Whether ``command args`` starts GitHub's MCP server (directly, by npx or by docker)."""
    return any(_SERVER.search(part) for part in (command, *args) if not part.startswith("-"))


def entry_env(entry: Mapping[str, Any]) -> Mapping[str, str]:
    """The environment an entry gives its server (``env``, Goose's ``envs``, Zed's nested
    ``command.env``), string values only."""
    nested = entry.get("command")
    for env in (
        entry.get("env"),
        entry.get("envs"),
        isinstance(nested, Mapping) and nested.get("env"),
    ):
        if isinstance(env, Mapping):
            return {str(k): v for k, v in env.items() if isinstance(v, str)}
    return {}


def _host_in_args(args: Sequence[str]) -> str | None:
    """``GITHUB_HOST`` as the command line gives it (``-e GITHUB_HOST=H``, ``--gh-host H``)."""
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-e", "--env") and following.startswith("GITHUB_HOST="):
            return following.split("=", 1)[1]
        if arg.startswith(("-e=GITHUB_HOST=", "--env=GITHUB_HOST=")):
            return arg.split("GITHUB_HOST=", 1)[1]
        if arg in _HOST_OPTIONS and following:
            return following
        if arg.startswith(tuple(o + "=" for o in _HOST_OPTIONS)):
            return arg.split("=", 1)[1]
    return None


def api_url(host: str | None) -> str:
    """The REST API of a GitHub host: github.com's, a ``*.ghe.com`` tenant's
    (``api.TENANT.ghe.com``) or a GitHub Enterprise Server's (``SCHEME://HOST/api/v3``, https
    unless the host is given with another scheme, as the server itself reads it)."""
    name = (host or "").strip().rstrip("/")
    scheme = "https"
    if match := re.match(r"^(https?)://", name, flags=re.I):
        scheme, name = match.group(1).lower(), name[match.end() :]
    if not name or name.lower() in ("github.com", "www.github.com", "api.github.com"):
        return PUBLIC_API
    if name.lower().endswith(".ghe.com"):
        return f"https://{name if name.lower().startswith('api.') else 'api.' + name}"
    return f"{scheme}://{name}/api/v3"


def github_api_for(command: str, args: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The API URL to verify GitHub claims against when ``command args`` is GitHub's MCP
    server (given ``env``, the entry's environment), else None."""
    if not is_github_server(command, args):
        return None
    return api_url(_host_in_args(args) or env.get("GITHUB_HOST"))
