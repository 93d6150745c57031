"""The git verifier against real repositories, real plumbing lies and the real mcp-server-git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.git import GitVerifier, clean_message
from affidavit.proxy.verifiers.gitobjects import index_tree, parse_commit, read_loose
from affidavit.proxy.verifiers.gitrepo import CommitObject, GitRepo
from tests.proxy._verifier_fixtures import (
    call,
    dev_command,
    git,
    git_env,
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


# -- reading git's files without git (gitobjects) ----------------------------------------------
def _git_view(repo: Path, sha: str) -> CommitObject:
    """What ``git log`` itself shows for ``sha``: the reference the file readers must match."""
    out = git(repo, "log", "-1", "--no-walk", "--format=%H%x00%T%x00%P%x00%B", sha)
    full, tree, parents, message = out.split("\0", 3)
    return CommitObject(full, tree, tuple(parents.split()), message)


def _same_commit(a: CommitObject | None, b: CommitObject) -> bool:
    return (
        a is not None
        and (a.sha, a.tree, a.parents) == (b.sha, b.tree, b.parents)
        and clean_message(a.message) == clean_message(b.message)
    )


def test_loose_commits_are_read_from_their_files_exactly_as_git_shows_them(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "Subject\n\nBody line\n  indented\n")
    head = git(repo, "rev-parse", "HEAD")
    # A merge with a multi-line signature-like header: continuation lines are not headers.
    raw = (
        f"tree {git(repo, 'rev-parse', 'HEAD^{tree}')}\nparent {head}\nparent {head}~1\n"
        "author A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n parent 0000\n -----END PGP SIGNATURE-----\n"
        "\nmerge message\n\nwith body\n"
    ).replace(f"{head}~1", git(repo, "rev-parse", "HEAD~1"))
    merge = git(repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=raw)
    gr = GitRepo(repo)
    for sha in (head, merge):
        loose = read_loose(gr.common_dir / "objects", sha)
        assert loose is not None and loose.kind == "commit"
        assert loose.body == git(repo, "cat-file", "commit", sha).encode() + b"\n"
        assert _same_commit(gr.commit(sha), _git_view(repo, sha))
    merged = gr.commit(merge)
    assert merged is not None and merged.parents == (head, git(repo, "rev-parse", "HEAD~1"))
    assert gr.object_type(git(repo, "rev-parse", "HEAD^{tree}")) == "tree"
    assert gr.commit(git(repo, "rev-parse", "HEAD^{tree}")) is None


def test_a_loose_file_whose_bytes_are_not_its_name_is_not_trusted(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "real")
    gr = GitRepo(repo)
    real = git(repo, "rev-parse", "HEAD")
    other = git(repo, "rev-parse", "HEAD~1")
    objects = gr.common_dir / "objects"
    target = objects / other[:2] / other[2:]
    target.chmod(0o644)
    target.write_bytes((objects / real[:2] / real[2:]).read_bytes())  # forged content
    assert read_loose(objects, other) is None
    (objects / real[:2] / real[2:]).chmod(0o644)
    (objects / real[:2] / real[2:]).write_bytes(b"not zlib at all")
    assert read_loose(objects, real) is None


def test_packed_repository_falls_back_to_git_with_the_same_answers(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "packed soon")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "gc", "-q", "--prune=now")
    gr = GitRepo(repo)
    assert read_loose(gr.common_dir / "objects", head) is None  # really packed now
    assert _same_commit(gr.commit(head), _git_view(repo, head))
    assert gr.object_type(head) == "commit"
    assert gr.index_matches_head()
    (repo / "a.txt").write_text("changed\n")
    git(repo, "add", "a.txt")
    assert not gr.index_matches_head()


def test_replace_refs_and_foreign_encodings_are_left_to_git(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "original")
    original = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "stand-in")
    git(repo, "replace", original, "HEAD")
    gr = GitRepo(repo)
    shown = gr.commit(original)
    assert shown is not None and shown.message.strip() == "stand-in"  # what git log shows
    people = "author A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n"
    latin = f"tree {'0' * 40}\n{people}encoding ISO-8859-1\n\nx\n"
    assert parse_commit(latin.encode()) is None


def test_an_honest_commit_is_verified_without_starting_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = commit_ctx(repo)
    before = V.snapshot(ctx)
    git(repo, "commit", "-q", "-m", "Add a")
    reply = said(git(repo, "rev-parse", "HEAD"))
    (tmp_path / "no-git").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git"))  # any git start would now fail
    receipt = V.verify(ctx, before, reply)
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence


def _write_tree(repo: Path) -> str:
    return git(repo, "write-tree")


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_tree_is_the_tree_git_would_write(repo: Path, version: str) -> None:
    for rel in ("a-b", "a/b/c.txt", "a/z", "a.txt", "zz/deep/er/f", "b c.txt"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(rel)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("a.txt")
    git(repo, "add", "-A")
    if version == "3":
        git(repo, "update-index", "--skip-worktree", "a/z")  # forces extended flags
    git(repo, "update-index", "--index-version", version)
    gr = GitRepo(repo)
    assert index_tree(gr.git_dir / "index") == _write_tree(repo)
    assert not gr.index_matches_head()
    git(repo, "commit", "-q", "-m", "many")
    assert index_tree(gr.git_dir / "index") == git(repo, "rev-parse", "HEAD^{tree}")
    assert gr.index_matches_head()


def test_indexes_the_reader_cannot_vouch_for_go_to_git(repo: Path) -> None:
    gr = GitRepo(repo)
    index = gr.git_dir / "index"
    (repo / "later.txt").write_text("x")
    git(repo, "add", "-N", "later.txt")  # intent-to-add: not a staged blob
    assert index_tree(index) is None
    git(repo, "rm", "-q", "--cached", "later.txt")
    git(repo, "commit", "-q", "-m", "clean")
    assert index_tree(index) == git(repo, "rev-parse", "HEAD^{tree}")
    data = bytearray(index.read_bytes())
    data[-1] ^= 0xFF  # a broken checksum
    index.write_bytes(bytes(data))
    assert index_tree(index) is None


def test_an_index_in_the_middle_of_a_conflict_goes_to_git(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.txt").write_text("theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    merge = subprocess.run(
        ["git", "merge", "-q", "other"], cwd=repo, env=git_env(), capture_output=True
    )
    assert merge.returncode != 0  # a real conflict: stages 1-3 in the index
    gr = GitRepo(repo)
    assert index_tree(gr.git_dir / "index") is None
    assert gr.index_matches_head() == (
        subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=repo, env=git_env()).returncode
        == 0
    )
