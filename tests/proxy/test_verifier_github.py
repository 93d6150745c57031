"""The GitHub verifier against a loopback HTTP server that answers like GitHub's REST API."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
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
from tests.proxy.fake_github import FakeGitHub, seeded, serving
from tests.support import run_cli

V = GitHubVerifier()
TOKEN = "ghp_test_token_never_in_evidence"


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    state = seeded()
    with serving(state) as url:
        yield state, url


def settings(url: str) -> dict[str, str]:
    return {"github_api_url": url, "github_token": TOKEN}


PR_ARGS = {
    "owner": "acme",
    "repo": "app",
    "title": "Add feature",
    "head": "feature",
    "base": "main",
}


def pr_call(url: str, title: str = "Add feature", base: str = "main"):
    args = {**PR_ARGS, "title": title, "base": base}
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


def test_a_redirect_to_another_host_never_carries_the_token(github) -> None:
    """The attack: the configured API answers with a redirect to a host the user never named
    (urllib copies ``Authorization`` onto a redirected request). The token must stay home."""
    state, url = github
    attacker = seeded()
    with serving(attacker) as elsewhere:
        state.redirect_to = elsewhere
        receipt = judge(V, pr_call(url), lambda: minimal(3))
    assert not any(TOKEN in seen for seen in attacker.auth_seen), attacker.auth_seen
    assert receipt.verdict is Verdict.UNCHECKED
    assert "redirected to another host" in receipt.evidence[0].observed
    assert TOKEN not in json.dumps(receipt.as_dict())


def test_an_api_url_with_credentials_is_not_used(github, home) -> None:
    _, url = github
    with_password = url.replace("http://", "http://user:hunter2pw@")
    receipt = judge(
        V,
        call("create_pull_request", PR_ARGS, settings={"github_api_url": with_password}),
        lambda: minimal(3),
    )
    assert receipt.verdict is Verdict.UNCHECKED
    refused = run_cli(["proxy", "--github-api", with_password, "--", "true"], home)
    assert refused.returncode != 0 and "must not carry credentials" in refused.stderr
    assert "hunter2pw" not in refused.stderr and "Traceback" not in refused.stderr
