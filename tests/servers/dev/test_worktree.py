"""WorkTree without MCP: a refused commit leaves the index exactly as it found it."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import ConflictError, ExternalError
from affidavit.servers.dev.worktree import WorkTree as GitRepo
from tests.servers.dev.conftest import git


def test_failed_commit_restores_the_index(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{name}_NAME", raising=False)
        monkeypatch.delenv(f"GIT_{name}_EMAIL", raising=False)
    monkeypatch.setenv("HOME", str(repo.parent))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(repo, "config", "user.useConfigOnly", "true")
    (repo / "new.txt").write_text("new\n")
    (repo / "README.md").write_text("# changed\n")
    index_before = (repo / ".git" / "index").read_bytes()

    with pytest.raises(ExternalError, match="git commit failed") as failed:
        GitRepo.open(repo).commit("will not happen", None)
    assert failed.value.hint is not None and "user.name" in failed.value.hint
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert git(repo, "log", "--format=%s") == "initial commit\n"


def test_nothing_to_commit_restores_the_index(repo: Path) -> None:
    index_before = (repo / ".git" / "index").read_bytes()
    with pytest.raises(ConflictError, match="nothing to commit"):
        GitRepo.open(repo).commit("empty", ["README.md"])
    assert (repo / ".git" / "index").read_bytes() == index_before
