"""One interface over the three config file formats MCP clients use: JSON(C), TOML and YAML.

Each format keeps the user's file as intact as its library allows: JSON(C) through our span
editor (only the touched member changes), TOML through tomlkit and YAML through ruamel.yaml's
round-trip mode (both keep comments, order and layout). A file that does not parse raises
:class:`~affidavit.core.errors.InputError`; the caller then refuses to touch it.
"""

from __future__ import annotations

import io
from typing import Any, Protocol

from affidavit.core.errors import InputError
from affidavit.integrate.jsonc import JsoncDocument


class ServerMap(Protocol):
    """The map of MCP servers inside one client's config file."""

    def servers(self) -> dict[str, dict[str, Any]]:
        """Every server entry by name, as plain Python values."""
        ...

    def put(self, name: str, entry: dict[str, Any]) -> None:
        """Add or replace one server entry."""
        ...

    def remove(self, name: str) -> bool:
        """Delete one server entry; return whether it existed."""
        ...

    def dumps(self) -> str:
        """The whole file's new text."""
        ...


class JsonServerMap:
    """Servers in a JSON object at ``path`` (e.g. ``("mcpServers",)``).

    Several maps may share one document (``text`` given as a :class:`JsoncDocument`), such as
    Claude Code's user-level servers and each project's: edits through any of them land in the
    same text.
    """

    def __init__(self, text: str | JsoncDocument, path: tuple[str, ...]) -> None:
        self.doc = text if isinstance(text, JsoncDocument) else JsoncDocument(text)
        self.path = path
        value = self.doc.get(path)
        if value is not None and not isinstance(value, dict):
            raise InputError(f"'{'.'.join(path)}' in the file is not a JSON object")

    def servers(self) -> dict[str, dict[str, Any]]:
        value = self.doc.get(self.path) or {}
        return {k: v for k, v in value.items() if isinstance(v, dict)}

    def put(self, name: str, entry: dict[str, Any]) -> None:
        self.doc.set((*self.path, name), entry)

    def remove(self, name: str) -> bool:
        return self.doc.delete((*self.path, name))

    def dumps(self) -> str:
        return self.doc.text


class TomlServerMap:
    """Servers as ``[table.NAME]`` sub-tables (Codex CLI's ``[mcp_servers.NAME]``)."""

    def __init__(self, text: str, table: str) -> None:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            self.doc = tomlkit.parse(text)
        except TOMLKitError as exc:
            raise InputError(f"not valid TOML: {exc}") from None
        self.table = table
        existing = self.doc.get(table)
        if existing is not None and not isinstance(existing, dict):
            raise InputError(f"'{table}' in the file is not a TOML table")

    def servers(self) -> dict[str, dict[str, Any]]:
        table = self.doc.get(self.table) or {}
        return {k: dict(_unwrap(v)) for k, v in table.items() if isinstance(v, dict)}

    def put(self, name: str, entry: dict[str, Any]) -> None:
        import tomlkit

        if self.table not in self.doc:
            self.doc.add(self.table, tomlkit.table(is_super_table=True))
        table = self.doc[self.table]
        new = tomlkit.table()
        for key, value in entry.items():
            new.add(key, value)
        if name in table:
            existing = table[name]
            for key in list(existing):
                if key not in entry:
                    del existing[key]
            for key, value in entry.items():
                existing[key] = value
        else:
            table[name] = new

    def remove(self, name: str) -> bool:
        table = self.doc.get(self.table)
        if table is None or name not in table:
            return False
        del table[name]
        return True

    def dumps(self) -> str:
        import tomlkit

        return tomlkit.dumps(self.doc)


def _unwrap(item: Any) -> Any:
    """tomlkit's items as plain Python values."""
    return item.unwrap()


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class YamlServerMap:
    """Servers in YAML: a mapping under ``key`` (Goose) or a list of named items (Continue)."""

    def __init__(self, text: str, key: str, *, as_list: bool) -> None:
        from ruamel.yaml.error import YAMLError

        try:
            data = _yaml().load(text) if text.strip() else None
        except YAMLError as exc:
            raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
        if data is None:
            from ruamel.yaml.comments import CommentedMap

            data = CommentedMap()
        if not isinstance(data, dict):
            raise InputError("the top level of the file is not a YAML mapping")
        self.data = data
        self.key = key
        self.as_list = as_list
        existing = data.get(key)
        wanted = list if as_list else dict
        if existing is not None and not isinstance(existing, wanted):
            kind = "a list" if as_list else "a mapping"
            raise InputError(f"'{key}' in the file is not {kind}")

    def servers(self) -> dict[str, dict[str, Any]]:
        container = self.data.get(self.key)
        if not container:
            return {}
        if self.as_list:
            return {
                str(item["name"]): _plain(item)
                for item in container
                if isinstance(item, dict) and "name" in item
            }
        return {str(k): _plain(v) for k, v in container.items() if isinstance(v, dict)}

    def put(self, name: str, entry: dict[str, Any]) -> None:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        container: Any = self.data.get(self.key)
        if container is None:
            container = CommentedSeq() if self.as_list else CommentedMap()
            self.data[self.key] = container
        if self.as_list:
            for item in container:
                if isinstance(item, dict) and item.get("name") == name:
                    _replace_keys(item, entry)
                    return
            container.append(CommentedMap(entry))
        elif isinstance(container.get(name), dict):
            _replace_keys(container[name], entry)
        else:
            container[name] = CommentedMap(entry)

    def remove(self, name: str) -> bool:
        container = self.data.get(self.key)
        if not container:
            return False
        if self.as_list:
            for index, item in enumerate(container):
                if isinstance(item, dict) and item.get("name") == name:
                    del container[index]
                    return True
            return False
        if name in container:
            del container[name]
            return True
        return False

    def dumps(self) -> str:
        buffer = io.StringIO()
        _yaml().dump(self.data, buffer)
        return buffer.getvalue()


def _replace_keys(target: dict[str, Any], entry: dict[str, Any]) -> None:
    """Make ``target`` equal ``entry`` while keeping the order of keys that stay."""
    for key in [k for k in target if k not in entry]:
        del target[key]
    for key, value in entry.items():
        target[key] = value
