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
"""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from affidavit.proxy.verifiers.base import ENTRY_POINT_GROUP, Verifier

BUILTIN_PREFIX = "affidavit.proxy.verifiers."
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


def load_verifiers() -> list[Verifier]:
    """Every verifier registered under :data:`ENTRY_POINT_GROUP`, plugins first, then built-ins."""
    entries = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
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
