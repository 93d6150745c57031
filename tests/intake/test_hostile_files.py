"""Hostile files named to the importers, through the real CLI: a FIFO, ``/dev/zero``, a zip
bomb built here, JSON nested 200,000 levels deep.

Each must end in one clear error line (exit 2, nothing stored), quickly and in little memory.
Every run happens under an address-space limit, so a regression ends in a MemoryError instead
of taking the machine's memory, and reports its own peak RSS.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.intake.conftest import LIGHT
from tests.support import PYTHON, cli_env, run_cli

#: Far more than any bounded reader needs, far less than reading the hostile file whole.
ADDRESS_SPACE = 3 * 1024**3
#: The largest peak RSS (KiB) a refused hostile file may cost the process.
PEAK_RSS_KIB = 400 * 1024
#: A child that hangs on a FIFO is killed after this (the test then fails); never waited out.
HANG_S = 60
_RUN_AND_REPORT = (
    "import resource, runpy, sys\n"
    "sys.argv = ['affidavit', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('affidavit', run_name='__main__')\n"
    "finally:\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    sys.stderr.write(f'\\npeak-rss-kib {peak}\\n')\n"
)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _hostile_run(args: list[str], home: Path, env: dict[str, str]) -> tuple[int, str, int]:
    """``affidavit ARGS`` in a memory-limited child: (exit status, stderr lines, peak KiB)."""
    done = subprocess.run(
        [PYTHON, "-c", _RUN_AND_REPORT, *args],
        env=cli_env(home, {**env, **LIGHT}),
        capture_output=True,
        text=True,
        timeout=HANG_S,
        preexec_fn=_limit_memory,  # a plain rlimit in the child before exec
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    peak = int(lines.pop().split()[1]) if lines and lines[-1].startswith("peak-rss") else -1
    return done.returncode, "\n".join(lines), peak


def _refused(outcome: tuple[int, str, int], *words: str) -> None:
    code, err, peak = outcome
    assert code == 2, err
    assert err.count("\n") == 0 and err.startswith("affidavit: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for word in words:
        assert word in err, err
    assert 0 < peak < PEAK_RSS_KIB, peak


def _stored(home: Path, env: dict[str, str]) -> int:
    listed = run_cli(["recent", "--limit", "10", "--json"], home, env=env)
    return len(json.loads(listed.stdout)["results"])


IMPORTS = {
    "markdown": ["import", "--from", "markdown"],
    "claude-memory": ["import", "--from", "claude-memory"],
    "compartment": ["import", "--from", "compartment"],
    "chatgpt": ["import", "--from", "chatgpt", "--dry-run"],
    "claude": ["import", "--from", "claude"],
    "affidavit-export": ["import"],
}


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", IMPORTS.values(), ids=IMPORTS.keys())
def test_a_fifo_is_refused_without_waiting_for_a_writer(
    home: Path, cli_vault: dict[str, str], fifo: Path, command: list[str]
) -> None:
    _refused(_hostile_run([*command, str(fifo)], home, cli_vault), "a FIFO", str(fifo))
    assert _stored(home, cli_vault) == 0


def test_pack_build_from_fifos_is_refused(home: Path, fifo: Path, tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    os.mkfifo(records)
    out = tmp_path / "pack"
    args = ["pack", "build", "--from-chatgpt", str(fifo), "--records", str(records)]
    _refused(_hostile_run([*args, "--out", str(out), "--title", "T"], home, {}), "a FIFO")
    assert not out.exists()


@pytest.mark.parametrize("command", IMPORTS.values(), ids=IMPORTS.keys())
def test_dev_zero_is_refused_not_read_forever(
    home: Path, cli_vault: dict[str, str], command: list[str]
) -> None:
    _refused(_hostile_run([*command, "/dev/zero"], home, cli_vault), "a character device")
    assert _stored(home, cli_vault) == 0


def _zip_bomb(path: Path, unpacked_mib: int) -> Path:
    """A small zip whose ``conversations.json`` unpacks to ``unpacked_mib`` MiB of valid JSON
    (an empty list padded with spaces): built here, about 1.4 MB for 300 MiB."""
    spaces = b" " * (1 << 20)
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("export/conversations.json", "w", force_zip64=True) as member,
    ):
        member.write(b"[")
        for _ in range(unpacked_mib):
            member.write(spaces)
        member.write(b"]")
    return path


def test_a_zip_bomb_is_refused_before_it_is_unpacked(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    bomb = _zip_bomb(tmp_path / "export.zip", 300)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    for fmt in ("chatgpt", "claude"):
        args = ["import", "--from", fmt, "--dry-run", str(bomb)]
        _refused(_hostile_run(args, home, cli_vault), "unpacks to", "MiB")


def test_json_nested_200000_levels_is_an_input_error(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    deep = tmp_path / "conversations.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    lines = tmp_path / "export.jsonl"
    lines.write_text('{"text": "Alice owns billing."}\n' + "[" * 200_000 + "]" * 200_000 + "\n")
    for command, path in (
        (IMPORTS["chatgpt"], deep),
        (IMPORTS["claude"], deep),
        (IMPORTS["compartment"], lines),
        (IMPORTS["affidavit-export"], lines),
    ):
        _refused(_hostile_run([*command, str(path)], home, cli_vault), "nested")
    assert _stored(home, cli_vault) == 0


def test_an_oversized_file_is_refused_from_its_size_alone(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    sparse = tmp_path / "notes.md"
    with sparse.open("wb") as handle:  # a hole: 2 GiB long, no disk used, never read
        handle.truncate(2 * 1024**3)
    for command in (IMPORTS["markdown"], IMPORTS["chatgpt"], IMPORTS["affidavit-export"]):
        _refused(_hostile_run([*command, str(sparse)], home, cli_vault), "MiB")
