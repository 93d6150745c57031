"""Every known client, in a fake HOME, against a config its user already has: detected once its
folder exists, the entry added beside the user's own server, a second install changing nothing,
and --remove putting back the exact bytes (and mode) that were there before."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from affidavit.core.errors import UsageError
from affidavit.integrate import install
from affidavit.integrate.clients import CLIENTS, Client


def _other_entry(c: Client) -> dict[str, Any]:
    """The user's own server, in the shape this client writes one."""
    return c.with_launch({"name": "other"} if c.entry_has_name else {}, "other-server", ["--x"])


def _nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    for key in reversed(path):
        value = {key: value}
    return value


def seed_text(c: Client) -> str:
    """A config as its user left it: another server, another setting, their own layout."""
    other = _other_entry(c)
    if c.fmt == "toml":
        return '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n'
    if c.fmt == "yaml-list":
        return "# mine\nname: config\nmcpServers:\n  - name: other\n    command: other-server\n"
    if c.fmt == "yaml-map":
        lines = [f"    {k}: {json.dumps(v)}" for k, v in other.items()]
        return "# my settings\nmodel: x\n" + f"{c.container[0]}:\n  other:\n" + "\n".join(lines)
    document = {"theme": "dark", **_nested(c.container, {"other": other})}
    return json.dumps(document, indent=4)  # four spaces, no final newline: not our style


def server_map(c: Client, text: str) -> dict[str, Any]:
    """The server map in ``text``, read with an ordinary parser for the client's format."""
    if c.fmt == "toml":
        return tomllib.loads(text)["mcp_servers"]
    if c.fmt == "yaml-list":
        return {i["name"]: i for i in yaml.safe_load(text)[c.container[0]]}
    if c.fmt == "yaml-map":
        return yaml.safe_load(text)[c.container[0]]
    found = json.loads(text)
    for key in c.container:
        found = found[key]
    return found


def _install_folder(c: Client, home: Path) -> Path:
    """The folder whose existence says the client is installed here."""
    if c.marker is not None:
        return c.marker(home, {})
    return c.config_path(home=home).parent


@pytest.mark.parametrize("c", CLIENTS, ids=lambda c: c.key)
def test_install_reinstall_remove_restores_the_users_bytes(c, fake_home):
    path = c.config_path()
    assert path.is_relative_to(fake_home)
    assert not c.installed()
    _install_folder(c, fake_home).mkdir(parents=True, exist_ok=True)
    assert c.installed()

    path.parent.mkdir(parents=True, exist_ok=True)
    before = seed_text(c).encode()
    path.write_bytes(before)
    path.chmod(0o640)

    assert install.add(c, install.memory_entry("agent-a", fake_home / "vault")).action == "added"
    servers = server_map(c, path.read_text())
    assert servers["other"] == server_map(c, before.decode())["other"]
    launch = c.launch(servers["affidavit"])
    assert launch is not None and launch[1][-5:] == [
        "serve",
        "--caller",
        "agent-a",
        "--vault",
        str(fake_home / "vault"),
    ]
    written = path.read_bytes()

    again = install.add(c, install.memory_entry("agent-a", fake_home / "vault"))
    assert again.action == "unchanged"
    assert path.read_bytes() == written

    assert install.remove(c).action == "restored"
    assert path.read_bytes() == before
    assert oct(path.stat().st_mode & 0o777) == "0o640"


def test_a_client_that_splits_arguments_at_spaces_refuses_a_path_with_one(fake_home):
    from affidavit.integrate.clients import BY_KEY

    witsy = BY_KEY["witsy"]
    spaced = install.memory_entry(None, fake_home / "my vault")
    with pytest.raises(UsageError, match="splits them again"):
        install.add(witsy, spaced)
    assert not witsy.config_path().exists()
