"""Asking the client mid-request (roots, sampling) in whichever protocol era it speaks.

A 2025 (handshake) connection lets the server send ``roots/list`` and
``sampling/createMessage`` requests back to the client while a call is running. A 2026-07-28
connection forbids server-initiated requests: the server answers ``input_required`` with the
requests embedded, and the client retries the call carrying the responses. :func:`ask` hides
that difference, so a tool asks once and gets either the answer or the interim result to send.

:class:`RootsGate` applies the host's roots: when the client declares the roots capability the
repository must lie inside one of its roots, or every repository-touching request is refused
with a reason (see docs/adr/0032-devserver-roots.md). A client without the capability offers no
boundary, so the ``--repo-path`` the user chose is the only one.
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from affidavit.core.errors import ExternalError, PolicyError

ROOTS_KEY = "roots"
ROOTS_TIMEOUT_S = 30.0
ResultT = TypeVar("ResultT", bound=BaseModel)


class NeedInput(Exception):
    """Raised to unwind a handler so the server can answer ``input_required``."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def is_modern(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request arrived on a 2026-07-28 (no server-initiated requests) connection."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def ask(
    ctx: ServerRequestContext[Any],
    params: types.RequestParams,
    key: str,
    request: types.CreateMessageRequest | types.ListRootsRequest,
    result_type: type[ResultT],
    timeout: float,
) -> ResultT:
    """The client's answer to ``request``; raises :class:`NeedInput` on a modern first pass."""
    if is_modern(ctx):
        answer = (getattr(params, "input_responses", None) or {}).get(key)
        if answer is None:
            raise NeedInput(types.InputRequiredResult(input_requests={key: request}))
        if isinstance(answer, result_type):
            return answer
        try:
            return result_type.model_validate(answer.model_dump(by_alias=True, mode="json"))
        except ValidationError:
            raise ExternalError(f"the client's answer to {request.method} is malformed") from None
    return await ctx.session.send_request(
        request,
        result_type,
        request_read_timeout_seconds=timeout,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )


def root_path(uri: str) -> Path | None:
    """The local directory a ``file://`` root names, or ``None`` for any other URI."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(os.path.realpath(urllib.parse.unquote(parsed.path)))


class RootsGate:
    """Remembers the host's roots and refuses to work on a repository outside them."""

    def __init__(self, repo_root: Path) -> None:
        self._repo = Path(os.path.realpath(repo_root))
        self._roots: list[str] | None = None

    def invalidate(self) -> None:
        """Forget the roots (the host said they changed); the next request asks again."""
        self._roots = None

    async def check(self, ctx: ServerRequestContext[Any], params: types.RequestParams) -> None:
        """Pass, raise :class:`NeedInput` to ask for roots, or refuse with a PolicyError."""
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return
        if self._roots is None:
            try:
                answer = await ask(
                    ctx,
                    params,
                    ROOTS_KEY,
                    types.ListRootsRequest(),
                    types.ListRootsResult,
                    ROOTS_TIMEOUT_S,
                )
            except (MCPError, TimeoutError) as exc:
                raise ExternalError(
                    f"the host declared roots but did not list them ({exc})",
                    "fix the host, or connect without the roots capability",
                ) from None
            self._roots = [str(root.uri) for root in answer.roots]
        if not self._roots:  # the host set no boundary of its own: --repo-path stands (ADR 32)
            return
        for uri in self._roots:
            path = root_path(uri)
            if path is not None and (path == self._repo or path in self._repo.parents):
                return
        raise PolicyError(
            f"the repository {self._repo} is outside the host's roots ({', '.join(self._roots)})",
            "add the repository (or a folder containing it) as a root in the host",
        )
