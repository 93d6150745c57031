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

An argument is matched in every way it can be read (:class:`Readings`): as written, as its
normal form, and, where it names a path, at every place it really leads to (symlinks resolved)
from each base directory the backend may resolve it against (the roots, the directories the
backend was started on, its working directory), spelled relative to each base that holds that
place. So ``./secrets/x``, ``a/../secrets/x``, ``/repo/secrets/x`` and ``alias/x`` (with
``alias -> secrets``) all meet a ``secrets/*`` deny. ``deny`` and ``require-approval`` match
when *any* reading does; ``allow`` only when the normal form does *and* every place the path may
lead to does (every item, for a list): ``public/../secrets/x`` is not in ``public/*``. Policy is
separate from verification on purpose: it governs calls that have no objective truth to check.

verimcp's policy files load unchanged: they use the same ``rules`` (``tool``, ``arguments``,
``action``) and spell the approval action ``require_approval``, which is read as
``require-approval`` (:data:`ACTION_SPELLINGS`).
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
ACTION_SPELLINGS = {"require_approval": APPROVE}
"""Other products' names for an action (verimcp's), read as ours."""


def action_named(value: Any) -> Any:
    """``value`` as one of our action names when it is another spelling of one."""
    return ACTION_SPELLINGS.get(value, value) if isinstance(value, str) else value


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


@dataclass(frozen=True)
class Readings:
    """Every way one argument value can be read, for matching (see the module docstring).

    ``written``: as given and in normal form (absolute paths also relative to each base that
    lexically holds them); ``named``: the forms an ``allow`` must match (the normal form, not a
    spelling such as ``public/../x``); ``places``: per place the path may really lead to, its
    absolute real path and its spelling relative to each base holding it.
    """

    written: frozenset[str]
    named: frozenset[str]
    places: tuple[frozenset[str], ...] = ()

    def any_match(self, pattern: str) -> bool:
        """Whether some reading matches (what a deny or an approval needs)."""
        return any(fnmatch.fnmatchcase(v, pattern) for v in self.written) or any(
            fnmatch.fnmatchcase(v, pattern) for place in self.places for v in place
        )

    def all_match(self, pattern: str) -> bool:
        """Whether the name and every place it leads to match (what an allow needs)."""
        return any(fnmatch.fnmatchcase(v, pattern) for v in self.named) and all(
            any(fnmatch.fnmatchcase(v, pattern) for v in place) for place in self.places
        )


def _relative(path: str, base: str) -> str | None:
    rel = posixpath.relpath(path, base)
    return None if rel == ".." or rel.startswith("../") else rel


def _is_path(value: str) -> bool:
    """Whether ``value`` may name a file (not a URL, not empty, no NUL byte)."""
    return bool(value) and "://" not in value and "\0" not in value


def readings(value: str, bases: Sequence[Path] = ()) -> Readings:
    """Every reading of ``value`` given the directories a relative path may be taken from."""
    if not _is_path(value):
        return Readings(frozenset({value}), frozenset({value}))
    normal = posixpath.normpath(value.replace("\\", "/"))
    normal = normal[2:] if normal.startswith("./") else normal
    lexical_bases = [str(b) for b in bases]
    real_bases = list(dict.fromkeys(os.path.realpath(b) for b in bases))
    named = {normal}
    if posixpath.isabs(normal):
        named.update(r for b in lexical_bases if (r := _relative(normal, b)) is not None)
        leads_to = [os.path.realpath(value)]
    else:  # from the value as written: ``link/..`` is the parent of the link's target
        leads_to = [os.path.realpath(posixpath.join(b, value)) for b in real_bases]
    places = tuple(
        frozenset({real, *(r for b in real_bases if (r := _relative(real, b)) is not None)})
        for real in dict.fromkeys(leads_to)
    )
    return Readings(frozenset({value, *named}), frozenset(named), places)


def _matches(pattern: str, value: Any, bases: Sequence[Path], action: str) -> bool:
    if isinstance(value, list | tuple):
        if action == ALLOW:  # every item must be allowed; one denied item denies the call
            return bool(value) and all(_matches(pattern, v, bases, action) for v in value)
        return any(_matches(pattern, item, bases, action) for item in value)
    if not isinstance(value, str):
        value = "" if value is None else str(value)
    read = readings(value, bases)
    return read.all_match(pattern) if action == ALLOW else read.any_match(pattern)


@dataclass
class SamplingLimit:
    """At most ``limit`` backend ``sampling/createMessage`` requests per ``window_s`` seconds
    (the policy's ``sampling.max_per_minute``, or ``--sampling-limit`` / ``--sampling-window``)."""

    limit: int
    window_s: float = 60.0
    _times: collections.deque[float] = field(default_factory=collections.deque, repr=False)

    def allow(self, now: float | None = None) -> bool:
        """Count one sampling request against the limit; ``False`` if over it."""
        now = time.monotonic() if now is None else now
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return False
        self._times.append(now)
        return True

    def describe(self) -> str:
        """The limit in words, for a refusal."""
        if self.window_s == 60.0:
            return f"{self.limit} per minute"
        return f"{self.limit} per {self.window_s:g} s"


@dataclass
class Policy:
    """A loaded policy file."""

    rules: tuple[Rule, ...] = ()
    default: str = ALLOW
    sampling: SamplingLimit | None = None

    def decide(
        self, tool: str, arguments: Mapping[str, Any], bases: Sequence[Path] = ()
    ) -> Decision:
        """The action for a call to ``tool`` with ``arguments``; ``bases`` are the directories
        a relative path may be resolved against (the backend's, the roots)."""
        for index, rule in enumerate(self.rules):
            if not fnmatch.fnmatchcase(tool, rule.tool):
                continue
            if all(
                name in arguments and _matches(pattern, arguments[name], bases, rule.action)
                for name, pattern in rule.arguments.items()
            ):
                return Decision(rule.action, index, rule.reason)
        return Decision(self.default, -1, "default")


def _bad(path: Path, what: str) -> InputError:
    return InputError(
        f"policy file {path}: {what}", "fix the file; `affidavit proxy --help` shows the format"
    )


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
    default = action_named(data.get("default", ALLOW))
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
    return Policy(
        rules=rules,
        default=default,
        sampling=SamplingLimit(limit) if limit is not None else None,
    )


def _rule(path: Path, index: int, item: Any) -> Rule:
    where = f"rule {index + 1}"
    if not isinstance(item, dict):
        raise _bad(path, f"{where} must be a mapping")
    unknown = set(item) - {"tool", "arguments", "action", "reason"}
    if unknown:
        raise _bad(path, f"{where} has unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    tool = item.get("tool", "*")
    action = action_named(item.get("action"))
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
