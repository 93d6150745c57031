"""Docker claims: the dev server's ``docker_build`` report ("built TAG").

How: the verifier asks the Docker Engine itself, over its API on the local Unix socket
(``GET /images/{tag}/json``, what ``docker image inspect`` reads), which image the tag names
just before the call and just after.

What it proves: after the call the requested tag exists and names an image (the one the reply
names, when it names one), and it did not name that image before the call — so this call built
or re-tagged it. A reply for another tag, a tag that names nothing, or a claimed image id the tag
does not name is ``contradicted``.

What it cannot prove: that the image came from this context and Dockerfile. And when the tag
already named the very same image before the call, a fully cached build and a build that never
ran look the same: ``unchecked``, never ``verified``. No engine answering is ``unchecked`` too.

Configuration: the socket from the proxy setting ``docker_host`` or ``DOCKER_HOST``
(``unix:///path``), else ``/var/run/docker.sock``; another scheme (``tcp://``, ``ssh://``) is
not consulted. Nothing leaves the machine: a Unix socket is no network connection.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.locate import string_arg
from affidavit.proxy.verifiers.replies import (
    Judge,
    ToolCallVerifier,
    backend_failed,
    is_error,
    structured,
)

TOOLS = {"docker_build": frozenset({"tag", "context", "dockerfile"})}
DEFAULT_SOCKET = "/var/run/docker.sock"
ENGINE_TIMEOUT_S = 10.0


class EngineUnavailable(Exception):
    """The Docker Engine could not be asked (no socket, no answer, an unexpected reply)."""


def _unix_connection(path: str, timeout: float) -> Any:
    """An HTTP/1.1 connection to the Engine over its Unix socket (http.client is imported
    here, when a Docker claim is checked, not at every proxy start)."""
    import http.client
    import socket

    class UnixConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            sock.connect(path)
            self.sock = sock

    return UnixConnection("localhost", timeout=timeout)


def engine_socket(ctx: CallContext) -> str | None:
    """The Engine's Unix socket the user configured (or Docker's default), or None."""
    host = str(ctx.settings.get("docker_host") or os.environ.get("DOCKER_HOST") or "")
    if not host:
        return DEFAULT_SOCKET
    parsed = urllib.parse.urlsplit(host)
    return parsed.path if parsed.scheme == "unix" and parsed.path else None


def normal_tag(tag: str) -> str:
    """``tag`` as the Engine names it: ``:latest`` added when no tag or digest is given."""
    last = tag.rsplit("/", 1)[-1]
    return tag if ":" in last or "@" in last else f"{tag}:latest"


@dataclass(frozen=True)
class Image:
    """What the Engine says a name refers to."""

    id: str
    tags: tuple[str, ...]
    created: str


def inspect(path: str, name: str) -> Image | None:
    """The image ``name`` refers to (None: no such image), asked of the Engine at ``path``."""
    conn = _unix_connection(path, ENGINE_TIMEOUT_S)
    try:
        conn.request("GET", f"/images/{urllib.parse.quote(name, safe='')}/json")
        response = conn.getresponse()
        body = response.read()
    except OSError as exc:
        raise EngineUnavailable(
            f"no Docker Engine answers at {path} ({type(exc).__name__})"
        ) from None
    finally:
        conn.close()
    if response.status == 404:
        return None
    if response.status != 200:
        raise EngineUnavailable(f"the Docker Engine answered HTTP {response.status}")
    try:
        doc = json.loads(body)
        tags = tuple(str(t) for t in doc.get("RepoTags") or ())
        return Image(str(doc["Id"]), tags, str(doc.get("Created", "")))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EngineUnavailable("the Docker Engine's answer is not an image") from None


@dataclass(frozen=True)
class _Before:
    """The image the tag named before the call (None: none), or why the Engine was not asked."""

    socket: str | None
    image: Image | None = None
    problem: str | None = None


class DockerVerifier(ToolCallVerifier):
    """Asks the Docker Engine which image the built tag names, before and after the call."""

    name = "docker"
    tools = TOOLS

    @staticmethod
    def well_formed(tool: str, args: Mapping[str, Any]) -> bool:
        return isinstance(args.get("tag"), str) and bool(args["tag"])

    def snapshot(self, ctx: CallContext) -> _Before:
        path = engine_socket(ctx)
        if path is None:
            return _Before(None, problem="DOCKER_HOST is not a unix:// socket")
        try:
            return _Before(path, inspect(path, normal_tag(str(ctx.arguments["tag"]))))
        except EngineUnavailable as exc:
            return _Before(path, problem=str(exc))

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        tag = normal_tag(string_arg(ctx.arguments, "tag") or "")
        judge = Judge(self.name, f"built image {tag}")
        if is_error(result):
            return backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.socket is None or before.problem:
            why = before.problem if isinstance(before, _Before) else "no snapshot"
            return judge.unchecked(f"the Docker Engine could not be asked: {why}", "Docker Engine")
        where = f"Docker Engine at {before.socket}"
        reported = structured(result) or {}
        claimed_tag = reported.get("tag")
        if isinstance(claimed_tag, str) and normal_tag(claimed_tag) != tag:
            return judge.contradicted(Evidence(f"the reply is for {claimed_tag}, not {tag}", where))
        try:
            now = inspect(before.socket, tag)
        except EngineUnavailable as exc:
            return judge.unchecked(f"the Docker Engine could not be asked: {exc}", where)
        if now is None:
            return judge.contradicted(Evidence(f"no image is tagged {tag}", where))
        claimed_id = reported.get("image_id")
        if isinstance(claimed_id, str) and claimed_id not in (
            now.id,
            now.id.removeprefix("sha256:"),
        ):
            return judge.contradicted(
                Evidence(f"{tag} names {now.id}, not the image {claimed_id} the reply names", where)
            )
        details = {"id": now.id, "created": now.created, "tags": list(now.tags)}
        if before.image is not None and before.image.id == now.id:
            return judge.unchecked(
                f"{tag} already named {now.id} before the call: a fully cached build and a "
                "build that never ran look the same",
                where,
                **details,
            )
        return judge.verified(
            Evidence(
                f"{tag} now names {now.id}, which it did not before the call",
                where,
                details=details,
            ),
            vouched={"socket": before.socket, "tag": tag, "id": now.id},
        )

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        vouched = receipt.vouched
        try:
            now = inspect(str(vouched["socket"]), str(vouched["tag"]))
        except (EngineUnavailable, KeyError):
            return False
        return now is not None and now.id == vouched.get("id")
