"""The CI verifier against reports from the real dev server, honest and doctored."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import anyio
import pytest

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.ci import CIVerifier
from tests.proxy._verifier_fixtures import call, dev_client, dev_command, git, init_repo, wire

V = CIVerifier()
CI_FILE = """\
default: safe
pipelines:
  safe:
    - name: lint
      command: ["sh", "-c", "test -f README.md"]
      safe_to_rerun: true
    - name: unit
      command: "sh -c 'exit 0'"
      safe_to_rerun: true
  broken:
    - name: ok
      command: ["true"]
      safe_to_rerun: true
    - name: fails
      command: ["sh", "-c", "echo boom; exit 3"]
      safe_to_rerun: true
    - name: after
      command: ["true"]
  mixed:
    - name: checks
      command: ["true"]
      safe_to_rerun: true
    - name: deploy
      command: ["true"]
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """One dev-server session: the honest report of every pipeline, in wire shape."""
    base = tmp_path_factory.mktemp("ci")
    repo = init_repo(base / "repo")
    (repo / ".affidavit-ci.yml").write_text(CI_FILE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add CI")
    home = base / "home"
    home.mkdir()

    async def scenario() -> dict[str, dict[str, Any]]:
        out = {}
        async with dev_client(repo, home) as client:
            for pipeline in ("safe", "broken", "mixed"):
                result = await client.call_tool("run_ci_pipeline", {"pipeline": pipeline})
                out[pipeline] = wire(result)
        return out

    return repo, anyio.run(scenario)


def verdict_of(repo: Path, pipeline: str, result: dict[str, Any]):
    ctx = call("run_ci_pipeline", {"pipeline": pipeline}, backend_command=dev_command(repo))
    return V.verify(ctx, V.snapshot(ctx), result)


def doctored(result: dict[str, Any], change) -> dict[str, Any]:
    copy_ = copy.deepcopy(result)
    change(copy_["structuredContent"])
    return copy_


def test_honest_reports(reports) -> None:
    repo, got = reports
    assert verdict_of(repo, "safe", got["safe"]).verdict is Verdict.VERIFIED
    # A failure reported truthfully is verified too: re-running the step fails again.
    assert verdict_of(repo, "broken", got["broken"]).verdict is Verdict.VERIFIED
    mixed = verdict_of(repo, "mixed", got["mixed"])
    assert mixed.verdict is Verdict.UNCHECKED
    assert mixed.evidence[0].details["not_rerun"] == ["deploy"]


def _claim_failed_step_passed(report: dict[str, Any]) -> None:
    step = report["steps"][1]
    step.update(exit_code=0, passed=True)
    report["steps"].append({**step, "name": "after", "command": ["true"], "safe_to_rerun": False})
    report.update(passed=True, skipped=[])


def _hide_failing_step_as_unsafe(report: dict[str, Any]) -> None:
    _claim_failed_step_passed(report)
    report["steps"][1]["safe_to_rerun"] = False


@pytest.mark.parametrize(
    ("pipeline", "lie", "observed"),
    [
        ("broken", _claim_failed_step_passed, "running it again it exited 3"),
        ("broken", _hide_failing_step_as_unsafe, "the CI file says True"),
        ("broken", lambda r: r["steps"][1].update(passed=True), "reports exit code 3"),
        ("broken", lambda r: r.update(passed=True), "reported passed=True"),
        ("safe", lambda r: r["steps"].pop(), "left out"),
        ("safe", lambda r: r["steps"].append(dict(r["steps"][0])), "does not define"),
        ("safe", lambda r: r["steps"][0].update(command=["echo", "x"]), "another command"),
        ("safe", lambda r: r.update(pipeline="broken"), "not 'safe'"),
        ("safe", lambda r: r["steps"][0].update(name="style"), "reported as 'style'"),
        ("safe", lambda r: r["steps"][0].update(exit_code="0"), "malformed"),
    ],
)
def test_doctored_reports_are_contradicted(reports, pipeline, lie, observed) -> None:
    repo, got = reports
    receipt = verdict_of(repo, pipeline, doctored(got[pipeline], lie))
    assert receipt.verdict is Verdict.CONTRADICTED
    assert observed in receipt.evidence[0].observed, receipt.evidence[0].observed


def test_a_rerun_that_runs_out_of_time_is_unchecked(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / ".affidavit-ci.yml").write_text(
        "pipelines:\n  slow:\n    - name: s\n      command: [sleep, '30']\n"
        "      safe_to_rerun: true\n      timeout: 0.3\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "slow CI")  # only a committed CI file's steps are re-run
    report = {
        "pipeline": "slow",
        "passed": True,
        "steps": [{"name": "s", "command": ["sleep", "30"], "exit_code": 0, "passed": True}],
    }
    result = {"content": [], "structuredContent": report}
    receipt = verdict_of(repo, "slow", result)
    assert receipt.verdict is Verdict.UNCHECKED
    assert receipt.evidence[0].details["not_rerun"] == ["s"]


def test_missing_ci_file_or_repo_is_unchecked(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    report = {"content": [], "structuredContent": {"pipeline": "x", "passed": True, "steps": []}}
    assert verdict_of(repo, "x", report).verdict is Verdict.UNCHECKED
    ctx = call("run_ci_pipeline", {})
    assert V.verify(ctx, V.snapshot(ctx), report).verdict is Verdict.UNCHECKED


def test_ci_file_is_read_before_the_call(reports) -> None:
    """A backend that rewrites the CI file during the call cannot move the goalposts."""
    repo, got = reports
    ctx = call("run_ci_pipeline", {"pipeline": "broken"}, backend_command=dev_command(repo))
    before = V.snapshot(ctx)
    ci_path = repo / ".affidavit-ci.yml"
    original = ci_path.read_text()
    try:
        ci_path.write_text(original.replace("exit 3", "exit 0"))
        lie = doctored(got["broken"], _claim_failed_step_passed)
        assert V.verify(ctx, before, lie).verdict is Verdict.CONTRADICTED
    finally:
        ci_path.write_text(original)


def test_a_verified_run_holds_until_the_repository_changes(reports) -> None:
    repo, got = reports
    ctx = call("run_ci_pipeline", {"pipeline": "safe"}, backend_command=dev_command(repo))
    receipt = V.verify(ctx, V.snapshot(ctx), got["safe"])
    assert receipt.verdict is Verdict.VERIFIED and V.still_holds(ctx, receipt)
    (repo / "scratch.txt").write_text("a change the result did not see")
    try:
        assert not V.still_holds(ctx, receipt)
    finally:
        (repo / "scratch.txt").unlink()
    assert V.still_holds(ctx, receipt)
