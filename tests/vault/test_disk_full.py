"""A full disk, for real: the vault says so, stores nothing, and works again once there is room.

Before, SQLite's "database or disk is full" came out as "the vault file is corrupt or
truncated ... restore it from a backup", advice that throws away every memory stored since
that backup. Two real ways to run out of room: a small tmpfs filled to the last byte (ENOSPC;
needs the right to mount, as root has here), and the file-size limit RLIMIT_FSIZE (EFBIG, the
same path in SQLite as a disk quota's EDQUOT), which any user can set on a child process.
"""

from __future__ import annotations

import json
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli_vault import seed
from tests.support import run_cli
from tests.vault.conftest import create_test_vault, vault_env

DISK_FULL_EXIT = 8


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted for this test (skipped where mounting is not allowed)."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def _fill(directory: Path) -> Path:
    """Write zeros into ``directory`` until the filesystem refuses another byte."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as out:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == 28  # ENOSPC
    return filler


def _says_disk_full(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == DISK_FULL_EXIT, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    line = lines[0].lower()
    assert "full" in line and "nothing was stored" in line and "intact" in line, line
    assert "corrupt" not in line and "backup" not in line, line


def _intact(home: Path, env: dict[str, str], texts: set[str]) -> None:
    audit = run_cli(["audit", "verify", "--json"], home, env=env)
    assert audit.returncode == 0 and json.loads(audit.stdout)["ok"], audit.stdout
    export = run_cli(["export", "--plaintext"], home, env=env)
    assert {json.loads(line)["data"]["text"] for line in export.stdout.splitlines()} == texts


def test_a_full_disk_is_reported_as_full_and_loses_nothing(
    home: Path, tmp_path: Path, small_disk: Path
) -> None:
    create_test_vault(small_disk / "vault").close()
    env = {**vault_env(small_disk / "vault", tmp_path / "run"), "AFFIDAVIT_EMBEDDER": "off"}
    seed(env, "The spare key is in the blue drawer.")
    filler = _fill(small_disk)

    stored = run_cli(
        ["store", "The boiler was serviced in March. " + "x" * 150, "--source", "s"], home, env=env
    )
    _says_disk_full(stored)

    filler.unlink()
    _intact(home, env, {"The spare key is in the blue drawer."})
    again_text = "The boiler was serviced in March."
    again = run_cli(["store", again_text, "--source", "s"], home, env=env)
    assert again.returncode == 0, again.stderr
    _intact(
        home, env, {"The spare key is in the blue drawer.", "The boiler was serviced in March."}
    )


def test_an_open_vault_survives_a_full_disk_and_writes_again_after(
    tmp_path: Path, small_disk: Path
) -> None:
    from affidavit.core.errors import ExternalError
    from affidavit.vault import NewItem

    vault = create_test_vault(small_disk / "vault")  # a long-running server's handle
    try:
        kept = vault.put(NewItem({"text": "kept", "source": "s"}))
        filler = _fill(small_disk)
        batch = [NewItem({"text": f"lost {i} " + "z" * 3000, "source": "s"}) for i in range(40)]
        with pytest.raises(ExternalError, match="nothing was stored"):
            vault.put_many(batch)
        filler.unlink()
        assert [it.id for it in vault.items()] == [kept.id]
        assert len(vault.put_many(batch)) == 40
        assert len(vault) == 41 and vault.verify_audit().ok
    finally:
        vault.close()


def test_a_file_size_limit_is_reported_like_a_full_disk_and_loses_nothing(
    home: Path, tmp_path: Path
) -> None:
    create_test_vault(tmp_path / "vault").close()
    env = {**vault_env(tmp_path / "vault", tmp_path / "run"), "AFFIDAVIT_EMBEDDER": "off"}
    seed(env, "The spare key is in the blue drawer.")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps(
                {"id": f"row-{i}", "data": {"text": f"note {i} " + "y" * 2000, "source": "s"}}
            )
            + "\n"
            for i in range(300)
        )
    )
    limit = 256 * 1024  # room for the vault as it is, not for 600 kB more

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    from tests.support import PYTHON, cli_env

    done = subprocess.run(
        [PYTHON, "-m", "affidavit", "import", str(rows)],
        env=cli_env(home, env),
        capture_output=True,
        text=True,
        preexec_fn=limited,  # setrlimit only: safe between fork and exec
        timeout=120,
        check=False,
    )
    _says_disk_full(done)
    _intact(home, env, {"The spare key is in the blue drawer."})
    imported = run_cli(["import", str(rows), "--json"], home, env=env)
    assert imported.returncode == 0 and json.loads(imported.stdout)["imported"] == 300
