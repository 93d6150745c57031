"""The git work tree the server is confined to, driven through the real ``git`` program.

Every git invocation goes through :meth:`WorkTree.git`: an argv list (never a shell), ``--``
before paths, a deadline, bounded output, ``GIT_TERMINAL_PROMPT=0`` (no credential prompt can
hang the server) and ``core.hooksPath=/dev/null``. Hooks are disabled because a hook is code in
the repository that would run on every commit or checkout an agent asks for, and because a
hook that amends or rewrites a commit would make the server report something other than what
was asked (see docs/adr/0031-devserver-git-invocation.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.atomic import write_atomic
from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    ExternalError,
    InputError,
    NotFoundError,
)
from affidavit.servers.dev import confine, proc

GIT_TIMEOUT_S = 60.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_MESSAGE_BYTES = 64 * 1024
_SAFETY_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "color.ui=false",
    "commit.gpgSign=false",
)
_REDIRECTING_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


class GitError(ExternalError):
    """git refused or failed; the message carries git's own first line of complaint."""


@dataclass(frozen=True)
class WorkTree:
    """A non-bare git work tree, identified by the real path of its top level."""

    root: Path

    @classmethod
    def open(cls, path: Path) -> WorkTree:
        """Open the work tree at ``path``; it must be the top level of a git repository."""
        real = Path(os.path.realpath(path))
        if not real.is_dir():
            raise NotFoundError(
                f"repository path {path} is not a directory", "pass a git work tree"
            )
        repo = cls(real)
        done = repo._run(["rev-parse", "--show-toplevel"], check=False)
        if done.exit_code != 0:
            raise NotFoundError(f"{path} is not a git work tree", "run `git init` there first")
        top = Path(os.path.realpath(done.stdout.decode().strip()))
        if top != real:
            raise InputError(f"{path} is inside the git work tree {top}", f"pass {top} itself")
        return repo

    # -- plumbing -------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING_ENV}
        env.update(
            {
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_OPTIONAL_LOCKS": "0",
                "GIT_LITERAL_PATHSPECS": "1",  # a path named ':(top)*' is a file, not magic
                "LC_ALL": "C",
            }
        )
        return env

    def _run(
        self, args: list[str], *, stdin: bytes | None = None, check: bool = True
    ) -> proc.Finished:
        argv = ["git"]
        for item in _SAFETY_CONFIG:
            argv += ["-c", item]
        try:
            done = proc.run(
                [*argv, *args], cwd=self.root, timeout=GIT_TIMEOUT_S, env=self._env(), stdin=stdin
            )
        except FileNotFoundError:
            raise ExternalError("git is not installed", "install git and retry") from None
        if done.timed_out:
            raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g} s and was stopped")
        if check and done.exit_code != 0:
            raise GitError(f"git {args[0]} failed: {_first_line(done)}")
        return done

    def git(self, *args: str, stdin: bytes | None = None, cut_ok: bool = False) -> str:
        """Run git and return its stdout as text, at most :data:`proc.DEFAULT_LIMIT` bytes.

        Output past the limit is an error for answers that are parsed (a cut list would be a
        wrong list); with ``cut_ok`` (a diff for reading) it ends with a visible marker instead.
        """
        done = self._run(list(args), stdin=stdin)
        text = done.stdout.decode("utf-8", errors="replace")
        if done.stdout_total > len(done.stdout):
            if not cut_ok:
                raise GitError(f"git {args[0]} printed more than {proc.DEFAULT_LIMIT} bytes")
            text += f"\n[output cut at {proc.DEFAULT_LIMIT} bytes of {done.stdout_total}]\n"
        return text

    # -- queries ----------------------------------------------------------------------------

    def head(self) -> str | None:
        """HEAD's commit hash, or ``None`` before the first commit."""
        done = self._run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
        return done.stdout.decode().strip() if done.exit_code == 0 else None

    def current_branch(self) -> str | None:
        """The checked-out branch, or ``None`` on a detached HEAD."""
        done = self._run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        return done.stdout.decode().strip() if done.exit_code == 0 else None

    def resolve_commit(self, revision: str) -> str:
        """The 40-hex commit a revision names, or a clear error."""
        confine.check_revision(revision)
        done = self._run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
            check=False,
        )
        if done.exit_code != 0:
            raise NotFoundError(f"{revision!r} does not name a commit in this repository")
        return done.stdout.decode().strip()

    def branch_exists(self, name: str) -> bool:
        """Whether ``refs/heads/<name>`` exists."""
        return (
            self._run(["show-ref", "--verify", "--quiet", f"refs/heads/{name}"], check=False)
        ).exit_code == 0

    def check_branch_name(self, name: str) -> str:
        """Refuse names that look like options or that git would not accept as a branch."""
        confine.check_ref_name(name)
        done = self._run(["check-ref-format", "--branch", name], check=False)
        if done.exit_code != 0:
            raise InputError(f"{name!r} is not a valid branch name", "see `git check-ref-format`")
        return name

    def status(self) -> dict[str, Any]:
        """Branch, HEAD and every changed path (porcelain v1, NUL-separated, so any name parses)."""
        fields = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all").split("\0")
        entries: list[dict[str, str]] = []
        index = 0
        while index < len(fields):
            item = fields[index]
            index += 1
            if len(item) < 4:
                continue
            entry = {"index": item[0], "worktree": item[1], "path": item[3:]}
            if item[0] in "RC":  # a rename or copy is followed by its source path
                entry["from"] = fields[index]
                index += 1
            entries.append(entry)
        return {
            "branch": self.current_branch(),
            "head": self.head(),
            "clean": not entries,
            "entries": entries,
        }

    def committed_file(self, path: str) -> bytes | None:
        """The bytes of ``path`` as committed in HEAD, when it is a regular file there (not a
        link, a directory or a submodule); None before the first commit or when it is absent.

        Content past :data:`proc.DEFAULT_LIMIT` is cut: callers bound sizes far below that.
        """
        if self.head() is None:
            return None
        listing = self._run(["ls-tree", "-z", "HEAD", "--", path]).stdout
        mode, kind, rest = [*listing.split(b" ", 2), b"", b""][:3]
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            return None
        return self._run(["cat-file", "blob", rest.split(b"\t", 1)[0].decode()]).stdout

    def log(self, max_count: int) -> list[dict[str, str]]:
        """The newest ``max_count`` commits reachable from HEAD."""
        if self.head() is None:
            return []
        out = self.git(
            "log", f"--max-count={max_count}", "--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s%x1e"
        )
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, author, email, date, subject = record.split("\x1f", 4)
            commits.append(
                {"hash": sha, "author": author, "email": email, "date": date, "subject": subject}
            )
        return commits

    def diff(self, target: str | None) -> str:
        """Uncommitted changes (staged and not) against ``target``, default HEAD."""
        base = self.resolve_commit(target) if target is not None else (self.head() or EMPTY_TREE)
        return self.git("diff", "--no-ext-diff", "--no-color", base, "--", cut_ok=True)

    def branches(self) -> list[dict[str, str]]:
        """Every local branch with the commit it points at."""
        out = self.git("for-each-ref", "--format=%(refname:short)%1f%(objectname)", "refs/heads/")
        rows = []
        for line in out.splitlines():
            name, _, sha = line.partition("\x1f")
            rows.append({"name": name, "commit_hash": sha})
        return rows

    # -- changes ------------------------------------------------------------------------------

    def commit(self, message: str, paths: list[str] | None) -> str:
        """Stage ``paths`` (or everything), commit with ``message``, return the new hash.

        With paths, only those paths are committed (``git commit --only`` semantics), so an
        unrelated change someone else staged does not ride along silently. A commit that fails
        (nothing to commit, no identity) puts the index back as it was: a refused call does
        not leave half of its work staged.
        """
        if not isinstance(message, str) or not message.strip():
            raise InputError("message must be a non-empty string", "describe the change")
        data = message.encode("utf-8")
        if len(data) > MAX_MESSAGE_BYTES or "\x00" in message:
            raise InputError("message is too long or contains a NUL byte")
        if paths is not None and not paths:
            raise InputError("paths must not be empty", "omit it to commit every change")
        rels = (
            None
            if paths is None
            else [confine.relative(self.root, confine.repo_path(self.root, p)) for p in paths]
        )
        before = self.head()
        index = Path(self.git("rev-parse", "--git-path", "index").strip())
        index = index if index.is_absolute() else self.root / index
        saved = index.read_bytes() if index.exists() else None
        try:
            return self._stage_and_commit(data, rels, before)
        except AffidavitError:
            if saved is None:
                index.unlink(missing_ok=True)
            else:
                write_atomic(index, saved)
            raise

    def _stage_and_commit(self, data: bytes, rels: list[str] | None, before: str | None) -> str:
        if rels is None:
            self.git("add", "--all")
            pathspec: list[str] = []
        else:
            self.git("add", "--all", "--", *rels)
            pathspec = ["--only", "--", *rels]
        if not self._has_changes(pathspec):
            raise ConflictError("nothing to commit", "change or add files first")
        done = self._run(
            ["commit", "--no-verify", "--quiet", "--file=-", *pathspec], stdin=data, check=False
        )
        if done.exit_code != 0:
            raise GitError(f"git commit failed: {_first_line(done)}", _identity_hint(done))
        after = self.head()
        if after is None or after == before:
            raise GitError("git commit reported success but HEAD did not move")
        return after

    def _has_changes(self, pathspec: list[str]) -> bool:
        paths = pathspec[2:] if pathspec else []
        if self.head() is None:
            out = self.git("diff", "--cached", "--name-only", EMPTY_TREE, "--", *paths)
            return bool(out.strip())
        return (
            self._run(["diff", "--cached", "--quiet", "HEAD", "--", *paths], check=False).exit_code
            != 0
        )

    def create_branch(self, name: str, base: str | None) -> str:
        """Create branch ``name`` at ``base`` (default HEAD) without checking it out."""
        self.check_branch_name(name)
        if self.branch_exists(name):
            raise ConflictError(f"branch {name!r} already exists", "pick another name")
        if base is None:
            target = self.head()
            if target is None:
                raise NotFoundError("the repository has no commits yet", "commit something first")
        else:
            target = self.resolve_commit(base)
        self.git("branch", "--no-track", name, target)
        return target

    def checkout(self, name: str) -> str:
        """Switch the work tree to existing branch ``name``; return its commit."""
        confine.check_ref_name(name)
        if not self.branch_exists(name):
            raise NotFoundError(f"no branch {name!r}", "create it with git_branch first")
        done = self._run(["checkout", "--quiet", name, "--"], check=False)
        if done.exit_code != 0:
            raise ConflictError(
                f"git checkout {name} refused: {_first_line(done)}",
                "commit or discard the local changes first",
            )
        head = self.head()
        assert head is not None
        return head


def _first_line(done: proc.Finished) -> str:
    text = (done.stderr or done.stdout).decode("utf-8", errors="replace").strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("hint:"):
            return line.removeprefix("error: ").removeprefix("fatal: ")
    return f"exit code {done.exit_code}"


def _identity_hint(done: proc.Finished) -> str | None:
    text = done.stderr.decode("utf-8", errors="replace")
    if "user.email" in text or "Please tell me who you are" in text:
        return "set user.name and user.email (git config) for this repository"
    return None
