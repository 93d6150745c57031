"""Resource reads: the dev server's ``repo://status``, ``repo://log`` and ``repo://file/{path}``.

What it proves: right after the read, git and the disk say the same as the reply — for
status, the branch, HEAD and every changed path with its index/work-tree codes; for log, the
same newest commits in the same order with the same author, e-mail, date and subject; for a
file, exactly the same bytes (text as UTF-8, or base64 blob). The comparison is field by field
against the values re-derived with git, never a fuzzy match.

What it cannot prove: what the state was at the instant the backend read it — a change made
between the read and the check by another process looks like a fabricated read (one made by
another call through the proxy is recognised, and the verdict is then ``unchecked``). A file path
that does not stay inside the repository (``..``, a symlink out) is not looked at
(``unchecked``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.gitrepo import GitRepo, GitUnavailable, open_repo
from affidavit.proxy.verifiers.locate import (
    FILE_RESOURCE_PREFIX,
    call_repo,
    resolve_under,
    resource_path,
)
from affidavit.proxy.verifiers.overlap import WINDOWS, excuse_overlap
from affidavit.proxy.verifiers.replies import Judge

STATUS_URI = "repo://status"
LOG_URI = "repo://log"
LOG_PAGE = 50  # the dev server lists the newest 50 commits
_LOG_FORMAT = "--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s%x1e"


def _contents(ctx: CallContext, result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = result.get("contents")
    if not isinstance(items, list) or not items:
        return None
    for item in items:
        if isinstance(item, Mapping) and item.get("uri") == ctx.name:
            return item
    first = items[0]
    return first if isinstance(first, Mapping) else None


def status_of(repo: GitRepo) -> dict[str, Any]:
    """``repo://status`` re-derived: branch, HEAD, clean, entries (porcelain v1, -z)."""
    raw = repo.run("status", "--porcelain=v1", "-z", "--untracked-files=all")
    fields = raw.split("\0")
    entries: list[dict[str, str]] = []
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        entry = {"index": item[0], "worktree": item[1], "path": item[3:]}
        if item[0] in "RC" and i < len(fields):
            entry["from"] = fields[i]
            i += 1
        entries.append(entry)
    head = repo.head()
    branch = head.ref.removeprefix("refs/heads/") if head.ref else None
    return {"branch": branch, "head": head.sha, "clean": not entries, "entries": entries}


def log_of(repo: GitRepo, count: int) -> list[dict[str, str]]:
    """The newest ``count`` commits reachable from HEAD, as ``repo://log`` lists them."""
    if repo.head().sha is None:
        return []
    out = repo.run("log", f"--max-count={count}", _LOG_FORMAT)
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if record:
            sha, author, email, date, subject = record.split("\x1f", 4)
            commits.append(
                {"hash": sha, "author": author, "email": email, "date": date, "subject": subject}
            )
    return commits


def _file_target(ctx: CallContext, repo: Path) -> Path | None:
    """The file a ``repo://file/`` read names, if it stays inside the work tree (not .git)."""
    rel = resource_path(ctx.name)
    target = resolve_under(rel, [repo]) if rel and not Path(rel).is_absolute() else None
    git_dir = Path(os.path.realpath(repo), ".git")
    return None if target is None or git_dir in (target, *target.parents) else target


def _entry_key(entry: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(entry.get(k, "")) for k in ("index", "worktree", "path", "from"))


class ResourceVerifier:
    """Re-derives what a repository resource read returned."""

    name = "resources"
    tool_names: frozenset[str] = frozenset()  # resource reads only, never a tools/call

    def applies(self, ctx: CallContext) -> bool:
        return ctx.method == "resources/read" and (
            ctx.name in (STATUS_URI, LOG_URI) or ctx.name.startswith(FILE_RESOURCE_PREFIX)
        )

    def snapshot(self, ctx: CallContext) -> int | None:
        """Only the call's window: a read changes nothing, so the state after it is judged.

        A file read is keyed on the file, status and log on the whole repository."""
        path = call_repo(ctx)
        if path is None:
            return None
        target = _file_target(ctx, path) if ctx.name.startswith(FILE_RESOURCE_PREFIX) else None
        return WINDOWS.begin([str(target) if target else os.path.realpath(path)])

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        try:
            receipt = self._judge(ctx, result)
        finally:
            overlapped = isinstance(before, int) and WINDOWS.end(before)
        return excuse_overlap(receipt, overlapped)

    def _judge(self, ctx: CallContext, result: Mapping[str, Any]) -> Receipt:
        judge = Judge(self.name, f"read {ctx.name}")
        path = call_repo(ctx)
        repo = open_repo(path) if path is not None else None
        if repo is None:
            return judge.unchecked("the repository could not be located", "repository")
        item = _contents(ctx, result)
        if item is None:
            return judge.contradicted(Evidence("the read returned no contents", ctx.name))
        try:
            if ctx.name.startswith(FILE_RESOURCE_PREFIX):
                return self._verify_file(ctx, judge, repo, item)
            return self._verify_json(ctx, judge, repo, item)
        except GitUnavailable as exc:
            return judge.unchecked(f"git could not be read: {exc}", str(repo.path))

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        """Reads are never answered from a replay cache: the current state is cheap to read."""
        return False

    @staticmethod
    def _verify_json(
        ctx: CallContext, judge: Judge, repo: GitRepo, item: Mapping[str, Any]
    ) -> Receipt:
        where = f"{repo.path} ({ctx.name})"
        try:
            claimed = json.loads(str(item.get("text", "")))
        except ValueError:
            return judge.contradicted(Evidence("the resource is not the JSON it declares", where))
        if ctx.name == STATUS_URI:
            if not isinstance(claimed, Mapping) or not isinstance(claimed.get("entries"), list):
                return judge.contradicted(Evidence("the status has no entries list", where))
            actual = status_of(repo)
            for key in ("branch", "head", "clean"):
                if claimed.get(key) != actual[key]:
                    return judge.contradicted(
                        Evidence(
                            f"status reports {key}={claimed.get(key)!r}; git says {actual[key]!r}",
                            where,
                        )
                    )
            claimed_entries = sorted(
                _entry_key(e) for e in claimed["entries"] if isinstance(e, Mapping)
            )
            actual_entries = sorted(_entry_key(e) for e in actual["entries"])
            if claimed_entries != actual_entries:
                return judge.contradicted(
                    Evidence(
                        "the changed paths reported differ from git status",
                        where,
                        details={
                            "reported": [list(e) for e in claimed_entries][:50],
                            "actual": [list(e) for e in actual_entries][:50],
                        },
                    )
                )
            return judge.verified(
                Evidence("branch, HEAD and every changed path match git status", where)
            )
        commits = claimed.get("commits") if isinstance(claimed, Mapping) else None
        if not isinstance(commits, list):
            return judge.contradicted(Evidence("the log has no commits list", where))
        actual_log = log_of(repo, max(len(commits), LOG_PAGE))
        for i, (got, real) in enumerate(zip(commits, actual_log, strict=False)):
            if not isinstance(got, Mapping) or any(got.get(k) != v for k, v in real.items()):
                return judge.contradicted(
                    Evidence(
                        f"log entry {i + 1} does not match git log",
                        where,
                        details={"reported": got, "actual": real},
                    )
                )
        if len(commits) > len(actual_log):
            return judge.contradicted(
                Evidence(
                    f"the log lists {len(commits)} commits; HEAD has only {len(actual_log)}",
                    where,
                )
            )
        if len(commits) < min(len(actual_log), LOG_PAGE):
            return judge.contradicted(
                Evidence(
                    f"the log lists {len(commits)} commits but leaves out older ones "
                    f"(git log has {len(actual_log)} within the first {LOG_PAGE})",
                    where,
                )
            )
        return judge.verified(
            Evidence(f"all {len(commits)} commits match git log, in order", where)
        )

    @staticmethod
    def _verify_file(
        ctx: CallContext, judge: Judge, repo: GitRepo, item: Mapping[str, Any]
    ) -> Receipt:
        target = _file_target(ctx, repo.path)
        if target is None:
            return judge.unchecked("the path does not stay inside the repository", ctx.name)
        where = str(target)
        try:
            actual = target.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return judge.contradicted(Evidence("no such file exists in the repository", where))
        if isinstance(item.get("text"), str):
            claimed = item["text"].encode("utf-8", errors="surrogatepass")
        elif isinstance(item.get("blob"), str):
            try:
                claimed = base64.b64decode(item["blob"], validate=True)
            except (binascii.Error, ValueError):
                return judge.contradicted(Evidence("the blob is not valid base64", where))
        else:
            return judge.contradicted(Evidence("the read returned neither text nor blob", where))
        if claimed != actual:
            return judge.contradicted(
                Evidence(
                    "the content returned differs from the file on disk",
                    where,
                    details={"reported_bytes": len(claimed), "actual_bytes": len(actual)},
                )
            )
        return judge.verified(
            Evidence(f"the content is byte-for-byte the file on disk ({len(actual)} bytes)", where)
        )
