"""Reading and writing one client config file: backup first, atomic replace, keep its mode.

A symlinked config (dotfile managers do this) is written through to its target so the link
survives. The bytes are re-read just before writing; if they changed while we worked, nothing
is written.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.atomic import SECRET_FILE_MODE, fsync_dir, write_atomic
from affidavit.core.canonical import sha256_hex
from affidavit.core.errors import ConflictError, InputError
from affidavit.integrate import backups
from affidavit.integrate.clients import Client
from affidavit.integrate.formats import ServerMap


class UnparsableConfig(InputError):
    """A config file we will not edit; ``snippet`` is what the user can paste instead."""

    def __init__(self, message: str, hint: str, snippet: str) -> None:
        super().__init__(message, hint)
        self.snippet = snippet


@dataclass
class Loaded:
    """A config file as read: its path, exact bytes (None if absent) and parsed server map."""

    client: Client
    path: Path
    before: bytes | None
    doc: ServerMap


def target_of(path: Path) -> Path:
    """The file a write to ``path`` must replace (through a symlink, to its target)."""
    return path.resolve() if path.is_symlink() else path


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None if it does not exist."""
    try:
        return target_of(path).read_bytes()
    except FileNotFoundError:
        return None


def load(client: Client, path: Path, snippet: str) -> Loaded:
    """Read and parse ``path``; refuse (with ``snippet`` to paste) if it does not parse."""
    before = read_bytes(path)
    try:
        text = "" if before is None else before.decode("utf-8")
        doc = client.load(text)
    except UnicodeDecodeError:
        raise UnparsableConfig(
            f"{path} is not UTF-8 text, so affidavit left it untouched",
            "add the block printed above to it by hand",
            snippet,
        ) from None
    except InputError as exc:
        raise UnparsableConfig(
            f"{path}: {exc.message}; affidavit left it untouched",
            "fix the file, or add the block printed above to it by hand",
            snippet,
        ) from None
    return Loaded(client, path, before, doc)


def write(loaded: Loaded, op: str, after: bytes) -> backups.Record:
    """Back up the old bytes, then replace the file atomically; return the record."""
    target = target_of(loaded.path)
    if read_bytes(loaded.path) != loaded.before:
        raise ConflictError(f"{loaded.path} changed while affidavit was editing it", "run it again")
    backup_path = backups.backup(loaded.client.key, op, target, loaded.before)
    mode = SECRET_FILE_MODE
    if loaded.before is not None:
        mode = target.stat().st_mode & 0o777
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, after, mode=mode)
    record = backups.make_record(op, loaded.client.key, target, backup_path, loaded.before, after)
    backups.add(record)
    return record


def restore(record: backups.Record) -> bool:
    """Put back the bytes that were there before ``record``'s write (or remove a new file).

    False, with nothing changed, when the backup is gone or no longer matches its hash: the
    caller then undoes its change entry by entry instead.
    """
    target = Path(record.path)
    if record.backup is None:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
            fsync_dir(target.parent)
    else:
        try:
            data = Path(record.backup).read_bytes()
        except OSError:
            return False
        if sha256_hex(data) != record.before_sha256:
            return False
        mode = target.stat().st_mode & 0o777 if target.exists() else SECRET_FILE_MODE
        write_atomic(target, data, mode=mode)
    backups.drop(record)
    return True


def unchanged_since(record: backups.Record) -> bool:
    """Whether the file still holds exactly the bytes ``record`` wrote."""
    current = read_bytes(Path(record.path))
    return current is not None and sha256_hex(current) == record.after_sha256


def undo_chain(op: str, path: Path) -> int:
    """Restore byte for byte through every ``op`` write the file still matches; count them."""
    undone = 0
    target = target_of(path)
    while (record := backups.latest(op, target)) is not None and unchanged_since(record):
        if not restore(record):
            break
        undone += 1
    return undone
