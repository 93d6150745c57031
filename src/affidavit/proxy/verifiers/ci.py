"""CI claims: the dev server's ``run_ci_pipeline`` report.

What it proves: the report is self-consistent (each step's ``passed`` agrees with its exit
code, the pipeline passed only if every step ran and passed, the first failure stops it); it
describes the pipeline the repository's ``.affidavit-ci.yml`` defines — the same steps, in
order, with the same commands and the same ``safe_to_rerun`` marks, nothing added and nothing
silently dropped; and every step the *file* marks ``safe_to_rerun`` really passes or fails as
reported, because the verifier runs it again itself (argv, no shell, in the repository, under
the step's timeout and an overall budget).

The CI file is read before the call, by the verifier, with the same parser the dev server
uses; which steps are safe to re-run is never taken from the backend's reply, so a backend
cannot hide a failing step by calling it unsafe. Steps are re-run only from the CI file the
user committed before the session: the verifier pins the file committed at HEAD the first time
it sees the repository (the relay asks it about every call, so that is the session's first
call), and when the file in the work tree is not that commit's, or HEAD's is not the pinned
one, nothing is re-run and the verdict is ``unchecked`` — otherwise an agent that rewrote the
file could have its command run twice, once by the backend and once "to check". Re-runs get
the same scrubbed environment the dev server gives a step (``cifile.step_environment``), never
the proxy's own.

What it cannot prove: the outcome of a step the file does not mark safe (running it again
could deploy twice) — then the verdict is ``unchecked`` for the whole report, with the
re-derived steps listed — or that a step that depends on the environment of the backend
behaves the same in the proxy's.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.errors import AffidavitError
from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.gitrepo import GitUnavailable, open_repo
from affidavit.proxy.verifiers.locate import call_repo, string_arg
from affidavit.proxy.verifiers.replies import (
    Judge,
    backend_failed,
    is_error,
    schema_problem,
    structured,
)

TOOL = "run_ci_pipeline"
RERUN_BUDGET_S = 45.0
_REPORT = {
    "type": "object",
    "required": ["pipeline", "passed", "steps"],
    "properties": {
        "pipeline": {"type": "string"},
        "passed": {"type": "boolean"},
        "skipped": {"type": "array", "items": {"type": "string"}},
        "steps": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "command", "exit_code", "passed"],
                "properties": {
                    "name": {"type": "string"},
                    "command": {
                        "oneOf": [
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}},
                        ]
                    },
                    "exit_code": {"type": "integer"},
                    "passed": {"type": "boolean"},
                    "safe_to_rerun": {"type": "boolean"},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class _Before:
    """The repository and its CI pipeline as the file defined it before the call."""

    repo: Path | None
    pipeline: str | None = None
    steps: tuple[Any, ...] = ()
    problem: str | None = None
    pass_env: tuple[str, ...] = ()
    unpinned: str | None = None  # why the file's steps must not be re-run this session


@dataclass(frozen=True)
class Rerun:
    """One step run again by the verifier."""

    exit_code: int | None
    timed_out: bool
    duration_ms: int


def rerun(
    command: Sequence[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None
) -> Rerun:
    """Run ``command`` (argv) in ``cwd`` with ``env`` (default: a step's scrubbed one); on
    timeout kill its whole process group."""
    from affidavit.core.cifile import step_environment

    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env) if env is not None else step_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return Rerun(127, False, 0)
    try:
        code: int | None = proc.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        code, timed_out = None, True
    return Rerun(code, timed_out, int((time.monotonic() - start) * 1000))


def _argv(command: Any) -> tuple[str, ...]:
    if isinstance(command, str):
        try:
            return tuple(shlex.split(command))
        except ValueError:
            return (command,)
    return tuple(command)


def _committed_blob(repo: Path) -> str | None:
    """The object id of the CI file in HEAD's tree, when it is a regular file there."""
    from affidavit.core.cifile import CI_FILE_NAME

    git = open_repo(repo)
    if git is None:
        return None
    try:
        entry = git.run("ls-tree", "HEAD", "--", CI_FILE_NAME)
    except GitUnavailable:  # no commit yet
        return None
    mode, kind, object_id = [*entry.split("\t", 1)[0].split(), "", "", ""][:3]
    return object_id if kind == "blob" and mode in ("100644", "100755") else None


def _blob_id(data: bytes, like: str) -> str:
    """The git object id ``data`` has as a blob, in the hash ``like`` uses (SHA-1 or SHA-256)."""
    digest = hashlib.sha1 if len(like) == 40 else hashlib.sha256  # git's naming, not a MAC
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


class CIVerifier:
    """Checks a CI report against the repository's CI file and re-runs the safe steps."""

    name = "ci"

    def __init__(self) -> None:
        self._pinned: dict[Path, str | None] = {}  # repo -> CI blob at HEAD when first seen

    def applies(self, ctx: CallContext) -> bool:
        repo = call_repo(ctx)
        if repo is not None:  # the session's first call pins the committed CI file
            self._pin(repo)
        return ctx.method == "tools/call" and ctx.name == TOOL

    def _pin(self, repo: Path) -> str | None:
        key = Path(os.path.realpath(repo))
        if key not in self._pinned:
            self._pinned.setdefault(key, _committed_blob(key))
        return self._pinned[key]

    def snapshot(self, ctx: CallContext) -> _Before:
        from affidavit.core.cifile import load_ci_file

        repo = call_repo(ctx)
        if repo is None:
            return _Before(repo=None)
        try:
            pinned = self._pin(repo)
            ci = load_ci_file(repo)
            name = ci.resolve(string_arg(ctx.arguments, "pipeline"))
            return _Before(
                repo=repo,
                pipeline=name,
                steps=tuple(ci.pipeline(name)),
                pass_env=ci.pass_env,
                unpinned=self._unpinned(repo, ci.source, pinned),
            )
        except AffidavitError as exc:
            return _Before(repo=repo, problem=str(exc))

    @staticmethod
    def _unpinned(repo: Path, source: bytes, pinned: str | None) -> str | None:
        """Why the work tree's CI file is not the one pinned for this session, or None."""
        committed = _committed_blob(repo)
        if committed is None or pinned is None:
            return "the CI file is not committed (or was not when the session began)"
        if _blob_id(source, committed) != committed:
            return "the CI file in the work tree is not the one committed at HEAD"
        if committed != pinned:
            return "the CI file was changed during this session (HEAD has another version now)"
        return None

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        chosen = string_arg(ctx.arguments, "pipeline")
        judge = Judge(self.name, f"ran CI pipeline {chosen or '(the default)'}")
        if is_error(result):
            return backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.repo is None:
            return judge.unchecked("the repository could not be located", "repository")
        where = str(before.repo)
        if before.problem is not None or before.pipeline is None:
            return judge.unchecked(f"the CI file could not be used: {before.problem}", where)
        if before.unpinned is not None:
            return judge.unchecked(f"{before.unpinned}; its steps are not re-run", where)
        report = structured(result)
        if report is None:
            return judge.unchecked("the reply carries no structured CI report", where)
        problem = schema_problem(_REPORT, dict(report))
        if problem is not None:
            return judge.contradicted(Evidence(f"the CI report is malformed ({problem})", where))
        contradiction = self._inconsistency(before, report)
        if contradiction is not None:
            return judge.contradicted(Evidence(contradiction, where))
        return self._rerun_safe_steps(ctx, judge, before, report)

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        vouched = receipt.vouched
        if "repo" not in vouched or vouched.get("status") is None:
            return False
        return CIVerifier._status(Path(vouched["repo"])) == vouched.get("status")

    @staticmethod
    def _status(repo: Path) -> str | None:
        """HEAD and every change against it: the state a CI result depends on."""
        git = open_repo(repo)
        return None if git is None else f"{git.head().sha}\n{git.status_porcelain()}"

    # -- checks ----------------------------------------------------------------------------
    @staticmethod
    def _inconsistency(before: _Before, report: Mapping[str, Any]) -> str | None:
        """The first way the report contradicts itself or the CI file, or None."""
        if report["pipeline"] != before.pipeline:
            return f"the report is for pipeline {report['pipeline']!r}, not {before.pipeline!r}"
        defined = before.steps
        steps = report["steps"]
        if len(steps) > len(defined):
            extra = [s["name"] for s in steps[len(defined) :]]
            return f"the report lists steps the CI file does not define: {extra}"
        for i, (step, spec) in enumerate(zip(steps, defined, strict=False)):
            if step["name"] != spec.name:
                return (
                    f"step {i + 1} is reported as {step['name']!r}; the CI file has {spec.name!r}"
                )
            if _argv(step["command"]) != tuple(spec.command):
                return f"step {spec.name!r} reports another command than the CI file's"
            if "safe_to_rerun" in step and step["safe_to_rerun"] != spec.safe_to_rerun:
                return (
                    f"step {spec.name!r} is reported safe_to_rerun={step['safe_to_rerun']}, but "
                    f"the CI file says {spec.safe_to_rerun}"
                )
            if step["passed"] != (step["exit_code"] == 0):
                return (
                    f"step {spec.name!r} reports exit code {step['exit_code']} and "
                    f"passed={step['passed']}"
                )
            if not step["passed"] and i + 1 < len(steps):
                return f"steps are reported after {spec.name!r} failed, which stops the pipeline"
        all_ran = len(steps) == len(defined)
        if len(steps) < len(defined) and (not steps or steps[-1]["passed"]):
            missing = [s.name for s in defined[len(steps) :]]
            return f"steps of the CI file were left out of the report without a failure: {missing}"
        expected_passed = all_ran and all(s["passed"] for s in steps)
        if report["passed"] != expected_passed:
            return (
                f"the pipeline is reported passed={report['passed']}, but its steps say "
                f"passed={expected_passed}"
            )
        if "skipped" in report:
            unreported = [s.name for s in defined[len(steps) :]]
            if list(report["skipped"]) != unreported:
                return f"the report skips {report['skipped']}; the steps not run are {unreported}"
        return None

    def _rerun_safe_steps(
        self, ctx: CallContext, judge: Judge, before: _Before, report: Mapping[str, Any]
    ) -> Receipt:
        from affidavit.core.cifile import step_environment

        assert before.repo is not None
        where = str(before.repo)
        budget = float(ctx.settings.get("ci_rerun_budget_s", RERUN_BUDGET_S))
        deadline = time.monotonic() + budget
        rederived: list[dict[str, Any]] = []
        not_rederived: list[str] = []
        for step, spec in zip(report["steps"], before.steps, strict=False):
            remaining = deadline - time.monotonic()
            if not spec.safe_to_rerun or remaining <= 0:
                not_rederived.append(spec.name)
                continue
            again = rerun(
                spec.command,
                before.repo,
                min(spec.timeout, remaining),
                step_environment(before.pass_env),
            )
            if again.timed_out:
                not_rederived.append(spec.name)
                continue
            observed = {
                "step": spec.name,
                "reported_exit_code": step["exit_code"],
                "rerun_exit_code": again.exit_code,
                "rerun_ms": again.duration_ms,
            }
            if (again.exit_code == 0) != step["passed"]:
                verb = "passed" if step["passed"] else "failed"
                return judge.contradicted(
                    Evidence(
                        f"step {spec.name!r} is reported {verb}, but running it again it "
                        f"exited {again.exit_code}",
                        where,
                        details=observed,
                    )
                )
            rederived.append(observed)
        details = {"rerun": rederived, "not_rerun": not_rederived}
        status = self._status(before.repo)
        if not_rederived:
            return judge.unchecked(
                "the report is consistent with the CI file, but these steps could not be "
                "re-derived (not marked safe_to_rerun in the CI file, or out of time): "
                + ", ".join(not_rederived),
                where,
                **details,
            )
        return judge.verified(
            Evidence(
                "the report matches the CI file and every step ran again with the same outcome",
                where,
                details=details,
            ),
            vouched={"repo": where, "status": status},
            change=(
                f"CI pipeline {report['pipeline']!r} passed at commit {status[:7]}"
                if report["passed"] and status
                else ""
            ),
        )
