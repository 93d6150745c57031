"""Byte-exact backups of client configs and the record of what affidavit wrote where.

Before any config file changes, its exact bytes are copied to
``<affidavit home>/integrate/backups/`` (0600 in a 0700 directory: configs can hold tokens).
Each write is recorded in ``state.json`` with the sha256 of the bytes before and after, so a
later ``--remove`` or ``unwrap`` can tell whether the file is still exactly what we wrote (then
the backup goes back byte for byte) or has been edited since (then only our change is undone).
The record holds hashes and paths only, never file contents.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir, write_atomic
from affidavit.core.canonical import sha256_hex
from affidavit.core.clock import utc_iso
from affidavit.core.errors import IntegrityError
from affidavit.core.paths import affidavit_home


@dataclass(frozen=True)
class Record:
    """One write affidavit made to a client config."""

    op: str  # "integrate" | "wrap"
    client: str
    path: str
    backup: str | None  # None: the file did not exist before
    before_sha256: str | None
    after_sha256: str
    at: str


def _root() -> Path:
    return ensure_private_dir(affidavit_home() / "integrate")


def _state_file() -> Path:
    return _root() / "state.json"


def records() -> list[Record]:
    """Every recorded write, oldest first."""
    path = _state_file()
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [Record(**item) for item in raw]
    except (ValueError, TypeError) as exc:
        raise IntegrityError(
            f"{path} is not a valid integrate state file ({exc})",
            "move it aside; backups in the backups/ folder next to it are untouched",
        ) from None


def _save(items: list[Record]) -> None:
    data = json.dumps([asdict(r) for r in items], indent=2).encode("utf-8")
    write_atomic(_state_file(), data + b"\n", mode=SECRET_FILE_MODE)


def backup(client: str, op: str, target: Path, before: bytes | None) -> Path | None:
    """Copy ``before`` (the file's current bytes) to a new private backup file."""
    if before is None:
        return None
    folder = ensure_private_dir(_root() / "backups")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = f"{client}.{op}.{stamp}.{target.name}"
    path = folder / base
    counter = 1
    while path.exists():
        path = folder / f"{base}.{counter}"
        counter += 1
    write_atomic(path, before, mode=SECRET_FILE_MODE)
    return path


def add(record: Record) -> None:
    """Remember one write."""
    _save([*records(), record])


def drop(record: Record) -> None:
    """Forget one write (after it was undone); its backup file stays for the user."""
    _save([r for r in records() if r != record])


def latest(op: str, target: Path) -> Record | None:
    """The newest ``op`` write to ``target``, if any."""
    matches = [r for r in records() if r.op == op and r.path == str(target)]
    return matches[-1] if matches else None


def make_record(
    op: str, client: str, target: Path, backup_path: Path | None, before: bytes | None, after: bytes
) -> Record:
    """A record of writing ``after`` over ``before`` at ``target``."""
    return Record(
        op=op,
        client=client,
        path=str(target),
        backup=None if backup_path is None else str(backup_path),
        before_sha256=None if before is None else sha256_hex(before),
        after_sha256=sha256_hex(after),
        at=utc_iso(timespec="seconds"),
    )
