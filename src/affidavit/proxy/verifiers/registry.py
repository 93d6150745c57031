"""Loading verifiers: every plugin registered under the ``affidavit.verifiers`` entry points.

The built-in verifiers are registered there too (``pyproject.toml``), so a third-party one is
loaded exactly like them. An entry point may name a class or a zero-argument factory (called
once) or a ready instance; whatever it yields must satisfy :class:`Verifier`. A plugin that
fails to import, to construct, or to look like a verifier is reported as one warning (through
:mod:`logging`: the command shows it on stderr) and skipped — one broken plugin never stops
the proxy or the other verifiers.

Order matters because the relay uses the first verifier that applies: third-party plugins
come first (so one can specialise a tool a built-in also covers), then the built-ins, each
group sorted by entry-point name so the order is the same on every run.

``load_verifiers(only=...)`` loads just the named ones (``--verifiers``); verimcp's verifier
names are accepted for ours (:data:`VERIMCP_NAMES`), so a verimcp command line carries over.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from affidavit.core.errors import UsageError
from affidavit.proxy.verifiers.base import ENTRY_POINT_GROUP, Verifier

BUILTIN_PREFIX = "affidavit.proxy.verifiers."
VERIMCP_NAMES = {
    "ci_run": "ci",
    "git_branch": "git",
    "git_commit": "git",
    "git_server_commit": "git",
    "resource_read": "resources",
}
"""verimcp's entry-point names for the verifiers that judge the same claims here."""
logger = logging.getLogger(__name__)


def _report(entry: EntryPoint, why: str) -> None:
    logger.warning(
        "verifier plugin %r (%s) was skipped: %s; fix or uninstall the package that provides it",
        entry.name,
        entry.value,
        why,
    )


def _instantiate(loaded: Any) -> Any:
    if isinstance(loaded, type) or (callable(loaded) and not isinstance(loaded, Verifier)):
        return loaded()
    return loaded


def _load_one(entry: EntryPoint) -> Verifier | None:
    try:
        verifier = _instantiate(entry.load())
    except Exception as exc:  # a plugin may fail in any way; it must not take the proxy down
        _report(entry, f"{type(exc).__name__}: {exc}")
        return None
    if not isinstance(verifier, Verifier) or not isinstance(getattr(verifier, "name", None), str):
        _report(entry, "it does not provide name, applies, snapshot, verify and still_holds")
        return None
    return verifier


def _chosen(entries: list[EntryPoint], only: Collection[str]) -> list[EntryPoint]:
    """The entries named in ``only`` (ours or verimcp's names); an unknown name is refused."""
    wanted = {VERIMCP_NAMES.get(name.strip(), name.strip()) for name in only if name.strip()}
    unknown = wanted - {e.name for e in entries}
    if unknown:
        known = ", ".join(sorted({e.name for e in entries}))
        raise UsageError(
            f"--verifiers names no installed verifier {', '.join(sorted(unknown))}",
            f"choose among: {known}",
        )
    return [e for e in entries if e.name in wanted]


def load_verifiers(only: Collection[str] | None = None) -> list[Verifier]:
    """Every verifier registered under :data:`ENTRY_POINT_GROUP` (or just those named in
    ``only``), plugins first, then built-ins."""
    entries = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    if only is not None:
        entries = _chosen(entries, only)
    ordered = [e for e in entries if not e.value.startswith(BUILTIN_PREFIX)] + [
        e for e in entries if e.value.startswith(BUILTIN_PREFIX)
    ]
    loaded: list[Verifier] = []
    seen: set[str] = set()
    for entry in ordered:
        if entry.name in seen:
            continue
        seen.add(entry.name)
        verifier = _load_one(entry)
        if verifier is not None:
            loaded.append(verifier)
    return loaded
