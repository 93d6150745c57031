"""``docker_ps`` / ``docker_build`` through the Docker CLI, when an engine answers.

The engine is probed with ``docker version`` on every call (cheap, and an engine can come and
go); when the CLI is missing or no engine answers, the tool fails with one clear line instead
of hanging or pretending. The build context and Dockerfile are confined to the repository.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from affidavit.core.errors import ExternalError, InputError
from affidavit.servers.dev import confine, proc

PROBE_TIMEOUT_S = 10.0
PS_TIMEOUT_S = 30.0
BUILD_TIMEOUT_S = 1800.0
_TAG = re.compile(r"^[a-z0-9][a-z0-9._/:@-]{0,254}$")


class NoDockerError(ExternalError):
    """No Docker engine can be reached from this machine."""


def _engine(root: Path) -> str:
    docker = shutil.which("docker")
    if docker is None:
        raise NoDockerError(
            "no Docker engine is reachable (the docker CLI is not installed)",
            "install Docker, or use the git and CI tools instead",
        )
    try:
        done = proc.run(
            [docker, "version", "--format", "{{.Server.Version}}"],
            cwd=root,
            timeout=PROBE_TIMEOUT_S,
        )
    except OSError as exc:
        raise NoDockerError(f"no Docker engine is reachable ({exc.strerror})") from None
    if done.exit_code != 0 or not done.stdout.strip():
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        reason = detail[-1] if detail else f"docker version exited {done.exit_code}"
        raise NoDockerError(
            f"no Docker engine is reachable ({reason})", "start the Docker daemon and retry"
        )
    return docker


def ps(root: Path) -> dict[str, Any]:
    """Running containers, one record per container as ``docker ps`` reports it."""
    docker = _engine(root)
    done = proc.run(
        [docker, "ps", "--no-trunc", "--format", "{{json .}}"], cwd=root, timeout=PS_TIMEOUT_S
    )
    if done.exit_code != 0:
        raise ExternalError(f"docker ps failed: {done.stderr.decode(errors='replace').strip()}")
    rows = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    return {"containers": rows}


def build(
    root: Path, tag: str, context: str = ".", dockerfile: str | None = None
) -> dict[str, Any]:
    """Build an image from a context directory (and Dockerfile) inside the repository."""
    if not isinstance(tag, str) or not _TAG.match(tag):
        raise InputError(f"tag {tag!r} is not a valid image tag", "use e.g. myapp:dev")
    context_dir = confine.repo_path(root, context, what="context")
    if not context_dir.is_dir():
        raise InputError(f"context {context!r} is not a directory in the repository")
    argv = ["build", "--tag", tag]
    if dockerfile is not None:
        argv += ["--file", str(confine.repo_path(root, dockerfile, what="dockerfile"))]
    docker = _engine(root)
    done = proc.run(
        [docker, *argv, str(context_dir)],
        cwd=root,
        timeout=BUILD_TIMEOUT_S,
        keep="tail",
        limit=16384,
        merge_stderr=True,
    )
    log = done.stdout.decode("utf-8", errors="replace")
    if done.exit_code != 0:
        raise ExternalError(f"docker build failed (exit {done.exit_code})", log.strip()[-400:])
    return {"tag": tag, "context": confine.relative(root, context_dir), "log_tail": log}
