"""Uploaded files: a bounded read, and a pack zip unpacked without trusting its names.

A pack zip holds the pack's files at its top level or inside one folder. Unpacking refuses,
before writing anything: an absolute name, ``..``, a backslash or a NUL in a name, a symlink
or any entry that is not a plain file or that one folder, a nested folder, more entries than
a pack can have, and any file (counted as it is inflated, not as the zip claims) or total
larger than a pack may be. Files are created new (``O_EXCL | O_NOFOLLOW``), 0600, in a fresh
private directory; the verifier then judges the folder exactly as it would any other.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from affidavit.core.atomic import SECRET_FILE_MODE
from affidavit.core.errors import InputError
from affidavit.packs import format as fmt

MAX_ENTRIES = len(fmt.ALLOWED_FILES) + 1  # the files and the one folder around them
MAX_FILE = fmt.MAX_DATA_FILE
MAX_TOTAL = len(fmt.ALLOWED_FILES) * fmt.MAX_DATA_FILE
_HINT = "zip the pack folder itself (its files, or the one folder holding them)"


def _refuse(name: str, problem: str) -> InputError:
    return InputError(f"the zip entry {name[:80]!r} {problem}", _HINT)


def _plan(archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str]]:
    """Each file entry and the plain name it will be written under; refuses the rest."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise InputError(
            f"the zip has {len(infos)} entries; a pack has at most {MAX_ENTRIES - 1} files", _HINT
        )
    folders: set[str] = set()
    files: list[tuple[zipfile.ZipInfo, str]] = []
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name).parts
        if not name or name.startswith("/") or "\\" in name or "\0" in name or ".." in parts:
            raise _refuse(name, "is not a plain relative name")
        kind = stat.S_IFMT(info.external_attr >> 16)
        if info.is_dir():
            if len(parts) != 1:
                raise _refuse(name, "is a nested folder; a pack holds no folders")
            folders.add(parts[0])
            continue
        if kind not in (0, stat.S_IFREG):
            raise _refuse(name, "is not a regular file (a symlink or a device)")
        if len(parts) > 2:
            raise _refuse(name, "is inside a nested folder; a pack holds no folders")
        if len(parts) == 2:
            folders.add(parts[0])
        files.append((info, parts[-1]))
    if len(folders) > 1 or (
        folders and any(len(PurePosixPath(i.filename).parts) == 1 for i, _ in files)
    ):
        raise InputError("the zip holds files outside the one pack folder", _HINT)
    names = [name for _, name in files]
    if len(set(names)) != len(names):
        raise InputError("the zip holds two files with the same name", _HINT)
    return files


def extract_pack_zip(source: IO[bytes], into: Path) -> Path:
    """Unpack a pack zip into the new directory ``into`` (0700); return ``into``."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"the upload is not a zip file ({exc})", _HINT) from None
    with archive:
        files = _plan(archive)
        into.mkdir(mode=0o700)
        try:
            _write_all(archive, files, into)
        except BaseException:
            shutil.rmtree(into, ignore_errors=True)
            raise
    return into


def _write_all(
    archive: zipfile.ZipFile, files: list[tuple[zipfile.ZipInfo, str]], into: Path
) -> None:
    total = 0
    for info, name in files:
        try:
            with archive.open(info) as member:
                data = member.read(MAX_FILE + 1)
        except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
            raise _refuse(info.filename, f"cannot be unpacked ({exc})") from None
        total += len(data)
        if len(data) > MAX_FILE or total > MAX_TOTAL:
            raise _refuse(info.filename, "is larger than a pack file may be")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(into / name, flags, SECRET_FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
