"""Read-only access to a git repository's state, fast enough to run around every call.

Verifiers judge claims against this, so it must never change the repository: every git
command runs with ``GIT_OPTIONAL_LOCKS=0`` (``git status`` would otherwise refresh the index
and race with the backend), no hooks, no pager, no prompt, a timeout and a C locale. HEAD and
refs are read straight from the files of the ``files`` ref backend (loose refs, then
``packed-refs``), which costs microseconds instead of a 3 ms ``git`` start; a repository that
uses another ref backend falls back to ``git``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from affidavit.proxy.verifiers.gitobjects import (
    LooseObject,
    index_tree,
    parse_commit,
    plain_history,
    read_loose,
)

GIT_TIMEOUT_S = 20.0
HEX40 = re.compile(r"\b[0-9a-f]{40}\b")
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
OBJECT_NAME = re.compile(r"^[0-9a-f]{4,40}$")


class GitUnavailable(Exception):
    """The repository could not be read (not a repository, git failed or timed out)."""


@dataclass(frozen=True)
class Head:
    """Where HEAD points: ``sha`` (None on an unborn branch) and ``ref`` (None when detached)."""

    sha: str | None
    ref: str | None


@dataclass(frozen=True)
class RefState:
    """HEAD plus every ref name -> object id, taken at one moment."""

    head: Head
    refs: Mapping[str, str]


@dataclass(frozen=True)
class CommitObject:
    """The parsed header and message of one commit object."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
        }
    )
    return env


class GitRepo:
    """One work tree, located once; all methods are read-only."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        out = self._run_raw(["rev-parse", "--absolute-git-dir", "--git-common-dir"]).split("\n")
        if len(out) < 2:
            raise GitUnavailable(f"{self.path} is not a git work tree")
        self.git_dir = Path(out[0])
        common = Path(out[1])
        self.common_dir = common if common.is_absolute() else (self.path / common).resolve()

    # -- running git -----------------------------------------------------------------------
    def _run_raw(self, args: Sequence[str], stdin: str | None = None, check: bool = True) -> str:
        try:
            proc = subprocess.run(
                ["git", "-c", "core.hooksPath=/dev/null", "-C", str(self.path), *args],
                input=stdin,
                capture_output=True,
                text=True,
                errors="replace",
                env=_git_env(),
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitUnavailable(f"git {args[0]} failed in {self.path}: {exc}") from exc
        if check and proc.returncode != 0:
            raise GitUnavailable(
                f"git {args[0]} failed in {self.path}: {proc.stderr.strip()[:300]}"
            )
        return proc.stdout.strip("\n")

    def run(self, *args: str, stdin: str | None = None) -> str:
        """Output of a git command that must succeed (stripped of trailing newlines)."""
        return self._run_raw(args, stdin=stdin)

    def succeeds(self, *args: str) -> bool:
        """Whether a git command exits 0 (for ``--quiet`` style predicates)."""
        try:
            proc = subprocess.run(
                ["git", "-c", "core.hooksPath=/dev/null", "-C", str(self.path), *args],
                capture_output=True,
                env=_git_env(),
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitUnavailable(f"git {args[0]} failed in {self.path}: {exc}") from exc
        return proc.returncode == 0

    # -- refs, read from files -------------------------------------------------------------
    def _packed_refs(self) -> dict[str, str]:
        packed: dict[str, str] = {}
        try:
            text = (self.common_dir / "packed-refs").read_text(encoding="utf-8")
        except FileNotFoundError:
            return packed
        for line in text.splitlines():
            if not line or line[0] in "#^":
                continue
            sha, _, name = line.partition(" ")
            if _FULL_SHA.match(sha):
                packed[name] = sha
        return packed

    def _loose_refs(self) -> dict[str, str]:
        loose: dict[str, str] = {}
        base = self.common_dir / "refs"
        for dirpath, _dirs, files in os.walk(base):
            for fname in files:
                if fname.endswith(".lock"):  # a ref being rewritten, not a ref
                    continue
                full = Path(dirpath) / fname
                try:
                    value = full.read_text(encoding="utf-8").strip()
                except OSError:
                    continue
                if _FULL_SHA.match(value):
                    loose["refs/" + full.relative_to(base).as_posix()] = value
        return loose

    def _uses_files_backend(self) -> bool:
        head = self.git_dir / "HEAD"
        try:
            return not head.read_text(encoding="utf-8").startswith("ref: refs/heads/.invalid")
        except OSError:
            return False

    def refs(self) -> dict[str, str]:
        """Every ref under ``refs/`` -> the object id it names."""
        if not self._uses_files_backend():
            out = self._run_raw(["for-each-ref", "--format=%(refname) %(objectname)"])
            return dict(line.rpartition(" ")[::2] for line in out.splitlines() if line)
        refs = self._packed_refs()
        refs.update(self._loose_refs())
        return refs

    def head(self, refs: Mapping[str, str] | None = None) -> Head:
        """Where HEAD points now."""
        if not self._uses_files_backend():
            ref = self._run_raw(["symbolic-ref", "-q", "HEAD"], check=False) or None
            sha = self._run_raw(["rev-parse", "-q", "--verify", "HEAD"], check=False) or None
            return Head(sha=sha, ref=ref)
        try:
            content = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise GitUnavailable(f"cannot read HEAD of {self.path}: {exc}") from exc
        if content.startswith("ref: "):
            ref = content[5:].strip()
            table = self.refs() if refs is None else refs
            return Head(sha=table.get(ref), ref=ref)
        if _FULL_SHA.match(content):
            return Head(sha=content, ref=None)
        raise GitUnavailable(f"unreadable HEAD in {self.path}: {content[:60]!r}")

    def state(self) -> RefState:
        """HEAD and all refs, read together."""
        refs = self.refs()
        return RefState(head=self.head(refs), refs=refs)

    # -- objects ---------------------------------------------------------------------------
    def _loose(self, sha: str) -> LooseObject | None:
        """``sha`` read from its loose object file when git would show it as stored, else None."""
        if not _FULL_SHA.match(sha) or not self._uses_files_backend():
            return None
        if not plain_history(self.common_dir):
            return None
        return read_loose(self.common_dir / "objects", sha)

    def object_type(self, name: str) -> str | None:
        """``commit``, ``tree``, ``blob`` or ``tag`` for an object name; None if missing."""
        if not OBJECT_NAME.match(name):
            return None
        loose = self._loose(name)
        if loose is not None:
            return loose.kind
        out = self._run_raw(["cat-file", "--batch-check"], stdin=name + "\n", check=False)
        parts = out.split()
        if len(parts) >= 2 and parts[1] != "missing":
            return parts[1]
        return None

    def commit(self, sha: str) -> CommitObject | None:
        """The commit ``sha`` names (tags peeled), parsed; None when it names no commit.

        A new commit is a loose object, so the usual answer comes from its file (ADR 0082);
        otherwise one ``git log`` instead of a type check plus a read.
        """
        if not OBJECT_NAME.match(sha):
            return None
        loose = self._loose(sha)
        if loose is not None and loose.kind in ("tree", "blob"):
            return None
        if loose is not None and loose.kind == "commit":
            parsed = parse_commit(loose.body)
            if parsed is not None:
                return CommitObject(sha, parsed.tree, parsed.parents, parsed.message)
        out = self._run_raw(
            ["log", "-1", "--no-walk", "--format=%H%x00%T%x00%P%x00%B", "--end-of-options", sha],
            check=False,
        )
        fields = out.split("\0", 3)
        if len(fields) != 4 or not _FULL_SHA.match(fields[0]):
            return None
        full, tree, parents, message = fields
        return CommitObject(sha=full, tree=tree, parents=tuple(parents.split()), message=message)

    def resolve_commit(self, rev: str) -> str | None:
        """The commit a revision names (peeling tags), or None."""
        if rev.startswith("-"):
            return None
        out = self._run_raw(["rev-parse", "-q", "--verify", f"{rev}^{{commit}}"], check=False)
        return out if _FULL_SHA.match(out) else None

    def reachable_from_any(self, sha: str, tips: Iterable[str]) -> bool:
        """Whether commit ``sha`` is one of ``tips`` or reachable from one (commit ids)."""
        tip_set = set(tips)
        if sha in tip_set:
            return True
        if not tip_set:
            return False
        lines = [sha, *(f"^{t}" for t in sorted(tip_set))]
        out = self._run_raw(["rev-list", "--max-count=1", "--stdin"], stdin="\n".join(lines) + "\n")
        return out.strip() == ""

    # -- index and work tree ---------------------------------------------------------------
    def index_matches_head(self, head: Head | None = None) -> bool:
        """True when nothing is staged (the index equals HEAD's tree).

        ``head`` is HEAD as the caller just read it (read again when not given). Proven
        without git when the tree the index would write is HEAD's tree; any other outcome
        (including a mismatch, which may be a tree git would normalise) asks git.
        """
        head_sha = (head or self.head()).sha
        own_index = "GIT_INDEX_FILE" not in os.environ
        loose = self._loose(head_sha) if head_sha and own_index else None
        fields = parse_commit(loose.body) if loose is not None and loose.kind == "commit" else None
        if fields is not None and index_tree(self.git_dir / "index") == fields.tree:
            return True
        return self.succeeds("diff", "--cached", "--quiet", "--no-ext-diff")

    def unstaged(self, pathspecs: Sequence[str]) -> list[str]:
        """Status lines under ``pathspecs`` whose work-tree side differs from the index."""
        out = self._run_raw(["status", "--porcelain=v1", "--untracked-files=all", "--", *pathspecs])
        return [line for line in out.splitlines() if len(line) > 3 and line[1] != " "]

    def changed(self, pathspecs: Sequence[str]) -> list[str]:
        """Status lines under ``pathspecs`` that differ from HEAD at all (staged or not)."""
        out = self._run_raw(["status", "--porcelain=v1", "--untracked-files=all", "--", *pathspecs])
        return [line for line in out.splitlines() if line.strip()]

    def status_porcelain(self) -> str:
        """``git status --porcelain=v1 --branch`` for the whole work tree."""
        return self._run_raw(["status", "--porcelain=v1", "--branch", "--untracked-files=all"])


_located: dict[Path, GitRepo] = {}


def open_repo(path: Path) -> GitRepo | None:
    """A :class:`GitRepo` for ``path``, or None when it is not a readable work tree.

    Located repositories are remembered (locating costs a ``git`` start); a path that is not
    a repository yet is asked again next time, since a backend may create it.
    """
    key = Path(path)
    repo = _located.get(key)
    if repo is not None and repo.git_dir.is_dir():
        return repo
    try:
        repo = GitRepo(key)
    except GitUnavailable:
        return None
    _located[key] = repo
    return repo
