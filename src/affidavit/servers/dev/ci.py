"""``run_ci_pipeline``: run the repository's own CI steps, in order, and report each one.

Which commands run is the user's decision, never the agent's. The server pins the CI file as
committed at HEAD when it starts (:class:`PinnedPipeline`) and only ever runs that: an
uncommitted edit, a checkout of a branch with another CI file or a commit made during the
session changes nothing until the user restarts the server. Agent writes to the CI file are
refused unless the server was started with ``--allow-ci-edits`` (and then they still only take
effect after a restart). See docs/adr/0035-devserver-ci-trust.md.

The file is parsed by :mod:`affidavit.core.cifile`, the same parser the proxy's CI verifier
uses; a tool call can pick a pipeline by name but can never add, change or reorder a command.
Steps run without a shell, in the repository, each under its own timeout, in a scrubbed
environment (:func:`~affidavit.core.cifile.step_environment`: the server's own variables, the
vault passphrase and API tokens among them, never reach a step). The first failing step stops
the pipeline: later steps may depend on it (a deploy after failed tests), so they are listed as
skipped rather than run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.cifile import CI_FILE_NAME, CIFile, Step, parse_ci_bytes, step_environment
from affidavit.core.errors import PolicyError
from affidavit.servers.dev import confine, proc
from affidavit.servers.dev.worktree import WorkTree

OUTPUT_TAIL_BYTES = 4096
CHANGED_NOTE = (
    f"note: {CI_FILE_NAME} has changed since the server started; the pipeline committed then "
    "was run (restart the server to run the new one)"
)


@dataclass(frozen=True)
class PinnedPipeline:
    """The CI file as committed at HEAD when the server started: the only one it runs."""

    root: Path
    committed: bytes | None  # None: no regular CI file was committed at HEAD then
    allow_edits: bool = False

    @classmethod
    def pin(cls, repo: WorkTree, *, allow_edits: bool = False) -> PinnedPipeline:
        """Read the committed CI file now, once, for the whole life of the server."""
        return cls(repo.root, repo.committed_file(CI_FILE_NAME), allow_edits)

    def load(self) -> CIFile:
        """The pinned pipeline, parsed; refused when nothing was committed at start."""
        if self.committed is None:
            raise PolicyError(
                f"no {CI_FILE_NAME} was committed at HEAD when the server started, and only a "
                "committed one runs (an uncommitted, linked or missing file is not committed)",
                f"commit {CI_FILE_NAME}, then restart the server",
            )
        return parse_ci_bytes(self.committed, self.root / CI_FILE_NAME)

    def changed_on_disk(self) -> bool:
        """Whether the work tree's CI file differs from the pinned one (edited, checked out)."""
        try:
            return (self.root / CI_FILE_NAME).read_bytes() != self.committed
        except OSError:
            return self.committed is not None

    def check_edit(self, raw: str) -> None:
        """Refuse a write to ``raw`` when it reaches the CI file (by any spelling or link) and
        edits were not allowed; case is ignored, as it is on macOS and Windows disks."""
        if self.allow_edits:
            return
        target = confine.repo_path(self.root, raw)
        if target.parent == Path(os.path.realpath(self.root)) and (
            target.name.casefold() == CI_FILE_NAME.casefold()
        ):
            raise PolicyError(
                f"{raw!r} is the CI pipeline file, which the agent may not change: the server "
                "runs only the pipeline the user committed",
                "ask the user to edit and commit it, or to restart the server with "
                "--allow-ci-edits",
            )


def run_pipeline(
    pinned: PinnedPipeline,
    name: str | None,
    progress: Callable[[float, float | None, str], None],
    stop: threading.Event,
) -> dict[str, Any]:
    """Run pipeline ``name`` (or the default) of the pinned file; ``progress`` hears of each
    step as it starts; setting ``stop`` kills the running step and skips the rest."""
    ci = pinned.load()
    pipeline = ci.resolve(name)
    steps = ci.pipeline(pipeline)
    env = step_environment(ci.pass_env)
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    for number, step in enumerate(steps):
        if results and not results[-1]["passed"]:
            skipped.append(step.name)
            continue
        progress(number, len(steps), f"running {step.name}")
        results.append(_run_step(pinned.root, step, env, stop))
    progress(len(steps), len(steps), "done")
    return {
        "pipeline": pipeline,
        "passed": not skipped and all(r["passed"] for r in results),
        "steps": results,
        "skipped": skipped,
    }


def _run_step(root: Path, step: Step, env: dict[str, str], stop: threading.Event) -> dict[str, Any]:
    """One step's report; a missing program or a timeout is a failed step, not a crash."""
    try:
        done = proc.run(
            step.command,
            cwd=root,
            timeout=step.timeout,
            env=env,
            limit=OUTPUT_TAIL_BYTES,
            keep="tail",
            merge_stderr=True,
            stop=stop,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        reason = "not found" if isinstance(exc, FileNotFoundError) else "not executable"
        return _report(step, 127, 0, f"{step.command[0]}: command {reason}")
    tail = done.stdout.decode("utf-8", errors="replace")
    if done.timed_out:
        tail += f"\n[stopped: the step ran longer than its {step.timeout:g} s timeout]"
    if done.stopped:
        tail += "\n[stopped: the call was cancelled]"
    return _report(step, done.exit_code, done.duration_ms, tail)


def _report(step: Step, exit_code: int, duration_ms: int, tail: str) -> dict[str, Any]:
    return {
        "name": step.name,
        "command": list(step.command),
        "exit_code": exit_code,
        "duration_ms": duration_ms,
        "passed": exit_code == 0,
        "output_tail": tail,
        "safe_to_rerun": step.safe_to_rerun,
    }


def render(report: dict[str, Any], changed: bool = False) -> str:
    """The readable text that accompanies the structured report."""
    verdict = "PASSED" if report["passed"] else "FAILED"
    lines = [f"pipeline {report['pipeline']}: {verdict}"]
    for step in report["steps"]:
        mark = "ok  " if step["passed"] else "FAIL"
        lines.append(
            f"  {mark} {step['name']} (exit {step['exit_code']}, {step['duration_ms']} ms)"
        )
        if not step["passed"] and step["output_tail"].strip():
            lines.extend(
                "       " + line for line in step["output_tail"].strip().splitlines()[-20:]
            )
    lines.extend(f"  skip {name} (an earlier step failed)" for name in report["skipped"])
    if changed:
        lines.append(CHANGED_NOTE)
    return "\n".join(lines)
