"""Confinement: every path and ref an agent names is checked before git or the disk sees it.

An agent drives this server, so each argument is hostile until proven otherwise. Paths must
stay inside the repository after every symlink is resolved, may not name ``..`` or a ``.git``
directory at any depth (writing hooks or config there would run code, a nested repository's
too), and may not look like options. Ref names may not look like options either, and must be
names git itself accepts, so ``-D`` or ``--force`` can never reach a git command line as a flag.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from affidavit.core.errors import InputError, PolicyError

MAX_PATH_CHARS = 4096
MAX_REF_CHARS = 255
_FORBIDDEN_REF_CHARS = set(" ~^:?*[\\\x7f")


class ConfinementError(PolicyError):
    """A path or name would reach outside the repository or smuggle an option."""


def repo_path(root: Path, raw: str, *, what: str = "path") -> Path:
    """The real path of ``raw`` (relative to ``root``, or absolute inside it), or refuse.

    The target need not exist; its nearest existing ancestor is resolved, so a symlinked
    directory pointing out of the repository is caught before anything is created under it.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise InputError(f"{what} must be a non-empty string")
    if len(raw) > MAX_PATH_CHARS or "\x00" in raw:
        raise InputError(f"{what} is too long or contains a NUL byte")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} is not valid Unicode (it has a lone surrogate)") from None
    if raw.startswith("-"):
        raise ConfinementError(
            f"{what} {raw!r} looks like a command-line option", "name a file inside the repository"
        )
    parts = PurePosixPath(raw).parts
    if ".." in parts:
        raise ConfinementError(
            f"{what} {raw!r} climbs with '..'", "give the path from the repository root"
        )
    root_real = Path(os.path.realpath(root))
    candidate = Path(raw) if raw.startswith("/") else root_real / raw
    resolved = Path(os.path.realpath(candidate))
    if not _inside(resolved, root_real):
        raise ConfinementError(
            f"{what} {raw!r} resolves outside the repository",
            "only files inside the repository can be used (symlinks out are refused)",
        )
    relative = resolved.relative_to(root_real)
    if ".git" in relative.parts or ".git" in parts:  # this repository's, or a nested one's
        raise ConfinementError(
            f"{what} {raw!r} is inside .git", "git's own files are managed by the git tools only"
        )
    return resolved


def relative(root: Path, path: Path) -> str:
    """``path`` as a POSIX path relative to the repository root (``.`` for the root)."""
    return Path(path).relative_to(Path(os.path.realpath(root))).as_posix()


def check_ref_name(raw: str, *, what: str = "name") -> str:
    """A branch or ref name that cannot be read as an option and that git would accept.

    This is the cheap, local half of the rule; :func:`worktree.WorkTree.check_branch_name` asks
    ``git check-ref-format`` for the rest.
    """
    if not isinstance(raw, str) or not raw:
        raise InputError(f"{what} must be a non-empty string")
    if raw.startswith("-"):
        raise ConfinementError(
            f"{what} {raw!r} looks like a command-line option",
            "branch and ref names cannot start with '-'",
        )
    if (
        len(raw) > MAX_REF_CHARS
        or any(ord(c) < 32 or c in _FORBIDDEN_REF_CHARS for c in raw)
        or "@{" in raw
        or raw == "@"
    ):
        raise InputError(
            f"{what} {raw!r} is not a valid git name",
            "use letters, digits, '/', '-', '_' and '.' (no spaces, ~ ^ : ? * [ \\ or @{)",
        )
    return raw


def check_revision(raw: str, *, what: str = "target") -> str:
    """A revision expression (``HEAD~1``, ``main``, a hash) that cannot be read as an option."""
    if not isinstance(raw, str) or not raw:
        raise InputError(f"{what} must be a non-empty string")
    if raw.startswith("-"):
        raise ConfinementError(
            f"{what} {raw!r} looks like a command-line option", "name a branch, tag or commit"
        )
    if len(raw) > MAX_REF_CHARS or any(ord(c) < 32 or c in " \\\x7f" for c in raw):
        raise InputError(f"{what} {raw!r} is not a valid revision", "name a branch, tag or commit")
    return raw


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
