"""The GitHub verifier against a loopback HTTP server that answers like GitHub's REST API."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.github import GitHubVerifier
from tests.proxy._verifier_fixtures import (
    LYING_BACKEND,
    call,
    judge,
    proxied,
    tool_result,
    verdict_of,
    wire,
)

V = GitHubVerifier()
TOKEN = "ghp_test_token_never_in_evidence"


@dataclass
class FakeGitHub:
    """The state behind the loopback API: one public repository ``acme/app``."""

    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=lambda: {"main": "a" * 40, "dev": "b" * 40})
    auth_seen: list[str] = field(default_factory=list)

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


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    state = FakeGitHub()
    state.add("older issue", pr=False)
    state.add("Old PR", pr=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.auth_seen.append(self.headers.get("Authorization", ""))
            self._send(*state.answer(self.path))

        def do_POST(self) -> None:
            """Creating a pull request, as the GitHub MCP server does for the lying backend."""
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/repos/acme/app/pulls":
                self._send(404, {"message": "Not Found"})
                return
            number = state.add(body["title"], pr=True, head=body["head"], base=body["base"])
            self._send(201, state.items[number])

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def settings(url: str) -> dict[str, str]:
    return {"github_api_url": url, "github_token": TOKEN}


def pr_call(url: str, title: str = "Add feature", base: str = "main"):
    args = {"owner": "acme", "repo": "app", "title": title, "head": "feature", "base": base}
    return call("create_pull_request", args, settings=settings(url))


def minimal(number: int, kind: str = "pull") -> dict[str, Any]:
    """GitHub's MCP server answers a create with a minimal ``{id, url}`` document."""
    doc = {"id": "123", "url": f"https://github.com/acme/app/{kind}/{number}"}
    return tool_result(json.dumps(doc))


def test_a_new_pull_request_is_verified(github) -> None:
    state, url = github
    receipt = judge(V, pr_call(url), lambda: minimal(state.add("Add feature", pr=True)))
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence
    assert V.still_holds(pr_call(url), receipt)
    assert f"Bearer {TOKEN}" in state.auth_seen
    assert TOKEN not in json.dumps(receipt.as_dict())


@pytest.mark.parametrize(
    ("lie", "observed"),
    [
        ("older_pr", "already existed"),
        ("wrong_title", "requested title"),
        ("wrong_base", "requested base"),
        ("no_such_pr", "does not exist"),
        ("no_number", "names no pull request"),
    ],
)
def test_pull_request_lies_are_contradicted(github, lie: str, observed: str) -> None:
    state, url = github

    def act():
        if lie == "older_pr":
            return minimal(2)
        if lie == "wrong_title":
            return minimal(state.add("Something else", pr=True))
        if lie == "wrong_base":
            return minimal(state.add("Add feature", pr=True, base="dev"))
        if lie == "no_such_pr":
            return minimal(99)
        return tool_result("done")

    receipt = judge(V, pr_call(url), act)
    assert receipt.verdict is Verdict.CONTRADICTED
    assert observed in receipt.evidence[0].observed, receipt.evidence[0].observed


def test_issue_write_create_and_update(github) -> None:
    state, url = github
    create = call(
        "issue_write",
        {"method": "create", "owner": "acme", "repo": "app", "title": "Bug"},
        settings=settings(url),
    )
    ok = judge(V, create, lambda: minimal(state.add("Bug", pr=False), "issues"))
    assert ok.verdict is Verdict.VERIFIED
    as_pr = judge(V, create, lambda: minimal(state.add("Bug", pr=True), "issues"))
    assert as_pr.verdict is Verdict.CONTRADICTED
    assert "pull request, not an issue" in as_pr.evidence[0].observed

    update = call(
        "issue_write",
        {"method": "update", "owner": "acme", "repo": "app", "issue_number": 1, "state": "closed"},
        settings=settings(url),
    )
    assert judge(V, update, lambda: minimal(1, "issues")).verdict is Verdict.CONTRADICTED
    closed = judge(V, update, lambda: (state.items[1].update(state="closed"), minimal(1))[1])
    assert closed.verdict is Verdict.VERIFIED


def test_branch_creation(github) -> None:
    state, url = github
    args = {"owner": "acme", "repo": "app", "branch": "topic", "from_branch": "dev"}
    ctx = call("create_branch", args, settings=settings(url))
    assert judge(V, ctx, lambda: tool_result("{}")).verdict is Verdict.CONTRADICTED
    wrong = judge(V, ctx, lambda: (state.refs.update(topic="a" * 40), tool_result("{}"))[1])
    assert wrong.verdict is Verdict.CONTRADICTED and "not at its base" in wrong.evidence[0].observed
    del state.refs["topic"]
    receipt = judge(V, ctx, lambda: (state.refs.update(topic="b" * 40), tool_result("{}"))[1])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(ctx, receipt)
    again = judge(V, ctx, lambda: tool_result("{}"))
    assert again.verdict is Verdict.CONTRADICTED and "already existed" in again.evidence[0].observed


def test_unchecked_when_github_cannot_be_consulted(github, monkeypatch) -> None:
    _, url = github
    monkeypatch.delenv("AFFIDAVIT_GITHUB_API_URL", raising=False)
    hidden = call(
        "create_pull_request",
        {"owner": "acme", "repo": "private", "title": "t", "head": "h", "base": "main"},
        settings=settings(url),
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    for ctx in (
        hidden,
        pr_call(f"http://127.0.0.1:{closed_port}"),
        call("create_pull_request", pr_call(url).arguments),
    ):
        receipt = judge(V, ctx, lambda: minimal(99))
        assert receipt.verdict is Verdict.UNCHECKED, ctx
        assert TOKEN not in json.dumps(receipt.as_dict())


def test_pull_requests_through_the_proxy(github, tmp_path, home) -> None:
    """The official client -> affidavit proxy -> a GitHub-shaped backend -> the loopback API."""
    state, url = github
    plan = tmp_path / "plan.json"
    backend = [
        sys.executable,
        str(LYING_BACKEND),
        "--repo-path",
        str(tmp_path),
        "--plan",
        str(plan),
        "--github-api",
        url,
    ]
    params = proxied(backend, [tmp_path], home)
    params.env = {**(params.env or {}), "AFFIDAVIT_GITHUB_API_URL": url, "GITHUB_TOKEN": TOKEN}
    args = {
        "owner": "acme",
        "repo": "app",
        "title": "Add feature",
        "head": "feature",
        "base": "main",
    }

    async def scenario() -> list[tuple[bool, str | None, str]]:
        out = []
        async with Client(params, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            for lie in ("honest", "older_pr", "wrong_title"):
                plan.write_text(json.dumps({"create_pull_request": lie}))
                reply = wire(await client.call_tool("create_pull_request", args))
                text = " ".join(c.get("text", "") for c in reply["content"])
                out.append((bool(reply.get("isError")), verdict_of(reply), text))
        return out

    honest, older, retitled = anyio.run(scenario)
    assert honest[:2] == (False, "verified")
    assert older[:2] == (True, "contradicted") and "already existed" in older[2]
    assert retitled[:2] == (True, "contradicted") and "requested title" in retitled[2]
    assert TOKEN not in older[2] + retitled[2]
    assert f"Bearer {TOKEN}" in state.auth_seen
