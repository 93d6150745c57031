"""A loopback fake of the Docker Engine API on a Unix socket, for the Docker verifier tests.

No Docker daemon runs on the machines these tests run on (CI included), so the verifier is
tested against a real HTTP/1.1 server on a real Unix socket that speaks the endpoints it and
the lying backend use, with the Engine's shapes: ``GET /_ping``; ``GET /images/{name}/json``
(``docker image inspect``: ``Id``, ``RepoTags``, ``Created``; 404 ``No such image``); and
``POST /build?t=TAG`` (a build: a new image id, the tag moved onto it). The state lives in the
test process, so a test can also tag images directly, as an earlier build would have.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import socketserver
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any


def normal(tag: str) -> str:
    last = tag.rsplit("/", 1)[-1]
    return tag if ":" in last or "@" in last else f"{tag}:latest"


@dataclass
class FakeEngine:
    """Images by id, and which id each tag names."""

    images: dict[str, dict[str, Any]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def build(self, tag: str) -> str:
        """A new image, tagged ``tag`` (the tag leaves any image it named before)."""
        image_id = "sha256:" + hashlib.sha256(f"image {next(self._ids)}".encode()).hexdigest()
        created = datetime.now(UTC).isoformat()
        self.images[image_id] = {"Id": image_id, "Created": created, "RepoTags": []}
        self.tag(image_id, tag)
        return image_id

    def tag(self, image_id: str, tag: str) -> None:
        tag = normal(tag)
        old = self.tags.get(tag)
        if old is not None:
            self.images[old]["RepoTags"].remove(tag)
        self.tags[tag] = image_id
        self.images[image_id]["RepoTags"].append(tag)

    def inspect(self, name: str) -> dict[str, Any] | None:
        image_id = self.tags.get(normal(name)) or (name if name in self.images else None)
        return self.images.get(image_id) if image_id is not None else None


class _Handler(BaseHTTPRequestHandler):
    engine: FakeEngine
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.engine.requests.append(f"GET {self.path}")
        route = urllib.parse.urlsplit(self.path).path
        if route == "/_ping":
            self._send(200, "OK")
            return
        if route.startswith("/images/") and route.endswith("/json"):
            name = urllib.parse.unquote(route.removeprefix("/images/").removesuffix("/json"))
            image = self.engine.inspect(name)
            if image is None:
                self._send(404, {"message": f"No such image: {name}"})
            else:
                self._send(200, image)
            return
        self._send(404, {"message": "page not found"})

    def do_POST(self) -> None:
        self.engine.requests.append(f"POST {self.path}")
        parts = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        if parts.path == "/build":
            tag = urllib.parse.parse_qs(parts.query)["t"][0]
            image_id = self.engine.build(tag)
            self._send(200, {"aux": {"ID": image_id}})
            return
        self._send(404, {"message": "page not found"})

    def _send(self, status: int, body: Any) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def address_string(self) -> str:
        return "unix"

    def log_message(self, *args: Any) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def serving(engine: FakeEngine, socket_path: Path) -> Iterator[str]:
    """Serve ``engine`` on ``socket_path``; yields the ``DOCKER_HOST`` value naming it."""
    from tests.proxy.fake_github import in_thread

    handler = type("Handler", (_Handler,), {"engine": engine})
    try:
        with in_thread(_Server(str(socket_path), handler)):
            yield f"unix://{socket_path}"
    finally:
        socket_path.unlink(missing_ok=True)


def post_build(docker_host: str, tag: str) -> str:
    """``POST /build?t=TAG`` to the Engine at ``docker_host`` (as ``docker build`` does); the
    new image's id."""
    import http.client
    import socket

    path = urllib.parse.urlsplit(docker_host).path

    class Conn(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(path)

    conn = Conn("localhost", timeout=10)
    try:
        conn.request("POST", f"/build?t={urllib.parse.quote(tag)}", body=b"")
        return str(json.loads(conn.getresponse().read())["aux"]["ID"])
    finally:
        conn.close()
