"""Git claims: commits, staging, unstaging, branches and checkouts.

Covers mcp-server-git's ``git_commit``, ``git_add``, ``git_reset``, ``git_create_branch`` and
``git_checkout`` (which name the repository in ``repo_path``) and the dev server's
``git_commit``, ``git_branch`` and ``git_checkout`` (which act on the repository the server was
started on). Before the call it records HEAD and every ref; after the reply it re-derives:

- commit: the claimed hash (or, if none is given, HEAD) names a *commit* object (not a tree,
  not a blob), that is new — neither HEAD's old hash nor reachable from any branch or
  remote-tracking ref as they were before the call — whose first parent is the old HEAD,
  whose message is the requested one (git's whitespace clean-up aside), with HEAD (and its
  branch) moved to it and nothing left staged (or, with the dev server's ``paths``, those
  paths committed);
- add: nothing under the given paths is left unstaged; reset: nothing is staged and HEAD did
  not move;
- branch: the branch did not exist before, exists now, and points at the requested base as
  it was before the call (HEAD when no base is given);
- checkout: HEAD is on the requested branch (or detached at the requested commit), and when
  the index was clean before, it matches the new HEAD (the work tree really moved).

What it cannot prove: who made a new commit (another process committing at the same moment is
indistinguishable), that a checkout updated every work-tree file (only the index is compared),
or anything in a repository it cannot place (``unchecked``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt, Verdict
from affidavit.proxy.verifiers.gitrepo import HEX40, GitRepo, GitUnavailable, RefState, open_repo
from affidavit.proxy.verifiers.locate import call_repo, string_arg
from affidavit.proxy.verifiers.overlap import WINDOWS
from affidavit.proxy.verifiers.replies import (
    Judge,
    ToolCallVerifier,
    backend_failed,
    is_error,
    judged_in_window,
    structured,
    text_of,
)

# Tool -> the arguments whose meaning this verifier knows (see replies.known_arguments).
TOOLS: dict[str, frozenset[str]] = {
    "git_commit": frozenset({"message", "paths", "repo_path"}),
    "git_add": frozenset({"files", "repo_path"}),
    "git_reset": frozenset({"repo_path"}),
    "git_create_branch": frozenset({"branch_name", "base_branch", "repo_path"}),
    "git_branch": frozenset({"name", "base", "list"}),
    "git_checkout": frozenset({"branch_name", "name", "repo_path"}),
}
_SHORT_HASH = re.compile(r"\b(?:hash|commit)\s+([0-9a-f]{7,39})\b")
_TIP_PREFIXES = ("refs/heads/", "refs/remotes/")


def clean_message(message: str) -> str:
    """A commit message as ``git commit``'s default whitespace clean-up stores it."""
    lines = [line.rstrip() for line in message.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    return "\n".join(out).strip("\n")


def _without_comments(message: str) -> str:
    """The message as ``commit.cleanup=strip`` leaves it (``#`` lines dropped)."""
    return "\n".join(line for line in message.split("\n") if not line.startswith("#"))


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    return None


def _branch_name(args: Mapping[str, Any]) -> str | None:
    return string_arg(args, "branch_name", "name")


@dataclass(frozen=True)
class _Before:
    """The repository and its refs as they were just before the call."""

    repo: GitRepo | None
    state: RefState | None = None
    index_clean: bool | None = None
    window: int | None = None


def _branch_words(ref: str | None) -> str:
    """Where HEAD is, as a person says it: the branch's short name, or a detached HEAD."""
    return ref.removeprefix("refs/heads/") if ref else "a detached HEAD"


class GitVerifier(ToolCallVerifier):
    """Re-derives git outcomes from the repository's refs, objects and index."""

    name = "git"
    tools = TOOLS

    @staticmethod
    def well_formed(tool: str, args: Mapping[str, Any]) -> bool:
        if tool == "git_commit":
            return isinstance(args.get("message"), str)
        if tool == "git_add":
            return _str_list(args.get("files")) is not None
        if tool == "git_reset":
            return True  # only repo_path is allowed: a reset of the index to HEAD
        if tool == "git_branch":
            # The dev server's git_branch creates with ``name``; listing is not a claim.
            return isinstance(args.get("name"), str) and not args.get("list")
        return _branch_name(args) is not None

    def snapshot(self, ctx: CallContext) -> _Before:
        path = call_repo(ctx)
        repo = open_repo(path) if path is not None else None
        if repo is None:
            return _Before(repo=None)
        index_clean = repo.index_matches_head() if ctx.name == "git_checkout" else None
        state = repo.state()
        window = WINDOWS.begin([os.path.realpath(repo.path)])
        return _Before(repo=repo, state=state, index_clean=index_clean, window=window)

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        window = before.window if isinstance(before, _Before) else None
        return judged_in_window(window, lambda: self._judge(ctx, before, result))

    def _judge(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        judge = Judge(self.name, self._claim(ctx))
        if is_error(result):
            return backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.repo is None or before.state is None:
            return judge.unchecked(
                "the repository this call acted on could not be located or read",
                "repository",
                repo_path=str(call_repo(ctx)),
            )
        try:
            if ctx.name == "git_commit":
                return self._verify_commit(ctx, judge, before, result)
            if ctx.name == "git_add":
                return self._verify_add(ctx, judge, before.repo)
            if ctx.name == "git_reset":
                return self._verify_reset(judge, before.repo, before.state)
            if ctx.name == "git_checkout":
                receipt = self._verify_checkout(ctx, judge, before)
            else:
                receipt = self._verify_branch(ctx, judge, before.repo, before.state)
            return self._with_reported_fields(judge, receipt, result)
        except GitUnavailable as exc:
            return judge.unchecked(f"git could not be read: {exc}", str(before.repo.path))

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        vouched = receipt.vouched
        repo = open_repo(Path(vouched["repo"])) if "repo" in vouched else None
        if repo is None:
            return False
        try:
            kind = vouched.get("kind")
            if kind == "commit":
                paths = vouched.get("paths")
                settled = not repo.changed(paths) if paths else repo.index_matches_head()
                return repo.head().sha == vouched["sha"] and settled
            if kind == "staged":
                return not repo.unstaged(vouched["paths"])
            if kind == "unstaged":
                return repo.index_matches_head()
            if kind == "branch":
                return repo.refs().get(vouched["ref"]) == vouched["sha"]
            if kind == "checkout":
                head = repo.head()
                return head.ref == vouched["ref"] and head.sha == vouched["sha"]
        except GitUnavailable:
            return False
        return False

    @staticmethod
    def _with_reported_fields(judge: Judge, receipt: Receipt, result: Mapping[str, Any]) -> Receipt:
        """A verified branch/checkout whose reply reports another commit or branch is a lie."""
        reported = structured(result)
        if receipt.verdict is not Verdict.VERIFIED or reported is None:
            return receipt
        sha, ref = receipt.vouched.get("sha"), receipt.vouched.get("ref")
        claimed_sha, claimed_branch = reported.get("commit_hash"), reported.get("branch")
        if isinstance(claimed_sha, str) and claimed_sha != sha:
            observed = f"the reply reports commit {claimed_sha}, but the branch is at {sha}"
        elif isinstance(claimed_branch, str) and f"refs/heads/{claimed_branch}" != ref:
            observed = f"the reply reports branch {claimed_branch!r}, but git has {ref}"
        else:
            return receipt
        return judge.contradicted(Evidence(observed, receipt.evidence[0].where))

    # -- claims ----------------------------------------------------------------------------
    @staticmethod
    def _claim(ctx: CallContext) -> str:
        args = ctx.arguments
        if ctx.name == "git_commit":
            first = (str(args.get("message", "")).strip().splitlines() or [""])[0]
            return f"committed {first!r} as a new commit"
        if ctx.name == "git_add":
            return f"staged {args.get('files')}"
        if ctx.name == "git_reset":
            return "unstaged all staged changes"
        if ctx.name == "git_checkout":
            return f"checked out {_branch_name(args)}"
        base = string_arg(args, "base_branch", "base") or "HEAD"
        return f"created branch {_branch_name(args)} from {base}"

    @staticmethod
    def _claimed_hash(repo: GitRepo, result: Mapping[str, Any]) -> str | None:
        receipt = structured(result)
        if receipt is not None and isinstance(receipt.get("commit_hash"), str):
            return receipt["commit_hash"].strip().lower()
        text = text_of(result)
        full = HEX40.search(text)
        if full:
            return full.group(0)
        short = _SHORT_HASH.search(text)
        if short:
            return repo.resolve_commit(short.group(1)) or short.group(1)
        return None

    def _verify_commit(
        self, ctx: CallContext, judge: Judge, before: _Before, result: Mapping[str, Any]
    ) -> Receipt:
        repo, old = before.repo, before.state
        assert repo is not None and old is not None
        where = str(repo.path)
        claimed = self._claimed_hash(repo, result)
        after = repo.state()
        sha = claimed or after.head.sha
        if sha is None:
            return judge.contradicted(Evidence("HEAD has no commit after the call", where))
        commit = repo.commit(sha)
        if commit is None or not commit.sha.startswith(sha):
            kind = repo.object_type(sha)
            observed = (
                f"{sha} is a {kind} object, not a commit"
                if kind
                else f"no object {sha} exists in the repository"
            )
            return judge.contradicted(Evidence(observed, where))
        sha = commit.sha
        if sha == old.head.sha:
            return judge.contradicted(
                Evidence(
                    f"{sha} is the hash HEAD already had before the call: no new commit was made",
                    where,
                )
            )
        expected_parent = old.head.sha
        actual_parent = commit.parents[0] if commit.parents else None
        if actual_parent != expected_parent:
            return judge.contradicted(
                Evidence(
                    f"commit {sha} sits on {actual_parent}, not on the HEAD before the call "
                    f"({expected_parent})",
                    where,
                )
            )
        # A child of the old HEAD cannot be reachable from the old HEAD itself, so only the
        # other tips need asking (often none: then no git call at all).
        tips = [v for k, v in old.refs.items() if k.startswith(_TIP_PREFIXES) and v != old.head.sha]
        if repo.reachable_from_any(sha, tips):
            return judge.contradicted(
                Evidence(f"commit {sha} already existed before the call", where)
            )
        requested = ctx.arguments["message"]
        subject = (requested.strip().splitlines() or [""])[0].strip()
        wanted = clean_message(requested)
        recorded = clean_message(commit.message)
        if recorded not in (wanted, clean_message(_without_comments(requested))):
            return judge.contradicted(
                Evidence(
                    "the commit carries another message than the one requested",
                    where,
                    details={"requested": wanted[:500], "recorded": recorded[:500], "sha": sha},
                )
            )
        if after.head.sha != sha or after.head.ref != old.head.ref:
            return judge.contradicted(
                Evidence(
                    f"HEAD is at {after.head.sha} ({after.head.ref or 'detached'}), not at the "
                    f"claimed commit {sha} on {old.head.ref or 'detached HEAD'}",
                    where,
                )
            )
        paths = _str_list(ctx.arguments.get("paths"))
        if paths:
            leftover = repo.changed(paths)
        else:
            leftover = [] if repo.index_matches_head(after.head) else ["*"]
        if leftover:
            return judge.contradicted(
                Evidence(
                    "changes that should be in the commit are not in it",
                    where,
                    details={"uncommitted": leftover[:20]},
                )
            )
        return judge.verified(
            Evidence(
                f"commit {sha} is new, sits on the previous HEAD, carries the requested message, "
                f"and HEAD ({after.head.ref or 'detached'}) points at it",
                where,
                details={"sha": sha, "parent": actual_parent, "tree": commit.tree},
            ),
            vouched={"kind": "commit", "repo": where, "sha": sha, "paths": paths},
            change=f"commit {sha[:7]} on {_branch_words(after.head.ref)} adds {subject!r}",
        )

    @staticmethod
    def _verify_add(ctx: CallContext, judge: Judge, repo: GitRepo) -> Receipt:
        paths = _str_list(ctx.arguments["files"]) or []
        left = repo.unstaged(paths)
        where = str(repo.path)
        if left:
            return judge.contradicted(
                Evidence(
                    "changes under the given paths are still not staged",
                    where,
                    details={"unstaged": left[:20]},
                )
            )
        return judge.verified(
            Evidence("every change under the given paths is staged", where),
            vouched={"kind": "staged", "repo": where, "paths": paths},
        )

    @staticmethod
    def _verify_reset(judge: Judge, repo: GitRepo, old: RefState) -> Receipt:
        where = str(repo.path)
        head = repo.head()
        if head != old.head:
            return judge.contradicted(
                Evidence(f"HEAD moved from {old.head.sha} to {head.sha}", where)
            )
        if not repo.index_matches_head():
            return judge.contradicted(Evidence("changes are still staged", where))
        return judge.verified(
            Evidence("nothing is staged and HEAD did not move", where),
            vouched={"kind": "unstaged", "repo": where},
        )

    @staticmethod
    def _base_commit(repo: GitRepo, old: RefState, base: str | None) -> str | None:
        if base is None:
            return old.head.sha
        for ref in (base, f"refs/heads/{base}", f"refs/remotes/{base}"):
            if ref.startswith("refs/") and ref in old.refs:
                return old.refs[ref]
        return repo.resolve_commit(base)

    def _verify_branch(
        self, ctx: CallContext, judge: Judge, repo: GitRepo, old: RefState
    ) -> Receipt:
        name = _branch_name(ctx.arguments)
        base = string_arg(ctx.arguments, "base_branch", "base")
        ref = f"refs/heads/{name}"
        where = str(repo.path)
        expected = self._base_commit(repo, old, base)
        if expected is None:
            return judge.unchecked(f"the base {base or 'HEAD'} names no commit", where)
        if ref in old.refs:
            return judge.contradicted(
                Evidence(f"{ref} already existed before the call, at {old.refs[ref]}", where)
            )
        actual = repo.refs().get(ref)
        if actual is None:
            return judge.contradicted(Evidence(f"no branch {ref} exists after the call", where))
        if actual != expected:
            return judge.contradicted(
                Evidence(
                    f"{ref} points at {actual}, not at {base or 'HEAD'} ({expected})",
                    where,
                    details={"expected": expected, "actual": actual},
                )
            )
        return judge.verified(
            Evidence(f"{ref} is new and points at {base or 'HEAD'} ({expected})", where),
            vouched={"kind": "branch", "repo": where, "ref": ref, "sha": actual},
            change=f"branch {name} was created at commit {actual[:7]}",
        )

    @staticmethod
    def _verify_checkout(ctx: CallContext, judge: Judge, before: _Before) -> Receipt:
        repo, old = before.repo, before.state
        assert repo is not None and old is not None
        name = _branch_name(ctx.arguments) or ""
        where = str(repo.path)
        head = repo.head()
        branch = f"refs/heads/{name}"
        if branch in old.refs or branch in repo.refs():
            if head.ref != branch:
                return judge.contradicted(
                    Evidence(f"HEAD is on {head.ref or 'a detached commit'}, not {branch}", where)
                )
        else:
            target = repo.resolve_commit(name)
            if target is None:
                return judge.unchecked(f"{name!r} names no branch or commit", where)
            if head.ref is not None or head.sha != target:
                return judge.contradicted(
                    Evidence(
                        f"HEAD is {head.ref or head.sha}, not detached at {target}",
                        where,
                    )
                )
        if before.index_clean and not repo.index_matches_head():
            return judge.contradicted(
                Evidence(
                    "HEAD names the new commit but the index still holds another tree: the "
                    "work tree was not checked out",
                    where,
                )
            )
        return judge.verified(
            Evidence(f"HEAD is {head.ref or 'detached'} at {head.sha}", where),
            vouched={"kind": "checkout", "repo": where, "ref": head.ref, "sha": head.sha},
        )
