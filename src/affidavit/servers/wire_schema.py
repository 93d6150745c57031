"""JSON Schema from a wire type: how a tool's output schema is made instead of written.

A tool's result is a typed value (a TypedDict of :mod:`affidavit.recall.wire` or of a server's
own), so its schema can be derived: pydantic's ``TypeAdapter(...).json_schema()`` reads the
type; the class's docstring and the docstring under each field become the descriptions, the
only part written by hand. The result is made self-contained (no ``$ref``: every MCP client
can read it, as the hand-written schemas could) and without pydantic's generated titles.

Pydantic is imported here, and this module is imported only when schemas are generated (a
command, or the drift test), never by a running server: the generated schemas are checked
in as JSON (:mod:`affidavit.servers.memory.schemas`), because importing pydantic would cost
a server's start more than the whole handshake takes.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
import typing
from typing import Any, get_args, get_origin

from typing_extensions import is_typeddict


def wire_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of values of ``kind`` as they are sent (self-contained, no titles)."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(kind).json_schema(mode="serialization")
    definitions = schema.pop("$defs", {})
    classes = {cls.__name__: cls for cls in _typed_dicts(kind)}
    for name, definition in [(kind.__name__, schema), *definitions.items()]:
        if name in classes:
            _describe(definition, _field_docs(classes[name]))
    out: dict[str, Any] = _clean(_inline(schema, definitions))
    return out


def _field_docs(cls: Any) -> dict[str, str]:
    """The docstring under each field of TypedDict ``cls``, its bases' included.

    (Pydantic's own ``use_attribute_docstrings`` reads only the class itself, so a field a
    wire type inherits, such as a search hit's ``discovered``, would lose its description.)
    """
    docs: dict[str, str] = {}
    for base in getattr(cls, "__orig_bases__", ()):
        if is_typeddict(base):
            docs.update(_field_docs(base))
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    for field, after in itertools.pairwise(body.body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = " ".join(after.value.value.split())
    return docs


def _describe(schema: dict[str, Any], docs: dict[str, str]) -> None:
    """Give each property of ``schema`` its field's docstring as its description."""
    for name, prop in schema.get("properties", {}).items():
        if name in docs:
            prop["description"] = docs[name]


def _typed_dicts(kind: Any, seen: set[Any] | None = None) -> set[Any]:
    """Every TypedDict class ``kind`` is made of, itself included."""
    seen = set() if seen is None else seen
    if is_typeddict(kind) and kind not in seen:
        seen.add(kind)
        for hint in typing.get_type_hints(kind).values():
            _typed_dicts(hint, seen)
    for arg in get_args(kind) if get_origin(kind) is not None else ():
        _typed_dicts(arg, seen)
    return seen


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition (the types are not recursive)."""
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].rsplit("/", 1)[-1]]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**target, **rest}, definitions)  # a field's own description wins
    return {key: _inline(value, definitions) for key, value in node.items()}


def _clean(node: Any) -> Any:
    """Without pydantic's titles (they repeat the field and class names)."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: _clean(sub) for name, sub in value.items()}
        elif key != "title":
            out[key] = _clean(value)
    return out
