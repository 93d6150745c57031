"""The repository's CI file, ``.affidavit-ci.yml``: named pipelines of ordered steps.

Two planes read this file independently: the dev server runs its steps, and the proxy's CI
verifier re-runs the steps the *file* (never a backend's reply) marks ``safe_to_rerun``. Both
must agree on what the file means, so the parser lives here, is strict, and rejects anything it
does not understand with one line naming the offending field.

Steps never see the environment of the process that runs them (an MCP server's holds the vault
passphrase and API tokens): :func:`step_environment` passes only :data:`STEP_ENV` and the names
the file lists under ``pass_env``, so the dev server and the verifier's re-run give a step the
same environment.

Format::

    default: check            # optional; which pipeline runs when none is named
    pass_env: [JAVA_HOME]     # optional; variables passed to steps besides STEP_ENV
    pipelines:
      check:
        - name: unit tests
          command: ["python", "-m", "pytest", "-q"]   # argv list, or a string split by shlex
          safe_to_rerun: true                         # optional, default false
          timeout: 120                                # optional seconds, default 300
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from affidavit.core.errors import InputError, NotFoundError

CI_FILE_NAME = ".affidavit-ci.yml"
MAX_CI_FILE_BYTES = 256 * 1024
DEFAULT_TIMEOUT_S = 300.0
MAX_TIMEOUT_S = 3600.0
_TOP_KEYS = {"default", "pass_env", "pipelines"}
STEP_ENV = (
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "TMPDIR",
    "TZ",
    "USER",
)
"""The variables every step gets from its runner's environment: what a program needs to find
its tools, its home and its locale, and nothing that is usually a secret."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NEVER_PASSED = "AFFIDAVIT_"  # the vault passphrase and affidavit's own settings
_STEP_KEYS = {"name", "command", "safe_to_rerun", "timeout"}


@dataclass(frozen=True)
class Step:
    """One CI step: what to run (an argv, never a shell line) and how long it may take."""

    name: str
    command: tuple[str, ...]
    safe_to_rerun: bool
    timeout: float


@dataclass(frozen=True)
class CIFile:
    """A parsed, validated CI file."""

    path: Path
    pipelines: dict[str, tuple[Step, ...]]
    default: str | None
    pass_env: tuple[str, ...] = ()
    source: bytes = b""  # the exact bytes parsed, to compare with another copy (the committed one)

    def pipeline(self, name: str | None = None) -> list[Step]:
        """The steps of pipeline ``name``; with no name, the default or the only pipeline."""
        return list(self.pipelines[self.resolve(name)])

    def resolve(self, name: str | None) -> str:
        """The name of the pipeline ``name`` selects (the default one for ``None``)."""
        if name is None:
            if self.default is not None:
                return self.default
            if len(self.pipelines) == 1:
                return next(iter(self.pipelines))
            raise InputError(
                f"{CI_FILE_NAME} defines several pipelines ({self._names()})",
                "name one, or set `default:` in the file",
            )
        if name not in self.pipelines:
            raise NotFoundError(
                f"no pipeline {name!r} in {CI_FILE_NAME}", f"pipelines are: {self._names()}"
            )
        return name

    def _names(self) -> str:
        return ", ".join(sorted(self.pipelines))


def load_ci_file(repo: Path) -> CIFile:
    """Read and validate ``<repo>/.affidavit-ci.yml``.

    The file must be a regular file inside the repository: a symlink pointing elsewhere is
    refused, because the CI file may only run the repository's own steps.
    """
    repo_real = Path(repo).resolve()
    path = repo_real / CI_FILE_NAME
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(
            f"the repository has no {CI_FILE_NAME}",
            "commit one, e.g. `pipelines: {check: [{name: tests, command: pytest -q}]}`, "
            "then restart the server",
        )
    resolved = path.resolve()
    if resolved.parent != repo_real or not resolved.is_file():
        raise InputError(
            f"{CI_FILE_NAME} is not a regular file of this repository",
            "replace the link or directory with the CI file itself",
        )
    return parse_ci_bytes(resolved.read_bytes(), path)


def parse_ci_bytes(raw: bytes, path: Path) -> CIFile:
    """Validate the bytes of a CI file (from the work tree or from a commit)."""
    if len(raw) > MAX_CI_FILE_BYTES:
        raise InputError(f"{CI_FILE_NAME} is larger than {MAX_CI_FILE_BYTES} bytes", "trim it")
    parsed = parse_ci_text(raw.decode("utf-8", errors="replace"), path)
    return CIFile(parsed.path, parsed.pipelines, parsed.default, parsed.pass_env, raw)


def parse_ci_text(text: str, path: Path) -> CIFile:
    """Validate CI file text; every error names the field at fault."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{CI_FILE_NAME} is not valid YAML{where}", "fix the syntax") from None
    if not isinstance(data, dict):
        raise InputError(f"{CI_FILE_NAME} must be a mapping with `pipelines:`", "see the docs")
    _no_unknown_keys(data, _TOP_KEYS, "the top level")
    pipelines_raw = data.get("pipelines")
    if not isinstance(pipelines_raw, dict) or not pipelines_raw:
        raise InputError(
            f"{CI_FILE_NAME}: `pipelines` must map pipeline names to lists of steps",
            "add at least one pipeline",
        )
    pipelines: dict[str, tuple[Step, ...]] = {}
    for name, steps_raw in pipelines_raw.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"{CI_FILE_NAME}: pipeline names must be non-empty strings")
        pipelines[name] = _parse_steps(name, steps_raw)
    default = data.get("default")
    if default is not None and (not isinstance(default, str) or default not in pipelines):
        raise InputError(
            f"{CI_FILE_NAME}: `default` must name one of the pipelines",
            f"pipelines are: {', '.join(sorted(pipelines))}",
        )
    pass_env = _parse_pass_env(data.get("pass_env", []))
    return CIFile(path=path, pipelines=pipelines, default=default, pass_env=pass_env)


def _parse_pass_env(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(
        isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in raw
    ):
        raise InputError(
            f"{CI_FILE_NAME}: `pass_env` must be a list of environment variable names",
            "write e.g. `pass_env: [JAVA_HOME, VIRTUAL_ENV]`",
        )
    refused = [name for name in raw if name.upper().startswith(_NEVER_PASSED)]
    if refused:
        raise InputError(
            f"{CI_FILE_NAME}: `pass_env` names {refused[0]}; affidavit's own variables (the "
            "vault passphrase among them) are never passed to a step",
            "remove it from pass_env",
        )
    return tuple(raw)


def step_environment(
    pass_env: tuple[str, ...] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a step runs in: :data:`STEP_ENV` and ``pass_env``, where set."""
    source = os.environ if environ is None else environ
    return {name: source[name] for name in (*STEP_ENV, *pass_env) if name in source}


def _parse_steps(pipeline: str, steps_raw: Any) -> tuple[Step, ...]:
    if not isinstance(steps_raw, list) or not steps_raw:
        raise InputError(f"{CI_FILE_NAME}: pipelines.{pipeline} must be a non-empty list of steps")
    steps: list[Step] = []
    seen: set[str] = set()
    for index, raw in enumerate(steps_raw):
        where = f"pipelines.{pipeline}[{index}]"
        step = _parse_step(where, raw)
        if step.name in seen:
            raise InputError(f"{CI_FILE_NAME}: {where}.name {step.name!r} is used twice")
        seen.add(step.name)
        steps.append(step)
    return tuple(steps)


def _parse_step(where: str, raw: Any) -> Step:
    if not isinstance(raw, dict):
        raise InputError(f"{CI_FILE_NAME}: {where} must be a mapping with name and command")
    _no_unknown_keys(raw, _STEP_KEYS, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{CI_FILE_NAME}: {where}.name must be a non-empty string")
    command = _parse_command(f"{where}.command", raw.get("command"))
    safe = raw.get("safe_to_rerun", False)
    if not isinstance(safe, bool):
        raise InputError(f"{CI_FILE_NAME}: {where}.safe_to_rerun must be true or false")
    timeout = raw.get("timeout", DEFAULT_TIMEOUT_S)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise InputError(
            f"{CI_FILE_NAME}: {where}.timeout must be a number of seconds in (0, {MAX_TIMEOUT_S:g}]"
        )
    return Step(name=name, command=command, safe_to_rerun=safe, timeout=float(timeout))


def _parse_command(where: str, raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            raise InputError(f"{CI_FILE_NAME}: {where} cannot be split: {exc}") from None
    elif isinstance(raw, list) and all(isinstance(part, str) for part in raw):
        argv = list(raw)
    else:
        raise InputError(f"{CI_FILE_NAME}: {where} must be a string or a list of strings")
    if not argv or not argv[0]:
        raise InputError(f"{CI_FILE_NAME}: {where} is empty")
    if any("\x00" in part for part in argv):
        raise InputError(f"{CI_FILE_NAME}: {where} contains a NUL byte")
    return tuple(argv)


def _no_unknown_keys(mapping: dict[Any, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(str(key) for key in mapping if key not in allowed)
    if unknown:
        raise InputError(
            f"{CI_FILE_NAME}: unknown key {unknown[0]!r} in {where}",
            f"allowed keys are: {', '.join(sorted(allowed))}",
        )
