"""Policy gates: allow, deny or ask a human before a tool call reaches the backend.

A policy file is YAML::

    default: allow              # allow | deny | require-approval (when no rule matches)
    rules:                      # first match wins
      - tool: "write_*"         # glob on the tool name
        arguments:              # optional: every listed argument must match its glob
          path: "secrets/*"
        action: deny
        reason: secrets are off limits
    sampling:
      max_per_minute: 10        # backend sampling/createMessage requests beyond this are refused

Paths are normalised before matching, so ``./secrets/x``, ``a/../secrets/x`` and
``/repo/secrets/x`` (with ``/repo`` a known root) all match ``secrets/*``. Policy is separate
from verification on purpose: it governs calls that have no objective truth to check.
"""

from __future__ import annotations

import collections
import fnmatch
import os
import posixpath
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError, NotFoundError

ALLOW = "allow"
DENY = "deny"
APPROVE = "require-approval"
_ACTIONS = (ALLOW, DENY, APPROVE)


@dataclass(frozen=True)
class Rule:
    """One rule: a tool-name glob, argument globs, an action and the reason shown on refusal."""

    tool: str
    action: str
    arguments: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    """What the policy says about one call, and which rule said it (``-1``: the default)."""

    action: str
    rule: int = -1
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "rule": self.rule, "reason": self.reason}


def path_candidates(value: str, roots: Sequence[Path] = ()) -> set[str]:
    """Every spelling of ``value`` a path pattern should be tried against.

    The value itself, its normal form (``./a``, ``a//b``, ``a/../b`` collapsed), and, for an
    absolute path inside a known root, the path relative to that root (through symlinks too).
    """
    candidates = {value}
    normal = posixpath.normpath(value.replace("\\", "/")) if value else value
    candidates.add(normal)
    if normal.startswith("./"):
        candidates.add(normal[2:])
    if posixpath.isabs(normal):
        real = os.path.realpath(normal)
        for root in roots:
            for base in {str(root), os.path.realpath(root)}:
                for path in (normal, real):
                    rel = posixpath.relpath(path, base)
                    if not rel.startswith(".."):
                        candidates.add(rel)
    return candidates


def _matches(pattern: str, value: Any, roots: Sequence[Path]) -> bool:
    if isinstance(value, list | tuple):
        return any(_matches(pattern, item, roots) for item in value)
    if not isinstance(value, str):
        value = "" if value is None else str(value)
    return any(fnmatch.fnmatchcase(c, pattern) for c in path_candidates(value, roots))


@dataclass
class Policy:
    """A loaded policy file."""

    rules: tuple[Rule, ...] = ()
    default: str = ALLOW
    sampling_per_minute: int | None = None
    _sampling_times: collections.deque[float] = field(default_factory=collections.deque)

    def decide(
        self, tool: str, arguments: Mapping[str, Any], roots: Sequence[Path] = ()
    ) -> Decision:
        """The action for a call to ``tool`` with ``arguments``."""
        for index, rule in enumerate(self.rules):
            if not fnmatch.fnmatchcase(tool, rule.tool):
                continue
            if all(
                name in arguments and _matches(pattern, arguments[name], roots)
                for name, pattern in rule.arguments.items()
            ):
                return Decision(rule.action, index, rule.reason)
        return Decision(self.default, -1, "default")

    def allow_sampling(self, now: float | None = None) -> bool:
        """Count one sampling request against the per-minute limit; ``False`` if over it."""
        if self.sampling_per_minute is None:
            return True
        now = time.monotonic() if now is None else now
        while self._sampling_times and now - self._sampling_times[0] >= 60.0:
            self._sampling_times.popleft()
        if len(self._sampling_times) >= self.sampling_per_minute:
            return False
        self._sampling_times.append(now)
        return True


def _bad(path: Path, what: str) -> InputError:
    return InputError(f"policy file {path}: {what}", "fix the file; see docs/proxy.md, Policy")


def load_policy(path: Path) -> Policy:
    """Read and validate a policy file; one clear error for anything malformed."""
    import yaml  # only runs with --policy: keep it off the proxy's start-up path

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"no policy file at {path}", "check the --policy path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(path, f"cannot be read ({exc.__class__.__name__})") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise _bad(path, f"is not valid YAML{where}") from None
    if not isinstance(data, dict):
        raise _bad(path, "must be a mapping with `rules`, `default` and `sampling`")
    unknown = set(data) - {"rules", "default", "sampling"}
    if unknown:
        raise _bad(path, f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    default = data.get("default", ALLOW)
    if default not in _ACTIONS:
        raise _bad(path, f"default must be one of {', '.join(_ACTIONS)}")
    rules_data = data.get("rules") or []
    if not isinstance(rules_data, list):
        raise _bad(path, "`rules` must be a list")
    rules = tuple(_rule(path, index, item) for index, item in enumerate(rules_data))
    sampling = data.get("sampling") or {}
    if not isinstance(sampling, dict) or set(sampling) - {"max_per_minute"}:
        raise _bad(path, "`sampling` takes only `max_per_minute`")
    limit = sampling.get("max_per_minute")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise _bad(path, "`sampling.max_per_minute` must be a whole number >= 0")
    return Policy(rules=rules, default=default, sampling_per_minute=limit)


def _rule(path: Path, index: int, item: Any) -> Rule:
    where = f"rule {index + 1}"
    if not isinstance(item, dict):
        raise _bad(path, f"{where} must be a mapping")
    unknown = set(item) - {"tool", "arguments", "action", "reason"}
    if unknown:
        raise _bad(path, f"{where} has unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    tool = item.get("tool", "*")
    action = item.get("action")
    if not isinstance(tool, str) or not tool:
        raise _bad(path, f"{where}: `tool` must be a non-empty glob")
    if action not in _ACTIONS:
        raise _bad(path, f"{where}: `action` must be one of {', '.join(_ACTIONS)}")
    arguments = item.get("arguments") or {}
    if not isinstance(arguments, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in arguments.items()
    ):
        raise _bad(path, f"{where}: `arguments` must map argument names to glob strings")
    reason = item.get("reason", "")
    if not isinstance(reason, str):
        raise _bad(path, f"{where}: `reason` must be text")
    return Rule(tool=tool, action=action, arguments=dict(arguments), reason=reason)
