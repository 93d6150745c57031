"""``run_ci_pipeline``: run the repository's own CI steps, in order, and report each one.

Commands come only from ``.affidavit-ci.yml`` (parsed by :mod:`affidavit.core.cifile`, the
same parser the proxy's CI verifier uses); a tool call can pick a pipeline by name but can
never add, change or reorder a command. Steps run without a shell, in the repository, each
under its own timeout. The first failing step stops the pipeline: later steps may depend on
it (a deploy after failed tests), so they are listed as skipped rather than run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from affidavit.core.cifile import Step, load_ci_file
from affidavit.servers.dev import proc

OUTPUT_TAIL_BYTES = 4096


def run_pipeline(
    root: Path, name: str | None, progress: Callable[[float, float | None, str], None]
) -> dict[str, Any]:
    """Run pipeline ``name`` (or the default); ``progress`` hears of each step as it starts."""
    ci = load_ci_file(root)
    pipeline = ci.resolve(name)
    steps = ci.pipeline(pipeline)
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    for number, step in enumerate(steps):
        if results and not results[-1]["passed"]:
            skipped.append(step.name)
            continue
        progress(number, len(steps), f"running {step.name}")
        results.append(_run_step(root, step))
    progress(len(steps), len(steps), "done")
    return {
        "pipeline": pipeline,
        "passed": not skipped and all(r["passed"] for r in results),
        "steps": results,
        "skipped": skipped,
    }


def _run_step(root: Path, step: Step) -> dict[str, Any]:
    """One step's report; a missing program or a timeout is a failed step, not a crash."""
    try:
        done = proc.run(
            step.command,
            cwd=root,
            timeout=step.timeout,
            limit=OUTPUT_TAIL_BYTES,
            keep="tail",
            merge_stderr=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        reason = "not found" if isinstance(exc, FileNotFoundError) else "not executable"
        return _report(step, 127, 0, f"{step.command[0]}: command {reason}")
    tail = done.stdout.decode("utf-8", errors="replace")
    if done.timed_out:
        tail += f"\n[stopped: the step ran longer than its {step.timeout:g} s timeout]"
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


def render(report: dict[str, Any]) -> str:
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
    return "\n".join(lines)
