"""Reading a backend's reply and writing receipts: the small vocabulary every verifier shares.

A reply is the parsed JSON-RPC ``result`` of ``tools/call`` (``content``, ``structuredContent``,
``isError``) or of ``resources/read`` (``contents``). Output-schema checks use validators
compiled once per schema (:func:`validator`), never per call; a ``$ref`` is resolved only
inside the schema itself (a backend's schema must not make the proxy fetch anything).
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt, Verdict
from affidavit.proxy.verifiers.overlap import WINDOWS, excuse_overlap


def known_arguments(
    ctx: CallContext, tools: Mapping[str, frozenset[str]]
) -> Mapping[str, Any] | None:
    """The arguments of a ``tools/call`` of one of ``tools`` that uses only known arguments.

    ``tools`` maps a tool name to the arguments whose meaning the verifier knows. A call with
    any other argument (a force flag, a reset target) means something else, so it is not
    judged at all: None.
    """
    if ctx.method != "tools/call" or ctx.name not in tools:
        return None
    args = ctx.arguments
    return args if set(args) <= tools[ctx.name] else None


class ToolCallVerifier(ABC):
    """``applies`` for a verifier of a fixed set of tools (see :func:`known_arguments`).

    Subclasses set ``tools`` (tool -> the arguments whose meaning they know) and say in
    :meth:`well_formed` which values each claim needs; everything else is not judged.
    """

    tools: Mapping[str, frozenset[str]]

    @property
    def tool_names(self) -> frozenset[str]:
        """The only tools this verifier judges (the relay skips it for any other)."""
        return frozenset(self.tools)

    def applies(self, ctx: CallContext) -> bool:
        args = known_arguments(ctx, self.tools)
        return args is not None and self.well_formed(ctx.name, args)

    @staticmethod
    @abstractmethod
    def well_formed(tool: str, args: Mapping[str, Any]) -> bool:
        """Whether a known call carries the arguments its claim needs, of the right types."""


def judged_in_window(window: int | None, judge: Callable[[], Receipt]) -> Receipt:
    """``judge()``'s receipt, closing the overlap window the snapshot opened (even on error).

    A contradiction found while another call on the same key was in flight is excused to
    ``unchecked`` (see :mod:`overlap`).
    """
    try:
        receipt = judge()
    finally:
        overlapped = window is not None and WINDOWS.end(window)
    return excuse_overlap(receipt, overlapped)


def is_error(result: Mapping[str, Any]) -> bool:
    """Whether the backend itself reported failure (then there is no success to check)."""
    return bool(result.get("isError"))


def text_of(result: Mapping[str, Any]) -> str:
    """All text content blocks of a tool result, joined by newlines."""
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return ""
    return "\n".join(
        b["text"]
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def structured(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``structuredContent`` object, or None when absent or not an object."""
    value = result.get("structuredContent")
    return value if isinstance(value, Mapping) else None


def json_in_text(result: Mapping[str, Any]) -> Any:
    """The first text block parsed as JSON (servers that answer with a JSON document)."""
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return None
    for block in blocks:
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            try:
                return json.loads(block["text"])
            except ValueError:
                continue
    return None


def canonical_schema(schema: Mapping[str, Any]) -> str:
    """A hashable key for a schema (its canonical JSON)."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=256)  # a backend may list many schemas: bounded
def _compiled(schema_key: str) -> Any:
    # heavy imports: only when a check runs
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from referencing import Registry

    schema = json.loads(schema_key)
    kind = validator_for(schema, default=Draft202012Validator)  # its $schema, else MCP's draft
    kind.check_schema(schema)
    # an empty registry: a $ref resolves inside the schema or not at all, never over the network
    return kind(schema, registry=Registry())


def validator(schema: Mapping[str, Any]) -> Any:
    """A jsonschema validator for ``schema``, compiled on first use and reused afterwards."""
    return _compiled(canonical_schema(schema))


def schema_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """The first way ``value`` breaks ``schema`` (one line), or None when it conforms."""
    error = next(iter(validator(schema).iter_errors(value)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"{where}: {error.message}"


class Judge:
    """Receipt builder for one verifier and one claim: keeps the three verdicts uniform."""

    def __init__(self, verifier: str, claim: str) -> None:
        self.verifier = verifier
        self.claim = claim

    def verified(
        self, *evidence: Evidence, vouched: Mapping[str, Any] | None = None, change: str = ""
    ) -> Receipt:
        """A VERIFIED receipt; ``change``: what it changed, in plain words (:class:`Receipt`)."""
        return Receipt(Verdict.VERIFIED, self.verifier, self.claim, evidence, vouched or {}, change)

    def contradicted(self, *evidence: Evidence) -> Receipt:
        return Receipt(Verdict.CONTRADICTED, self.verifier, self.claim, evidence)

    def unchecked(self, why: str, where: str = "", **details: Any) -> Receipt:
        return Receipt(
            Verdict.UNCHECKED, self.verifier, self.claim, (Evidence(why, where, details=details),)
        )


def backend_failed(judge: Judge, ctx: CallContext, result: Mapping[str, Any]) -> Receipt:
    """The receipt for a reply that already says it failed: nothing claimed, nothing judged."""
    return judge.unchecked(
        "the backend reported an error, so there is no success claim to check",
        f"{ctx.method} {ctx.name}",
        error=text_of(result)[:500],
    )
