"""Output-schema conformance: a tool's structured result has the shape its own listing promised.

MCP lets a tool declare an ``outputSchema`` in ``tools/list``; a server that does must return
``structuredContent`` that conforms to it. That is the one claim every such tool makes, whatever
it does, so the proxy checks it for every tool that declares a schema — and only for those: a
tool without one never pays for it (the quick lane stays open for it, ADR 0192).

What it proves: the result is shaped as promised (required fields there, of the declared types).
What it cannot prove: that the values are true. So it runs *with* a domain verifier, never
instead of one: a malformed result is ``contradicted`` whatever the domain verifier would say;
a conforming one gets the domain verifier's verdict, with the conformance added as evidence.
With no domain verifier the verdict is about the shape alone, and the receipt's claim says so.

The schemas are learned from the backend's own ``tools/list`` replies this session
(:class:`OutputSchemas`), so this is not an entry-point plugin: the interceptor owns it and wraps
the selected verifier in :class:`SchemaChecked`. A schema that is not valid JSON Schema, or
whose ``$ref`` leaves the document, yields ``unchecked`` (references are never fetched).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt, Verdict, Verifier
from affidavit.proxy.verifiers.replies import Judge, is_error, schema_problem

NAME = "output-schema"


class OutputSchemas:
    """The ``outputSchema`` each tool declared in the backend's ``tools/list`` this session."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_tool: dict[str, Mapping[str, Any]] = {}

    def learn(self, tools: list[Any]) -> None:
        """Take in one ``tools/list`` page: a tool listed without a schema drops an old one."""
        with self._lock:
            for tool in tools:
                if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                    schema = tool.get("outputSchema")
                    if isinstance(schema, Mapping):
                        self._by_tool[tool["name"]] = schema
                    else:
                        self._by_tool.pop(tool["name"], None)

    def get(self, tool: str) -> Mapping[str, Any] | None:
        """The schema ``tool`` declared, or None."""
        return self._by_tool.get(tool)


def conformance(ctx: CallContext, schema: Mapping[str, Any], result: Mapping[str, Any]) -> Receipt:
    """The shape verdict on one result (an ``isError`` result promises no shape)."""
    judge = Judge(NAME, f"{ctx.name} returned structured content its outputSchema allows")
    where = f"the outputSchema {ctx.name} declared in tools/list"
    if is_error(result):
        return judge.unchecked("the tool reported an error, which promises no shape", where)
    if "structuredContent" not in result:
        return judge.contradicted(
            Evidence(
                "the tool declares an outputSchema, but its result has no structuredContent", where
            )
        )
    try:
        problem = schema_problem(schema, result["structuredContent"])
    except Exception as exc:  # an invalid schema, a $ref that leaves the document
        return judge.unchecked(
            f"the declared outputSchema cannot be used ({type(exc).__name__})", where
        )
    if problem is not None:
        return judge.contradicted(
            Evidence(
                f"structuredContent does not conform to the declared outputSchema: {problem}", where
            )
        )
    return judge.verified(
        Evidence("structuredContent conforms to the declared outputSchema", where)
    )


class SchemaChecked:
    """A tool's domain verifier (or none) with the output-schema check run first."""

    def __init__(self, schema: Mapping[str, Any], inner: Verifier | None) -> None:
        self.schema = schema
        self.inner = inner
        self.name = inner.name if inner is not None else NAME
        self.replayable = inner is not None  # a shape alone never vouches for a side effect

    def applies(self, ctx: CallContext) -> bool:
        return True

    def snapshot(self, ctx: CallContext) -> Any:
        return self.inner.snapshot(ctx) if self.inner is not None else None

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        shape = conformance(ctx, self.schema, result)
        if self.inner is None:
            return shape
        receipt = self.inner.verify(ctx, before, result)
        if shape.verdict is Verdict.CONTRADICTED:
            if receipt.verdict is Verdict.CONTRADICTED:  # both: the domain evidence first
                return replace(receipt, evidence=(*receipt.evidence, *shape.evidence))
            return replace(shape, evidence=(*shape.evidence, *_noted(receipt)))
        if shape.verdict is Verdict.VERIFIED:
            return replace(receipt, evidence=(*receipt.evidence, *shape.evidence))
        return receipt

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        return self.inner is not None and self.inner.still_holds(ctx, receipt)


def _noted(receipt: Receipt) -> tuple[Evidence, ...]:
    """The domain verifier's findings, as notes on a receipt that the shape decided."""
    return tuple(
        replace(e, observed=f"{receipt.verifier} ({receipt.verdict.value}): {e.observed}")
        for e in receipt.evidence
    )
