"""The git verifier against real repositories, real plumbing lies and the real mcp-server-git."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.git import GitVerifier, clean_message
from tests.proxy._verifier_fixtures import (
    call,
    dev_command,
    git,
    git_server_argv,
    init_repo,
    judge,
    proxied,
    tool_result,
    verdict_of,
    wire,
)

V = GitVerifier()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init_repo(tmp_path / "repo")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    return path


def commit_ctx(repo: Path, message: str = "Add a"):
    return call("git_commit", {"repo_path": str(repo), "message": message})


def said(sha: str):
    return tool_result(f"Changes committed successfully with hash {sha}")


def test_honest_commit_is_verified_then_stops_holding(repo: Path) -> None:
    ctx = commit_ctx(repo)

    def act():
        git(repo, "commit", "-q", "-m", "Add a")
        return said(git(repo, "rev-parse", "HEAD"))

    receipt = judge(V, ctx, act)
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence
    assert V.still_holds(ctx, receipt)
    (repo / "b.txt").write_text("b")
    git(repo, "add", "b.txt")
    assert not V.still_holds(ctx, receipt)


def _fake_commit(repo: Path, message: str, tree: str = "HEAD^{tree}", parent: str = "HEAD"):
    return git(repo, "commit-tree", tree, "-p", parent, "-m", message)


@pytest.mark.parametrize(
    ("lie", "observed"),
    [
        ("old_hash", "hash HEAD already had"),
        ("tree_hash", "is a tree object, not a commit"),
        ("fabricated", "no object"),
        ("other_message", "another message"),
        ("head_not_moved", "HEAD is at"),
        ("staged_left_out", "not in it"),
        ("other_branch_commit", "already existed"),
        ("no_hash_no_commit", "hash HEAD already had"),
        ("option_like_hash", "no object"),
    ],
)
def test_commit_lies_are_contradicted(repo: Path, lie: str, observed: str) -> None:
    if lie == "other_branch_commit":
        git(repo, "stash", "-q")
        git(repo, "checkout", "-q", "-b", "side")
        (repo / "s.txt").write_text("s")
        git(repo, "add", "s.txt")
        git(repo, "commit", "-q", "-m", "Add a")
        git(repo, "checkout", "-q", "main")
        git(repo, "stash", "pop", "-q")
        git(repo, "add", "a.txt")
    ctx = commit_ctx(repo)

    def act():
        if lie == "old_hash":
            return said(git(repo, "rev-parse", "HEAD"))
        if lie == "tree_hash":
            return said(git(repo, "write-tree"))
        if lie == "fabricated":
            return said("1234567890abcdef1234567890abcdef12345678")
        if lie == "other_message":
            git(repo, "commit", "-q", "-m", "Something else")
            return said(git(repo, "rev-parse", "HEAD"))
        if lie == "head_not_moved":
            return said(_fake_commit(repo, "Add a", tree=git(repo, "write-tree")))
        if lie == "staged_left_out":
            sha = _fake_commit(repo, "Add a")
            git(repo, "update-ref", "refs/heads/main", sha)
            return said(sha)
        if lie == "other_branch_commit":
            sha = git(repo, "rev-parse", "side")
            git(repo, "reset", "-q", "--soft", sha)
            return said(sha)
        if lie == "option_like_hash":
            return tool_result("ok", {"commit_hash": f"--output={repo / 'pwned'}"})
        return tool_result("Changes committed successfully")

    receipt = judge(V, ctx, act)
    assert receipt.verdict is Verdict.CONTRADICTED
    assert observed in receipt.evidence[0].observed, receipt.evidence[0].observed
    assert not (repo / "pwned").exists()


def test_dev_server_commit_with_paths_and_structured_hash(repo: Path) -> None:
    (repo / "b.txt").write_text("b\n")
    ctx = call(
        "git_commit",
        {"message": "Only b", "paths": ["b.txt"]},
        backend_command=dev_command(repo),
    )

    def honest():
        git(repo, "add", "b.txt")
        git(repo, "commit", "-q", "--only", "-m", "Only b", "--", "b.txt")
        return tool_result("committed", {"commit_hash": git(repo, "rev-parse", "HEAD")})

    receipt = judge(V, ctx, honest)
    assert receipt.verdict is Verdict.VERIFIED
    assert V.still_holds(ctx, receipt)  # a.txt is still staged, but the commit was only b.txt
    (repo / "b.txt").write_text("b changed\n")
    assert not V.still_holds(ctx, receipt)
    (repo / "c.txt").write_text("c\n")
    args = {"message": "Only c", "paths": ["c.txt"]}
    ctx = call("git_commit", args, backend_command=dev_command(repo))

    def forgot_the_path():
        git(repo, "commit", "-q", "--allow-empty", "-m", "Only c")
        return tool_result("committed", {"commit_hash": git(repo, "rev-parse", "HEAD")})

    assert judge(V, ctx, forgot_the_path).verdict is Verdict.CONTRADICTED


def test_clean_message_matches_gits_whitespace_cleanup(repo: Path) -> None:
    message = "\n  \nSubject  \n\n\n\nBody \t\n\n"
    git(repo, "commit", "-q", "-m", message)
    stored = git(repo, "cat-file", "commit", "HEAD").split("\n\n", 1)[1]
    assert clean_message(message) == stored.rstrip("\n") == "Subject\n\nBody"


def test_add_and_reset_claims(repo: Path) -> None:
    (repo / "n.txt").write_text("n\n")
    add = call("git_add", {"repo_path": str(repo), "files": ["n.txt"]})
    assert judge(V, add, lambda: tool_result("Files staged successfully")).verdict is (
        Verdict.CONTRADICTED
    )
    receipt = judge(V, add, lambda: (git(repo, "add", "n.txt"), tool_result("ok"))[1])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(add, receipt)
    (repo / "n.txt").write_text("changed again\n")
    assert not V.still_holds(add, receipt)

    reset = call("git_reset", {"repo_path": str(repo)})
    assert judge(V, reset, lambda: tool_result("All staged changes reset")).verdict is (
        Verdict.CONTRADICTED
    )
    receipt = judge(V, reset, lambda: (git(repo, "reset", "-q"), tool_result("ok"))[1])
    assert receipt.verdict is Verdict.VERIFIED


def test_branch_claims(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "second")
    first = git(repo, "rev-parse", "HEAD~1")
    ctx = call(
        "git_create_branch",
        {"repo_path": str(repo), "branch_name": "feat", "base_branch": "main"},
    )
    assert judge(V, ctx, lambda: tool_result("Created")).verdict is Verdict.CONTRADICTED

    def wrong_base():
        git(repo, "branch", "feat", first)
        return tool_result("Created branch 'feat' from 'main'")

    receipt = judge(V, ctx, wrong_base)
    assert receipt.verdict is Verdict.CONTRADICTED and "not at main" in receipt.evidence[0].observed
    git(repo, "branch", "-D", "feat")
    receipt = judge(V, ctx, lambda: (git(repo, "branch", "feat", "main"), tool_result("ok"))[1])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(ctx, receipt)
    # The branch now exists: claiming to create it again is not this call's doing.
    assert judge(V, ctx, lambda: tool_result("Created")).verdict is Verdict.CONTRADICTED

    dev = call("git_branch", {"name": "old", "base": first}, backend_command=dev_command(repo))
    ok = judge(V, dev, lambda: (git(repo, "branch", "old", first), tool_result("ok"))[1])
    assert ok.verdict is Verdict.VERIFIED
    lie = call("git_branch", {"name": "new"}, backend_command=dev_command(repo))
    wrong = {"branch": "new", "commit_hash": first}
    receipt = judge(V, lie, lambda: (git(repo, "branch", "new"), tool_result("ok", wrong))[1])
    assert (
        receipt.verdict is Verdict.CONTRADICTED and "reports commit" in receipt.evidence[0].observed
    )
    assert not V.applies(call("git_branch", {"name": "x", "list": True}))
    assert not V.applies(call("git_reset", {"repo_path": str(repo), "mode": "hard"}))
    assert not V.applies(call("git_branch", {"repo_path": str(repo), "branch_type": "local"}))


def test_checkout_claims(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "second")
    git(repo, "branch", "other", "HEAD~1")
    ctx = call("git_checkout", {"repo_path": str(repo), "branch_name": "other"})
    assert judge(V, ctx, lambda: tool_result("Switched")).verdict is Verdict.CONTRADICTED

    def head_only():
        git(repo, "symbolic-ref", "HEAD", "refs/heads/other")
        return tool_result("Switched to branch 'other'")

    receipt = judge(V, ctx, head_only)
    assert receipt.verdict is Verdict.CONTRADICTED and "index" in receipt.evidence[0].observed
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    receipt = judge(V, ctx, lambda: (git(repo, "checkout", "-q", "other"), tool_result("ok"))[1])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(ctx, receipt)


def test_unlocatable_repository_is_unchecked(tmp_path: Path) -> None:
    ctx = call("git_commit", {"message": "x"})
    assert judge(V, ctx, lambda: said("0" * 40)).verdict is Verdict.UNCHECKED
    ctx = commit_ctx(tmp_path / "not-a-repo")
    assert judge(V, ctx, lambda: said("0" * 40)).verdict is Verdict.UNCHECKED


def test_mcp_server_git_through_the_proxy_is_verified(repo: Path, home: Path) -> None:
    """No false alarm against the real mcp-server-git, tool by tool."""
    (repo / "b.txt").write_text("b\n")
    steps = [
        ("git_add", {"files": ["b.txt"]}),
        ("git_reset", {}),
        ("git_add", {"files": ["."]}),
        ("git_commit", {"message": "Add a and b\n\nWith a body."}),
        ("git_create_branch", {"branch_name": "feature", "base_branch": "main"}),
        ("git_create_branch", {"branch_name": "from-head"}),
        ("git_checkout", {"branch_name": "feature"}),
        ("git_checkout", {"branch_name": git(repo, "rev-parse", "HEAD")}),
    ]

    async def scenario() -> list[str | None]:
        params = proxied(git_server_argv(repo), [repo], home)
        async with Client(params, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            replies = []
            for name, args in steps:
                replies.append(wire(await client.call_tool(name, {"repo_path": str(repo), **args})))
        assert not [r for r in replies if r.get("isError")]
        return [verdict_of(r) for r in replies]

    assert anyio.run(scenario) == ["verified"] * len(steps)


def test_dev_server_through_the_proxy_is_verified(repo: Path, home: Path) -> None:
    """Every claim the real dev server makes, verified through the real proxy."""
    (repo / ".affidavit-ci.yml").write_text(
        "pipelines:\n  check:\n    - name: readme\n      command: [test, -f, README.md]\n"
        "      safe_to_rerun: true\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add CI")
    backend = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]
    calls = [
        ("write_file", {"path": "docs/x.md", "content": "x\n"}),
        ("git_commit", {"message": "Add x", "paths": ["docs/x.md"]}),
        ("write_file", {"path": "y.txt", "content": "y\n"}),
        ("git_commit", {"message": "Add y"}),
        ("git_branch", {"name": "topic", "base": "HEAD~1"}),
        ("git_checkout", {"name": "topic"}),
        ("run_ci_pipeline", {}),
    ]

    async def scenario() -> list[str | None]:
        async with Client(proxied(backend, [repo], home), read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            replies = [wire(await client.call_tool(name, args)) for name, args in calls]
            for uri in ("repo://status", "repo://log", "repo://file/README.md"):
                replies.append(wire(await client.read_resource(uri)))
        assert not [r for r in replies if r.get("isError")]
        return [verdict_of(r) for r in replies]

    assert anyio.run(scenario) == ["verified"] * (len(calls) + 3)


def test_overlapping_commits_are_not_held_against_each_other(repo: Path) -> None:
    """Two honest commits in flight at once: each sees the other's effect, neither is a lie."""
    first, second = commit_ctx(repo, "first"), commit_ctx(repo, "second")
    before_first, before_second = V.snapshot(first), V.snapshot(second)
    git(repo, "commit", "-q", "-m", "first")
    sha_first = git(repo, "rev-parse", "HEAD")
    (repo / "b.txt").write_text("b")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "second")
    sha_second = git(repo, "rev-parse", "HEAD")
    verdicts = [
        V.verify(first, before_first, said(sha_first)),
        V.verify(second, before_second, said(sha_second)),
    ]
    assert [r.verdict for r in verdicts] == [Verdict.UNCHECKED, Verdict.UNCHECKED]
    assert "in flight at the same time" in verdicts[0].evidence[-1].observed
    # Once the windows are closed, a lone lie is contradicted again.
    lone = commit_ctx(repo, "third")
    assert judge(V, lone, lambda: said(sha_second)).verdict is Verdict.CONTRADICTED


def test_a_commit_cleaned_up_by_the_users_git_config_is_not_a_lie(repo: Path) -> None:
    git(repo, "config", "commit.cleanup", "strip")
    message = "Subject\n# a comment line git drops\nBody"
    ctx = commit_ctx(repo, message)

    def act():
        git(repo, "commit", "-q", "-m", message)
        return said(git(repo, "rev-parse", "HEAD"))

    assert judge(V, ctx, act).verdict is Verdict.VERIFIED
