"""Unpacking an uploaded pack zip: only a pack's plain files, bounded, or nothing at all."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from affidavit.console.uploads import MAX_ENTRIES, MAX_FILE, extract_pack_zip
from affidavit.core.errors import InputError
from affidavit.packs.verify import verify_pack
from tests.packs._build_fixtures import build_sample


def zipped(entries: dict[str, bytes], symlinks: dict[str, str] | None = None) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    buffer.seek(0)
    return buffer


def pack_files(tmp_path: Path) -> dict[str, bytes]:
    pack = build_sample(tmp_path / "built")
    return {item.name: item.read_bytes() for item in pack.iterdir()}


@pytest.mark.parametrize("folder", ["", "my-pack/"])
def test_a_pack_zipped_flat_or_in_one_folder_unpacks_and_verifies(tmp_path, folder):
    files = pack_files(tmp_path)
    into = extract_pack_zip(zipped({folder + n: d for n, d in files.items()}), tmp_path / "x")
    assert sorted(p.name for p in into.iterdir()) == sorted(files)
    assert into.stat().st_mode & 0o777 == 0o700
    assert len(verify_pack(into).records) == 10


@pytest.mark.parametrize(
    ("entries", "symlinks", "message"),
    [
        ({"../evil.txt": b"x"}, {}, "is not a plain relative name"),
        ({"/etc/evil": b"x"}, {}, "is not a plain relative name"),
        ({"a\\..\\evil": b"x"}, {}, "is not a plain relative name"),
        ({"pack/sub/records.jsonl": b"x"}, {}, "is inside a nested folder"),
        ({"records.jsonl": b"x"}, {"README.md": "/etc/passwd"}, "is not a regular file"),
        ({"a/records.jsonl": b"x", "b/README.md": b"y"}, {}, "outside the one pack folder"),
        ({"a/records.jsonl": b"x", "README.md": b"y"}, {}, "outside the one pack folder"),
        ({f"f{i}": b"x" for i in range(MAX_ENTRIES + 1)}, {}, "a pack has at most"),
    ],
)
def test_hostile_zips_are_refused_before_anything_is_written(tmp_path, entries, symlinks, message):
    target = tmp_path / "x"
    with pytest.raises(InputError, match=message):
        extract_pack_zip(zipped(entries, symlinks), target)
    assert not target.exists()


def test_a_zip_bomb_is_cut_off_at_the_file_limit_and_nothing_is_left(tmp_path):
    bomb = zipped({"records.jsonl": b"ok", "MEMORY.md": bytes(MAX_FILE + 1)})
    assert len(bomb.getvalue()) < 100_000  # small on the wire, large when inflated
    target = tmp_path / "x"
    with pytest.raises(InputError, match="is larger than a pack file may be"):
        extract_pack_zip(bomb, target)
    assert not target.exists()


def test_not_a_zip_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="the upload is not a zip file"):
        extract_pack_zip(io.BytesIO(b"plain text"), tmp_path / "x")
