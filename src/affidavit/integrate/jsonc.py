"""Surgical edits of JSON and JSON-with-comments files.

Client configs are hand-edited files: Zed's ``settings.json`` and VS Code's ``mcp.json`` allow
comments and trailing commas, and ``~/.claude.json`` is a large file its owner rewrites. So we
never re-serialize a whole file: we parse it into spans (where each value starts and ends in
the original text) and splice only the one member we add, replace or remove. Every byte outside
that member, comments and formatting included, stays as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from affidavit.core.errors import InputError

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


@dataclass
class Node:
    """One JSON value and where it sits in the text (``end`` is exclusive)."""

    start: int
    end: int
    value: Any = None
    members: list[Member] = field(default_factory=list)  # objects only


@dataclass
class Member:
    """One ``"key": value`` pair of an object."""

    key: str
    key_start: int
    node: Node


class _Parser:
    """A recursive-descent JSONC parser that records spans instead of discarding them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> InputError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return InputError(f"not valid JSON at line {line}, column {column}: {what}")

    def skip(self) -> None:
        """Skip whitespace, ``// line`` and ``/* block */`` comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("unterminated comment")
                self.pos = close + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        char = self.text[self.pos]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char == '"':
            start = self.pos
            string, self.pos = self.string()
            return Node(start, self.pos, string)
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                start = self.pos
                self.pos += len(word)
                return Node(start, self.pos, literal)
        match = _NUMBER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return Node(match.start(), match.end(), json.loads(match.group()))
        raise self.fail(f"unexpected character {char!r}")

    def string(self) -> tuple[str, int]:
        try:
            return json.decoder.scanstring(self.text, self.pos + 1)  # type: ignore[attr-defined]
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg) from None

    def object(self) -> Node:
        node = Node(self.pos, self.pos, {})
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            key, self.pos = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':' after a key")
            self.pos += 1
            child = self.value()
            node.members.append(Member(key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> Node:
        node = Node(self.pos, self.pos, [])
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            child = self.value()
            node.value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str) -> Node:
    """Parse a whole JSONC document; an empty or blank file is an empty object."""
    if not text.strip():
        return Node(0, 0, {})
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the document")
    return root


class JsoncDocument:
    """A JSONC text with edit operations on one object member at a time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newline = "\r\n" if "\r\n" in text else "\n"
        root = parse(text)
        if not isinstance(root.value, dict):
            raise InputError("the top level of the file is not a JSON object")

    @property
    def value(self) -> dict[str, Any]:
        """The document as plain Python values."""
        value = parse(self.text).value
        return value if isinstance(value, dict) else {}

    def _find(self, path: tuple[str, ...]) -> Node | None:
        node = parse(self.text)
        if not self.text.strip():
            return None
        for key in path:
            if not isinstance(node.value, dict):
                return None
            member = next((m for m in node.members if m.key == key), None)
            if member is None:
                return None
            node = member.node
        return node

    def get(self, path: tuple[str, ...]) -> Any:
        """The value at ``path`` (a tuple of object keys), or None."""
        node = self._find(path)
        return None if node is None else node.value

    def set(self, path: tuple[str, ...], value: Any) -> None:
        """Set the member at ``path``, creating parent objects as needed."""
        if not path:
            raise ValueError("path must name a member")
        if not self.text.strip():
            self.text = "{}" + self.newline
        parent_path, key = path[:-1], path[-1]
        parent = self._find(parent_path)
        if parent is None:
            # Create the nearest missing parent as a one-member chain.
            nested: Any = value
            for name in reversed(path[len(parent_path) :]):
                nested = {name: nested}
            self._create(parent_path, nested)
            return
        if not isinstance(parent.value, dict):
            raise InputError(f"'{'.'.join(parent_path)}' in the file is not a JSON object")
        member = next((m for m in parent.members if m.key == key), None)
        if member is not None:
            indent = self._line_indent(member.key_start)
            rendered = self._render(value, indent)
            self.text = self.text[: member.node.start] + rendered + self.text[member.node.end :]
            return
        self._insert(parent, key, value)

    def _create(self, parent_path: tuple[str, ...], nested: dict[str, Any]) -> None:
        """Insert the first missing ancestor of a path (``nested`` holds the chain)."""
        for depth in range(len(parent_path), -1, -1):
            node = self._find(parent_path[:depth])
            if node is not None:
                inner: Any = nested
                for name in reversed(parent_path[depth:]):
                    inner = {name: inner}
                ((key, value),) = inner.items()
                if not isinstance(node.value, dict):
                    raise InputError("a parent of the server map in the file is not an object")
                self._insert(node, key, value)
                return
        raise InputError("the file has no top-level object")

    def _insert(self, parent: Node, key: str, value: Any) -> None:
        unit = self._indent_unit()
        name = json.dumps(key, ensure_ascii=False)
        if parent.members and "\n" not in self.text[parent.start : parent.end]:
            # A one-line object stays on one line.
            compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
            at = parent.members[-1].node.end
            self.text = self.text[:at] + f", {name}: {compact}" + self.text[at:]
            return
        if parent.members:
            last = parent.members[-1]
            indent = self._line_indent(last.key_start)
            if self._same_line(parent.start, last.key_start):
                indent = self._line_indent(parent.start) + unit
            text = f",{self.newline}{indent}{name}: {self._render(value, indent)}"
            at = last.node.end
        else:
            outer = self._line_indent(parent.start)
            indent = outer + unit
            text = (
                f"{self.newline}{indent}{name}: {self._render(value, indent)}{self.newline}{outer}"
            )
            at = parent.start + 1
            # Drop whatever blank space sat inside the empty braces.
            close = self.text.index("}", at)
            if not self.text[at:close].strip():
                self.text = self.text[:at] + self.text[close:]
        self.text = self.text[:at] + text + self.text[at:]

    def delete(self, path: tuple[str, ...]) -> bool:
        """Remove the member at ``path``; return whether it existed."""
        parent = self._find(path[:-1])
        if parent is None or not isinstance(parent.value, dict):
            return False
        members = parent.members
        index = next((i for i, m in enumerate(members) if m.key == path[-1]), None)
        if index is None:
            return False
        member = members[index]
        if index + 1 < len(members):
            start, end = self._line_start_if_blank(member.key_start), members[index + 1].key_start
            end = self._line_start_if_blank(end)
        elif index > 0:
            start, end = members[index - 1].node.end, member.node.end
        else:
            start, end = parent.start + 1, parent.end - 1
        self.text = self.text[:start] + self.text[end:]
        return True

    def _line_start_if_blank(self, pos: int) -> int:
        line_start = self.text.rfind("\n", 0, pos) + 1
        return line_start if not self.text[line_start:pos].strip() else pos

    def _line_indent(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[line_start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _same_line(self, a: int, b: int) -> bool:
        return "\n" not in self.text[a:b]

    def _indent_unit(self) -> str:
        for line in self.text.splitlines():
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                return line[: len(line) - len(stripped)]
        return "  "

    def _render(self, value: Any, indent: str) -> str:
        unit = self._indent_unit()
        width: str | int = unit if "\t" in unit else len(unit)
        rendered = json.dumps(value, indent=width, ensure_ascii=False)
        return rendered.replace("\n", self.newline + indent)
