"""Stop-on-change metadata: any edit, touch, addition, removal or swap is noticed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from affidavit.packs import format as fmt
from affidavit.packs.verify import verify_pack
from tests.packs.conftest import write_pack


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return write_pack(tmp_path / "pack")


def snapshot(pack: Path):
    snap = verify_pack(pack).snapshot
    assert snap.unchanged()
    assert snap.root == pack
    return snap


def test_reading_does_not_count_as_a_change(pack: Path) -> None:
    snap = snapshot(pack)
    (pack / fmt.RECORDS).read_bytes()
    verify_pack(pack)
    assert snap.unchanged()


def test_edit_is_noticed(pack: Path) -> None:
    snap = snapshot(pack)
    with (pack / fmt.MEMORY).open("ab") as handle:
        handle.write(b" ")
    assert not snap.unchanged()


def test_touch_is_noticed_even_with_mtime_restored(pack: Path) -> None:
    snap = snapshot(pack)
    target = pack / fmt.README
    before = target.stat()
    target.write_bytes(target.read_bytes())
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not snap.unchanged()


def test_added_and_removed_files_are_noticed(pack: Path) -> None:
    snap = snapshot(pack)
    (pack / "extra").write_text("x")
    assert not snap.unchanged()
    (pack / "extra").unlink()
    assert not snap.unchanged()


def test_swapped_file_is_noticed(pack: Path, tmp_path: Path) -> None:
    snap = snapshot(pack)
    copy = tmp_path / "copy"
    shutil.copy2(pack / fmt.RECORDS, copy)
    copy.replace(pack / fmt.RECORDS)
    assert not snap.unchanged()


def test_folder_replaced_and_put_back_is_noticed(pack: Path, tmp_path: Path) -> None:
    snap = snapshot(pack)
    aside = tmp_path / "aside"
    pack.rename(aside)
    assert not snap.unchanged()
    shutil.copytree(aside, pack, copy_function=shutil.copy2)
    assert not snap.unchanged()
    shutil.rmtree(pack)
    aside.rename(pack)
    # The very same inodes are back; only the root's ctime betrays the round trip.
    assert not snap.unchanged()


def test_root_turned_into_a_symlink_is_noticed(pack: Path, tmp_path: Path) -> None:
    snap = snapshot(pack)
    real = tmp_path / "real"
    pack.rename(real)
    pack.symlink_to(real)
    assert not snap.unchanged()
