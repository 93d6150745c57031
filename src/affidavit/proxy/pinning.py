"""Tool pinning (``--pin-tools``): notice when a backend changes a tool under the user's feet.

On first sight each tool's name, description and schemas are hashed and pinned per backend in
``pins.json`` beside the audit log. A later definition with another hash (a "rug pull": a
harmless tool turned into one whose description instructs the model to exfiltrate) is
reported, hidden from the host's tool list and refused at call time until the user accepts it
with ``affidavit proxy trust-tools``. The pin file is rewritten atomically under a lock so
several proxies can share it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir, write_atomic
from affidavit.core.canonical import canonical_json, digest_json
from affidavit.core.errors import IntegrityError, NotFoundError

PINS_FILE = "pins.json"


def tool_hash(tool: Mapping[str, Any]) -> str:
    """The pinned identity of a tool definition: its name, description and schemas."""
    return digest_json(
        {
            "name": tool.get("name"),
            "description": tool.get("description"),
            "inputSchema": tool.get("inputSchema"),
            "outputSchema": tool.get("outputSchema"),
        }
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    if not path.parent.exists():  # a new directory is private; an existing one is kept
        ensure_private_dir(path.parent)
    with (path.parent / f".{path.name}.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {"backends": {}}
    except ValueError as exc:
        raise IntegrityError(
            f"pin file {path} is not valid JSON", "restore it or delete it to re-pin every tool"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("backends"), dict):
        raise IntegrityError(f"pin file {path} has an unknown layout", "delete it to re-pin")
    return data


def _write(path: Path, data: Mapping[str, Any]) -> None:
    write_atomic(path, canonical_json(dict(data)) + b"\n", mode=SECRET_FILE_MODE)


@dataclass(frozen=True)
class Change:
    """A tool whose definition no longer matches its pin."""

    backend: str
    tool: str
    pinned: str
    seen: str
    description: str = ""


@dataclass
class PinStore:
    """The pins of one backend, as seen by one proxy session."""

    path: Path
    backend: str
    refused: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, tools: Sequence[Mapping[str, Any]]) -> list[Change]:
        """Pin unseen tools, record changed ones as pending; return the changes."""
        changes: list[Change] = []
        with self._lock, _locked(self.path):
            data = _read(self.path)
            entry = data["backends"].setdefault(self.backend, {"tools": {}, "pending": {}})
            pinned, pending = entry.setdefault("tools", {}), entry.setdefault("pending", {})
            dirty = False
            for tool in tools:
                name = tool.get("name")
                if not isinstance(name, str):
                    continue
                seen = tool_hash(tool)
                if name not in pinned:
                    pinned[name] = seen
                    dirty = True
                elif pinned[name] != seen:
                    changes.append(Change(self.backend, name, pinned[name], seen))
                    if pending.get(name, {}).get("hash") != seen:
                        pending[name] = {
                            "hash": seen,
                            "description": str(tool.get("description") or "")[:500],
                        }
                        dirty = True
            if dirty:
                _write(self.path, data)
        self.refused.update(change.tool for change in changes)
        for tool in tools:
            name = tool.get("name")
            if isinstance(name, str) and not any(c.tool == name for c in changes):
                self.refused.discard(name)
        return changes


def trust(path: Path, tools: set[str] | None = None, backend: str | None = None) -> list[Change]:
    """Accept pending definitions (all, or only ``tools`` / ``backend``); return what changed."""
    if not path.exists():
        raise NotFoundError(f"no pin file at {path}", "run the proxy with --pin-tools first")
    accepted: list[Change] = []
    with _locked(path):
        data = _read(path)
        for name, entry in data["backends"].items():
            if backend is not None and name != backend:
                continue
            pending = entry.get("pending", {})
            for tool in sorted(pending):
                if tools is not None and tool not in tools:
                    continue
                record = pending.pop(tool)
                accepted.append(
                    Change(
                        name,
                        tool,
                        entry["tools"].get(tool, ""),
                        record["hash"],
                        str(record.get("description", "")),
                    )
                )
                entry["tools"][tool] = record["hash"]
        if accepted:
            _write(path, data)
    return accepted
