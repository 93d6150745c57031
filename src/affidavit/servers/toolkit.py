"""What affidavit's three MCP servers (memory, packs, dev) share about tools, in one place.

- :class:`ToolSpec`: a tool is its published contract plus the function that answers it,
  named explicitly (the server looks a call's tool up by name, then calls ``spec.handler``).
- :func:`check_arguments`: the one argument validator. It implements the subset of JSON
  Schema the catalogues use (types, properties, required, closed objects, items, lengths,
  patterns, enums, bounds, unique items) without ``jsonschema``: the pack server runs under
  a read-only sandbox (:mod:`affidavit.core.sandbox`) where importing a library can fail, and
  a keyword the subset does not know is refused when the tool is defined, never skipped.
- :func:`explain`: the one error line for a bad argument. It names the field as an agent
  writes it (``facts[3].text``) and never echoes the value, which may be a passphrase.
- :func:`failed` and :func:`crashed`: the one shape of a failed call. A failure the user can
  act on is its one line with ``isError``; a bug is one line naming the tool and the kind of
  error, with no traceback and no message (either may quote data); the details go to the
  log, in full when ``AFFIDAVIT_DEBUG=1``.
- :func:`json_wire`, :func:`input_object`, :func:`output_object`: a JSON result, and the
  schema builders the catalogues spell their contracts with. Results and listings are plain
  wire JSON first (``*_wire``, :meth:`ToolSpec.wire_listing`): the memory server's plain
  stdio loop (:mod:`affidavit.servers.toolserver`) sends them without the SDK, and the SDK
  path validates the very same objects, so the two cannot drift.

``mcp_types`` is imported only when a result or a listing is built: modules that merely
import a server stay cheap to load.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from affidavit.core.errors import AffidavitError, UsageError
from affidavit.core.wording import counted

if TYPE_CHECKING:
    import mcp_types as types

logger = logging.getLogger(__name__)
H = TypeVar("H")
#: What a failed call's line starts with (the dev server says ``error: ``).
PREFIX = "affidavit: "
DEBUG_ENV = "AFFIDAVIT_DEBUG"


@dataclass(frozen=True)
class ToolSpec(Generic[H]):
    """One tool: what ``tools/list`` publishes and the function that answers a call.

    ``title``, ``output_schema``, ``destructive`` and ``idempotent`` are published only when
    given (None: left out of the listing). ``returns_content``: the result carries content
    read from elsewhere, which the server marks as data, not instructions.
    """

    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    handler: H = field(kw_only=True)
    read_only: bool = field(kw_only=True)
    destructive: bool | None = field(default=False, kw_only=True)
    idempotent: bool | None = field(default=None, kw_only=True)
    returns_content: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        unsupported = sorted(set(_keywords(self.input_schema)) - _SUPPORTED)
        if unsupported:
            raise ValueError(
                f"tool {self.name}: the argument validator does not know {unsupported}"
            )

    def listing(self) -> types.Tool:
        """The tool as ``tools/list`` publishes it, as the SDK's model."""
        import mcp_types as types

        return types.Tool.model_validate(self.wire_listing())

    def wire_listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` publishes it, as wire JSON (the fast stdio path sends
        this without importing the SDK; :meth:`listing` is the same object, validated)."""
        hints: dict[str, Any] = {"readOnlyHint": self.read_only, "openWorldHint": False}
        tool: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.title is not None:
            hints["title"] = tool["title"] = self.title
        if self.destructive is not None:
            hints["destructiveHint"] = self.destructive
        if self.idempotent is not None:
            hints["idempotentHint"] = self.idempotent
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        tool["annotations"] = hints
        return tool


# -- arguments ----------------------------------------------------------------------------------


class Problem(NamedTuple):
    """One way an argument breaks its schema: where, which rule, the rule's value."""

    path: tuple[str | int, ...]
    rule: str
    limit: Any
    instance: Any
    schema: Mapping[str, Any]


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
#: Keywords that describe and never constrain.
_ANNOTATIONS = frozenset({"description", "default", "title", "examples", "$comment"})


def check_arguments(spec: ToolSpec[Any], arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments as a dict, or UsageError for the first problem (by path) they have."""
    args = dict(arguments or {})
    problems = sorted(_problems(spec.input_schema, args, ()), key=_by_path)
    if problems:
        raise explain(problems[0])
    return args


def _by_path(problem: Problem) -> list[str]:
    return [str(part) for part in problem.path]


def _problems(
    schema: Mapping[str, Any], value: Any, path: tuple[str | int, ...]
) -> Iterator[Problem]:
    """Every problem of ``value`` against ``schema``, keyword by keyword in schema order."""
    for rule, limit in schema.items():
        if rule in _ANNOTATIONS:
            continue
        broken = _CHECKS[rule](limit, value, schema)
        if broken is True:
            yield Problem(path, rule, limit, value, schema)
        elif broken:
            for child_path, child_schema, child in broken:
                yield from _problems(child_schema, child, (*path, child_path))


Children = list[tuple[str | int, Mapping[str, Any], Any]]


def _type(limit: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    kinds = [limit] if isinstance(limit, str) else list(limit)
    return not any(_TYPES[kind](value) for kind in kinds)


def _properties(limit: Any, value: Any, schema: Mapping[str, Any]) -> Children | bool:
    if not isinstance(value, dict):
        return False
    return [(name, sub, value[name]) for name, sub in limit.items() if name in value]


def _additional(limit: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    if limit is not False:
        raise ValueError("additionalProperties must be false")
    known = schema.get("properties", {})
    return isinstance(value, dict) and any(name not in known for name in value)


def _items(limit: Any, value: Any, schema: Mapping[str, Any]) -> Children | bool:
    if not isinstance(value, list):
        return False
    return [(index, limit, item) for index, item in enumerate(value)]


def _unique(limit: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    if not (limit and isinstance(value, list)):
        return False
    seen = {json.dumps(item, sort_keys=True) for item in value}
    return len(seen) != len(value)


def _pattern(limit: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    return isinstance(value, str) and _regex(limit).search(value) is None


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """A JSON Schema pattern: ``$`` is the very end of the text (Python's ``$`` would also
    match before a final newline, letting ``"id\\n"`` through)."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _any_of(limit: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    """``anyOf``: broken unless one alternative has no problem (a date or a unix time)."""
    return not any(next(_problems(sub, value, ()), None) is None for sub in limit)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_CHECKS: dict[str, Callable[[Any, Any, Mapping[str, Any]], Children | bool]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": lambda limit, v, _: isinstance(v, dict) and any(n not in v for n in limit),
    "items": _items,
    "minLength": lambda limit, v, _: isinstance(v, str) and len(v) < limit,
    "maxLength": lambda limit, v, _: isinstance(v, str) and len(v) > limit,
    "pattern": _pattern,
    "enum": lambda limit, v, _: not any(v == x and type(v) is type(x) for x in limit),
    "minimum": lambda limit, v, _: _number(v) and v < limit,
    "maximum": lambda limit, v, _: _number(v) and v > limit,
    "minItems": lambda limit, v, _: isinstance(v, list) and len(v) < limit,
    "maxItems": lambda limit, v, _: isinstance(v, list) and len(v) > limit,
    "uniqueItems": _unique,
    "anyOf": _any_of,
}
_SUPPORTED = frozenset(_CHECKS) | _ANNOTATIONS


def _keywords(schema: Mapping[str, Any]) -> Iterator[str]:
    """Every keyword used anywhere in ``schema`` (property names are not keywords)."""
    for keyword, value in schema.items():
        yield keyword
        if keyword == "properties":
            for sub in value.values():
                yield from _keywords(sub)
        elif keyword == "items":
            yield from _keywords(value)
        elif keyword == "anyOf":
            for sub in value:
                yield from _keywords(sub)


# -- the one error line -------------------------------------------------------------------------


def where(path: tuple[str | int, ...]) -> str:
    """A JSON path as an agent writes it: ``facts[3].text``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def explain(problem: Problem) -> UsageError:
    """One clear line for a schema violation, without the offending value."""
    field_name = where(problem.path)
    rule, limit = problem.rule, problem.limit
    if rule == "required":
        missing = next((n for n in limit if n not in (problem.instance or {})), "?")
        target = f"{field_name}.{missing}" if field_name != "arguments" else missing
        return UsageError(f"missing required argument {target!r}", f"pass {missing!r}")
    if rule == "additionalProperties":
        allowed = sorted(problem.schema.get("properties", {}))
        extra = sorted(set(problem.instance) - set(allowed))
        name = extra[0] if extra else "?"
        return UsageError(
            f"unknown argument {name!r} in {field_name}", f"allowed: {', '.join(allowed)}"
        )
    if rule == "maxLength":
        return UsageError(f"{field_name} is longer than {limit} characters", "shorten it")
    message, hint = _MESSAGES.get(rule, _other)(field_name, limit)
    return UsageError(message, hint)


def _other(field_name: str, limit: Any) -> tuple[str, str]:
    return f"{field_name} is not valid", "check the tool's input schema"


def _choices(field_name: str, limit: Any) -> tuple[str, str]:
    return f"{field_name} must be one of {', '.join(map(str, limit))}", "pick one of those"


def _of_type(field_name: str, limit: Any) -> tuple[str, str]:
    kinds = limit if isinstance(limit, str) else " or ".join(limit)
    return f"{field_name} must be of type {kinds}", "check the tool's input schema"


_MESSAGES: dict[str, Callable[[str, Any], tuple[str, str]]] = {
    "minLength": lambda w, n: (f"{w} is empty or too short", f"give {w} a value"),
    "type": _of_type,
    "pattern": lambda w, p: (f"{w} has the wrong format", f"it must match {p}"),
    "enum": _choices,
    "minimum": lambda w, n: (f"{w} must be at least {n}", "raise it"),
    "maximum": lambda w, n: (f"{w} must be at most {n}", "lower it"),
    "minItems": lambda w, n: (f"{w} needs at least {counted(n, 'item')}", "add one"),
    "maxItems": lambda w, n: (
        f"{w} takes at most {counted(n, 'item')}",
        "split it into several calls",
    ),
    "uniqueItems": lambda w, n: (f"{w} lists the same item twice", "remove the duplicate"),
    "anyOf": lambda w, options: (
        f"{w} must be {' or '.join(o.get('description', o.get('type', '?')) for o in options)}",
        "check the tool's input schema",
    ),
}


# -- results --------------------------------------------------------------------------------------


def json_wire(body: dict[str, Any]) -> dict[str, Any]:
    """A successful result as wire JSON (``tools/call``'s ``result``): ``body`` as structured
    content and as its JSON text (clients that read only ``content`` see the same thing)."""
    text = json.dumps(body, ensure_ascii=False)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": body,
        "isError": False,
    }


def error_result(text: str) -> types.CallToolResult:
    """A failed call: ``text`` (one line) with ``isError`` set, so the session carries on."""
    import mcp_types as types

    return types.CallToolResult.model_validate(error_wire(text))


def error_wire(text: str) -> dict[str, Any]:
    """:func:`error_result` as wire JSON."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


class HiddenToolError(Exception):
    """A call to a tool the server does not offer right now: answered like an unknown tool
    (a protocol error), so whether it exists cannot be told."""


def answer(
    tool: str, run: Callable[[], dict[str, Any]], *, prefix: str = PREFIX
) -> types.CallToolResult:
    """Run one call: its JSON result, or its failure as one line (:func:`failed`, or
    :func:`crashed` for a bug). :class:`HiddenToolError` goes up, for a protocol error."""
    import mcp_types as types

    return types.CallToolResult.model_validate(answer_wire(tool, run, prefix=prefix))


def answer_wire(
    tool: str, run: Callable[[], dict[str, Any]], *, prefix: str = PREFIX
) -> dict[str, Any]:
    """:func:`answer` as wire JSON: the one place a call's outcome becomes its result."""
    try:
        return json_wire(run())
    except HiddenToolError:
        raise
    except AffidavitError as exc:
        return error_wire(f"{prefix}{exc}")
    except Exception as exc:  # a bug: one line to the agent, details only on request
        return error_wire(crash_line(tool, exc, prefix=prefix))


def failed(exc: AffidavitError, *, prefix: str = PREFIX) -> types.CallToolResult:
    """A failure the agent can act on: its one line (what went wrong; what to do)."""
    return error_result(f"{prefix}{exc}")


def crashed(tool: str, exc: BaseException, *, prefix: str = PREFIX) -> types.CallToolResult:
    """A bug: one line to the agent, naming only the tool and the kind of error; the details
    go to the log (:func:`report_bug`)."""
    return error_result(crash_line(tool, exc, prefix=prefix))


def crash_line(tool: str, exc: BaseException, *, prefix: str = PREFIX) -> str:
    """The one line a bug gets (see :func:`crashed`); logs the details."""
    report_bug(tool, exc)
    return (
        f"{prefix}internal error in {tool} ({type(exc).__name__}); "
        f"the user can rerun the server with {DEBUG_ENV}=1 and report it"
    )


def report_bug(where_it_happened: str, exc: BaseException) -> None:
    """Log a bug: its kind always, its message and traceback only with ``AFFIDAVIT_DEBUG=1``
    (an exception's message may quote arguments or stored data)."""
    if os.environ.get(DEBUG_ENV) == "1":
        logger.error("internal error in %s", where_it_happened, exc_info=exc)
    else:
        logger.error(
            "internal error in %s (%s); set %s=1 for the details",
            where_it_happened,
            type(exc).__name__,
            DEBUG_ENV,
        )


# -- schema builders ------------------------------------------------------------------------------


def input_object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A tool's input schema: exactly ``properties``, no others (an unknown argument is an
    error, not silently ignored); ``required`` if any."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def output_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's output schema: ``properties`` with ``required`` always present."""
    return {"type": "object", "properties": properties, "required": required}
