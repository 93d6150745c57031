"""A loopback HTTP server that answers like GitHub's REST API, for the GitHub verifier tests.

One public repository ``acme/app``; paths are served at the root and under ``/api/v3`` (as a
GitHub Enterprise Server serves them). ``redirect_to`` makes every GET a redirect to another
origin, as a hostile or compromised API could answer.
"""

from __future__ import annotations

import json
import re
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENTERPRISE_PREFIX = "/api/v3"


@dataclass
class FakeGitHub:
    """The state behind the loopback API: one public repository ``acme/app``."""

    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=lambda: {"main": "a" * 40, "dev": "b" * 40})
    auth_seen: list[str] = field(default_factory=list)
    redirect_to: str | None = None  # answer every GET with a redirect to this origin

    def add(self, title: str, *, pr: bool, head: str = "feature", base: str = "main") -> int:
        number = max(self.items, default=0) + 1
        item: dict[str, Any] = {"number": number, "title": title, "body": "", "state": "open"}
        item["html_url"] = f"https://github.com/acme/app/{'pull' if pr else 'issues'}/{number}"
        if pr:
            item.update(pull_request={}, head={"ref": head}, base={"ref": base})
        self.items[number] = item
        return number

    def answer(self, path: str) -> tuple[int, Any]:
        route = path.split("?", 1)[0]
        if not route.startswith("/repos/acme/app"):
            return 404, {"message": "Not Found"}
        rest = route.removeprefix("/repos/acme/app")
        if rest == "":
            return 200, {"full_name": "acme/app", "default_branch": "main"}
        if rest == "/issues":
            newest = sorted(self.items.values(), key=lambda i: -i["number"])[:1]
            return 200, newest
        if m := re.fullmatch(r"/(pulls|issues)/(\d+)", rest):
            item = self.items.get(int(m.group(2)))
            if item is None or (m.group(1) == "pulls" and "pull_request" not in item):
                return 404, {"message": "Not Found"}
            return 200, item
        if m := re.fullmatch(r"/git/ref/heads/(.+)", rest):
            sha = self.refs.get(m.group(1))
            if sha is None:
                return 404, {"message": "Not Found"}
            return 200, {"ref": f"refs/heads/{m.group(1)}", "object": {"sha": sha}}
        return 404, {"message": "Not Found"}


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHub

    def do_GET(self) -> None:
        self.state.auth_seen.append(self.headers.get("Authorization", ""))
        if self.state.redirect_to is not None:
            self.send_response(302)
            self.send_header("Location", self.state.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(*self.state.answer(self.path.removeprefix(ENTERPRISE_PREFIX)))

    def do_POST(self) -> None:
        """Creating a pull request, as the GitHub MCP server does for the lying backend."""
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.removeprefix(ENTERPRISE_PREFIX) != "/repos/acme/app/pulls":
            self._send(404, {"message": "Not Found"})
            return
        number = self.state.add(body["title"], pr=True, head=body["head"], base=body["base"])
        self._send(201, self.state.items[number])

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def in_thread(server: socketserver.BaseServer) -> Iterator[socketserver.BaseServer]:
    """Run ``server`` on a daemon thread until the block ends, then shut it down."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serving(state: FakeGitHub) -> Iterator[str]:
    """Serve ``state`` on a loopback port; yields the base URL."""
    handler = type("Handler", (_Handler,), {"state": state})
    with in_thread(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


def seeded() -> FakeGitHub:
    """The repository with an older issue (#1) and an older pull request (#2)."""
    state = FakeGitHub()
    state.add("older issue", pr=False)
    state.add("Old PR", pr=True)
    return state
