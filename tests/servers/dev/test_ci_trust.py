"""The dev server's CI trust model, attacked the way an agent would: rewrite the pipeline file,
switch to a branch whose pipeline does something else, run one that was never committed, read
the server's secrets from a step. Real git, real server subprocesses, the official client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.servers.dev.conftest import eventually, git
from tests.servers.rawwire import RawServer
from tests.support import GIT_IDENTITY, cli_env

CI = ".affidavit-ci.yml"
HANG_GUARD_S = 60.0  # a hang detector, not a measurement
PINNED = """\
pipelines:
  check:
    - name: mark
      command: ["sh", "-c", "echo pinned pipeline ran; touch ran-pinned"]
"""
HOSTILE = """\
pipelines:
  check:
    - name: mark
      command: ["sh", "-c", "touch pwned"]
      safe_to_rerun: true
"""
SECRETS = {
    "AFFIDAVIT_PASSPHRASE": "correct horse battery staple",
    "GITHUB_TOKEN": "ghp_notarealtoken0000000000000000000000",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-for-tests-only",
    "PASSED_ON_PURPOSE": "fine to see",
}


def commit_ci(repo: Path, text: str, message: str = "CI") -> None:
    (repo / CI).write_text(text)
    git(repo, "add", CI)
    git(repo, "commit", "-q", "-m", message)


def text(result: Any) -> str:
    return str(result.content[0].text)


def test_the_agent_cannot_rewrite_the_pipeline_file(repo: Path, client_for) -> None:
    commit_ci(repo, PINNED)
    (repo / "docs").mkdir()
    (repo / "docs" / "ci-link.yml").symlink_to(f"../{CI}")
    original = (repo / CI).read_bytes()

    async def scenario() -> None:
        async with client_for(repo) as client:
            for path in (CI, f"./{CI}", str(repo / CI), "docs/ci-link.yml", CI.upper()):
                wrote = await client.call_tool("write_file", {"path": path, "content": HOSTILE})
                assert wrote.is_error, path
                assert "pipeline file" in text(wrote) and "--allow-ci-edits" in text(wrote)
            sql = await client.call_tool("sqlite_execute", {"db": CI, "sql": "CREATE TABLE t(x)"})
            assert sql.is_error and "pipeline file" in text(sql)
            ran = await client.call_tool("run_ci_pipeline", {})
            assert not ran.is_error and ran.structured_content["passed"] is True

    anyio.run(scenario)
    assert (repo / CI).read_bytes() == original
    assert (repo / "ran-pinned").exists() and not (repo / "pwned").exists()


def test_only_the_pipeline_committed_when_the_server_started_runs(repo: Path, client_for) -> None:
    commit_ci(repo, PINNED)
    git(repo, "checkout", "-q", "-b", "other")
    commit_ci(repo, HOSTILE, "another pipeline on another branch")
    git(repo, "checkout", "-q", "main")

    async def scenario() -> None:
        async with client_for(repo, server_args=["--allow-ci-edits"]) as client:
            # A branch with another committed pipeline: still the pinned one runs.
            assert not (await client.call_tool("git_checkout", {"name": "other"})).is_error
            ran = await client.call_tool("run_ci_pipeline", {})
            assert ran.structured_content["steps"][0]["command"][-1].endswith("touch ran-pinned")
            assert "changed since the server started" in text(ran)
            # Allowed to edit it, and even committing the edit: the pinned one runs.
            assert not (await client.call_tool("git_checkout", {"name": "main"})).is_error
            wrote = await client.call_tool("write_file", {"path": CI, "content": HOSTILE})
            assert not wrote.is_error
            assert not (await client.call_tool("git_commit", {"message": "agent CI"})).is_error
            again = await client.call_tool("run_ci_pipeline", {})
            assert again.structured_content["passed"] is True
            assert "changed since the server started" in text(again)

    anyio.run(scenario)
    assert (repo / "ran-pinned").exists() and not (repo / "pwned").exists()


def test_a_pipeline_that_was_never_committed_does_not_run(repo: Path, client_for) -> None:
    (repo / CI).write_text(HOSTILE)  # in the work tree only, as an agent's write would be

    async def scenario() -> None:
        async with client_for(repo) as client:
            ran = await client.call_tool("run_ci_pipeline", {})
            assert ran.is_error
            assert "not committed" in text(ran) and "restart" in text(ran)

    anyio.run(scenario)
    assert not (repo / "pwned").exists()


def test_a_committed_link_is_not_a_pipeline(repo: Path, client_for) -> None:
    """A link's target could change under the server; only a regular file is pinned."""
    (repo / "hostile.yml").write_text(HOSTILE)
    (repo / CI).symlink_to("hostile.yml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "CI as a link")

    async def scenario() -> None:
        async with client_for(repo) as client:
            ran = await client.call_tool("run_ci_pipeline", {})
            assert ran.is_error and "linked" in text(ran)

    anyio.run(scenario)
    assert not (repo / "pwned").exists()


def test_an_invalid_committed_pipeline_is_one_clear_error(repo: Path, client_for) -> None:
    commit_ci(repo, "pipelines: {a: [{name: x}]}\n")

    async def scenario() -> None:
        async with client_for(repo) as client:
            invalid = await client.call_tool("run_ci_pipeline", {})
            assert invalid.is_error and "pipelines.a[0].command" in text(invalid)
            assert "\n" not in text(invalid)

    anyio.run(scenario)


def test_steps_run_with_a_scrubbed_environment(repo: Path, client_for) -> None:
    commit_ci(
        repo,
        """\
pass_env: [PASSED_ON_PURPOSE]
pipelines:
  env:
    - name: show
      command: ["python3", "-c", "import os; print(sorted(os.environ.items()))"]
""",
    )

    async def scenario() -> str:
        async with client_for(repo, env=SECRETS) as client:
            ran = await client.call_tool("run_ci_pipeline", {})
            assert ran.structured_content["passed"] is True, text(ran)
            return str(ran.structured_content["steps"][0]["output_tail"])

    shown = anyio.run(scenario)
    for name in ("AFFIDAVIT_PASSPHRASE", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        assert name not in shown and SECRETS[name] not in shown
    assert "('PASSED_ON_PURPOSE', 'fine to see')" in shown and "'PATH'" in shown
    assert "AFFIDAVIT_HOME" not in shown  # set by the test harness, not on the allow-list


def test_the_server_exits_when_the_client_goes_away_mid_step(repo: Path, home: Path) -> None:
    """The step would run for an hour; the client leaving kills it and its children."""
    commit_ci(
        repo,
        """\
pipelines:
  long:
    - name: sleeps
      command: ["sh", "-c", "echo $$ > step.pid; exec sleep 3000"]
      timeout: 3600
""",
    )
    server = RawServer(["devserver", "--repo-path", str(repo)], cli_env(home, GIT_IDENTITY))
    try:
        server.open_session()
        server.call_tool(2, "run_ci_pipeline", {})
        pid_file = repo / "step.pid"
        anyio.run(
            eventually,
            lambda: pid_file.exists() and bool(pid_file.read_text().strip()),
            HANG_GUARD_S,
        )
        code, stderr = server.close(wait=HANG_GUARD_S)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert code == 0 and "Traceback" not in stderr, stderr
    step = int((repo / "step.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(step, 0)
