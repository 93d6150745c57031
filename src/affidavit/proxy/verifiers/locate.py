"""Where a claim lives on disk: file paths resolved against known roots, and the repository a
git, CI or resource call acted on.

A file claim is only judged inside directories the user named (``--root`` or the host's
roots); a git, CI or resource claim inside the repository the call names or the backend was
started on (``--repo-path`` / ``--repository``). A path it cannot
place there is not judged: the caller gets None and the verdict is ``unchecked``. That keeps a
verifier from being turned into an oracle for files outside the workspace, and it is why
"no root known" never yields ``verified``.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from affidavit.proxy.roots import root_from_uri
from affidavit.proxy.verifiers.base import CallContext

REPO_OPTIONS = ("--repo-path", "--repository")
FILE_RESOURCE_PREFIX = "repo://file/"
"""The dev server's file resources: ``repo://file/{path}``, the path from the repository."""
_FILESYSTEM_SERVER = (
    "mcp-server-filesystem",
    "server-filesystem",
    "server-filesystem/dist/index.js",
)


def option_value(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """The value of the first ``--name VALUE`` or ``--name=VALUE`` in ``argv``."""
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1 :]
        if arg == "--":
            break
    return None


def backend_repo(ctx: CallContext) -> Path | None:
    """The repository the backend was started on (``--repo-path P`` / ``--repository P``).

    Relative values are taken from the proxy's working directory, which the backend inherits.
    """
    value = option_value(ctx.backend_command, REPO_OPTIONS)
    if not value:
        return None
    return Path(value).expanduser().absolute()


def _within(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
    except ValueError:
        return False
    return True


def resolve_under(claimed: str, bases: Sequence[Path]) -> Path | None:
    """The absolute path ``claimed`` names inside one of ``bases``, symlinks resolved.

    Relative paths are tried against each base in order (the filesystem server's rule); an
    absolute path must already lie inside a base. None when no base contains it.
    """
    if not claimed or "\x00" in claimed or not bases:
        return None
    expanded = Path(claimed).expanduser()
    real_bases = [Path(os.path.realpath(b)) for b in bases]
    candidates = [expanded] if expanded.is_absolute() else [Path(b) / expanded for b in bases]
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if any(_within(real, b) for b in real_bases):
            return real
    return None


def resource_path(uri: str) -> str | None:
    """The file a resource URI names, or None when it names none.

    ``repo://file/{path}``: the path as the dev server reads it (percent-decoded, query and
    fragment cut off), relative to the repository; ``file://`` URIs: the absolute path.
    """
    if uri.startswith(FILE_RESOURCE_PREFIX):
        raw = uri.removeprefix(FILE_RESOURCE_PREFIX).split("?", 1)[0].split("#", 1)[0]
        return urllib.parse.unquote(raw) or None
    path = root_from_uri(uri) if uri.startswith("file:") else None
    return str(path) if path is not None else None


def string_arg(arguments: Mapping[str, Any], *names: str) -> str | None:
    """The first of ``names`` present in ``arguments`` as a non-empty string."""
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def call_repo(ctx: CallContext) -> Path | None:
    """The repository a git/CI/resource call acted on, or None when it cannot be placed.

    In order: the call's own ``repo_path`` argument (mcp-server-git; relative ones against
    the first root), the backend's ``--repo-path``/``--repository``, then the only root.
    """
    explicit = string_arg(ctx.arguments, "repo_path")
    if explicit is not None:
        expanded = Path(explicit).expanduser()
        if expanded.is_absolute():
            return expanded
        return Path(ctx.roots[0]) / expanded if ctx.roots else None
    started_on = backend_repo(ctx)
    if started_on is not None:
        return started_on
    if len(ctx.roots) == 1:
        return Path(ctx.roots[0])
    return None


def filesystem_dirs(ctx: CallContext) -> list[Path]:
    """The allowed directories the official filesystem server was started with, in order.

    It resolves a relative path against the first of *its* directories that contains it, which
    need not be the proxy's first root.
    """
    argv = list(ctx.backend_command)
    for i, arg in enumerate(argv):
        if arg.endswith(_FILESYSTEM_SERVER) or "server-filesystem@" in arg:
            dirs = [a for a in argv[i + 1 :] if not a.startswith("-")]
            return [Path(d).expanduser().absolute() for d in dirs]
    return []


def resolve_file(ctx: CallContext, claimed: str) -> Path | None:
    """The file a path argument names, or None when no known root contains it.

    A backend started on a repository (the dev server) takes relative paths from that
    repository, the official filesystem server from its allowed directories in its own order;
    otherwise they are tried against the roots in order. Either way the result must lie
    inside a known root: with no root known, nothing is placed.
    """
    roots = [Path(r) for r in ctx.roots]
    if not roots:
        return None
    started_on = backend_repo(ctx)
    bases = [started_on] if started_on is not None else filesystem_dirs(ctx) or roots
    placed = resolve_under(claimed, bases)
    if placed is None:
        return None
    return placed if resolve_under(str(placed), roots) is not None else None
