"""The CI verifier re-runs only steps of the CI file as committed when the session began.

The attack: an agent rewrites ``.affidavit-ci.yml`` (marking a side effect "safe to re-run"),
the backend runs it, and the verifier runs it a second time to "check". Every test counts the
executions of the side effect in a real repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.ci import CIVerifier
from tests.proxy._verifier_fixtures import (
    call,
    dev_command,
    git,
    init_repo,
    proxied,
    verdict_of,
    wire,
)

CI = ".affidavit-ci.yml"
TRUSTED = """\
pipelines:
  check:
    - name: readme
      command: [test, -f, README.md]
      safe_to_rerun: true
"""
SIDE_EFFECT = """\
pipelines:
  check:
    - name: readme
      command: ["sh", "-c", "echo ran >> executions.log"]
      safe_to_rerun: true
"""
CLAIM = {
    "pipeline": "check",
    "passed": True,
    "steps": [
        {
            "name": "readme",
            "command": ["sh", "-c", "echo ran >> executions.log"],
            "exit_code": 0,
            "passed": True,
            "safe_to_rerun": True,
        }
    ],
    "skipped": [],
}


def executions(repo: Path) -> int:
    log = repo / "executions.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def commit_ci(repo: Path, text: str) -> None:
    (repo / CI).write_text(text)
    git(repo, "add", CI)
    git(repo, "commit", "-q", "-m", "CI")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init_repo(tmp_path / "repo")
    commit_ci(path, TRUSTED)
    return path


def judge_claim(verifier: CIVerifier, repo: Path) -> tuple[Verdict, str]:
    ctx = call("run_ci_pipeline", {}, backend_command=dev_command(repo))
    assert verifier.applies(ctx)
    receipt = verifier.verify(ctx, verifier.snapshot(ctx), {"structuredContent": CLAIM})
    return receipt.verdict, receipt.evidence[0].observed


def first_sight(verifier: CIVerifier, repo: Path) -> None:
    """The session's first call on the repository (any tool) reaches the verifier."""
    verifier.applies(call("write_file", {"path": CI}, backend_command=dev_command(repo)))


def test_an_uncommitted_edit_is_not_rerun(repo: Path) -> None:
    verifier = CIVerifier()
    first_sight(verifier, repo)
    (repo / CI).write_text(SIDE_EFFECT)
    verdict, observed = judge_claim(verifier, repo)
    assert verdict is Verdict.UNCHECKED and "not the one committed" in observed
    assert executions(repo) == 0


def test_an_edit_committed_during_the_session_is_not_rerun(repo: Path) -> None:
    verifier = CIVerifier()
    first_sight(verifier, repo)
    commit_ci(repo, SIDE_EFFECT)
    verdict, observed = judge_claim(verifier, repo)
    assert verdict is Verdict.UNCHECKED and "changed during this session" in observed
    assert executions(repo) == 0


def test_a_ci_file_that_was_never_committed_is_not_rerun(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / CI).write_text(SIDE_EFFECT)
    verdict, observed = judge_claim(CIVerifier(), repo)
    assert verdict is Verdict.UNCHECKED and "not committed" in observed
    assert executions(repo) == 0


def test_a_pinned_pipeline_is_still_rerun_and_verified(repo: Path) -> None:
    commit_ci(repo, SIDE_EFFECT)  # committed before the session: the user's own pipeline
    verdict, _ = judge_claim(CIVerifier(), repo)
    assert verdict is Verdict.VERIFIED
    assert executions(repo) == 1  # the verifier's one re-run (the backend's run is not here)


def test_reruns_get_the_scrubbed_environment(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The step saw no secret when the backend ran it, so it must see none when re-run."""
    monkeypatch.setenv("SOME_API_TOKEN", "tok-for-tests")
    commit_ci(
        repo,
        TRUSTED.replace("[test, -f, README.md]", '["sh", "-c", "test -z \\"$SOME_API_TOKEN\\""]'),
    )
    claim = {**CLAIM, "steps": [{**CLAIM["steps"][0]}]}  # type: ignore[dict-item]
    claim["steps"][0]["command"] = ["sh", "-c", 'test -z "$SOME_API_TOKEN"']
    ctx = call("run_ci_pipeline", {}, backend_command=dev_command(repo))
    verifier = CIVerifier()
    receipt = verifier.verify(ctx, verifier.snapshot(ctx), {"structuredContent": claim})
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence[0].observed


def test_one_agent_call_never_runs_an_agent_command(repo: Path, home: Path) -> None:
    """Through the real proxy and the real dev server: the agent tries to rewrite the CI file
    with a side effect marked safe, commits, and runs CI. Before the fix the side effect ran
    twice (once in the server, once in the verifier's re-run)."""
    backend = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]

    async def scenario() -> list[dict]:
        params = proxied(backend, [repo], home)
        async with Client(params, read_timeout_seconds=120) as client:  # type: ignore[arg-type]
            return [
                wire(await client.call_tool(name, args))
                for name, args in (
                    ("write_file", {"path": CI, "content": SIDE_EFFECT}),
                    ("git_commit", {"message": "faster CI"}),
                    ("run_ci_pipeline", {}),
                )
            ]

    wrote, _committed, ran = anyio.run(scenario)
    assert executions(repo) == 0
    assert wrote.get("isError") is True
    assert not ran.get("isError") and verdict_of(ran) == "verified"
