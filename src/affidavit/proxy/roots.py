"""Filesystem roots the verifiers may look inside.

Roots come from ``--root DIR`` and, when the host declares the ``roots`` capability, from the
host's own ``roots/list`` answer (asked by the proxy itself, so verifiers work in front of
servers that never ask). The two are united: a host that answers with no roots, or fails to
answer, never discards ``--root``. With no root at all, path claims stay ``unchecked``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from affidavit.core.errors import UsageError


def root_from_uri(uri: str) -> Path | None:
    """The directory a ``file://`` root URI names, or ``None`` for other schemes."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


def validate_cli_roots(paths: Iterable[Path]) -> tuple[Path, ...]:
    """Resolve ``--root`` values; a missing directory is a usage error, not a silent gap."""
    roots = []
    for path in paths:
        resolved = Path(path).expanduser().resolve()
        if not resolved.is_dir():
            raise UsageError(f"--root {path} is not a directory", "pass an existing directory")
        roots.append(resolved)
    return tuple(dict.fromkeys(roots))


@dataclass
class Roots:
    """The configured roots plus the latest set the host reported."""

    configured: tuple[Path, ...] = ()
    from_host: tuple[Path, ...] = field(default_factory=tuple)

    def update_from_host(self, result: Mapping[str, Any]) -> None:
        """Take a ``roots/list`` result; malformed entries are skipped, not fatal."""
        found = []
        for item in result.get("roots") or []:
            if isinstance(item, Mapping) and isinstance(item.get("uri"), str):
                path = root_from_uri(item["uri"])
                if path is not None:
                    found.append(path.resolve())
        self.from_host = tuple(found)
        self.__dict__.pop("all", None)

    @functools.cached_property
    def all(self) -> tuple[Path, ...]:
        """Configured roots first, then the host's, without duplicates (computed once per
        change: every call the proxy acts on reads it)."""
        return tuple(dict.fromkeys((*self.configured, *self.from_host)))
