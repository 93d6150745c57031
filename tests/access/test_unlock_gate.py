"""The memory_unlock gate file: the mirrored switch, the backoff schedule, damage and symlinks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.access import unlock_gate
from affidavit.access.unlock_gate import FIRST_PAUSE_S, FREE_TRIES, GATE_NAME, MAX_PAUSE_S, Gate
from affidavit.vault import Vault


@pytest.mark.parametrize(
    ("failures", "pause"),
    [
        (0, 0.0),
        (FREE_TRIES - 1, 0.0),
        (FREE_TRIES, FIRST_PAUSE_S),
        (FREE_TRIES + 1, 2 * FIRST_PAUSE_S),
        (FREE_TRIES + 3, 8 * FIRST_PAUSE_S),
        (FREE_TRIES + 40, MAX_PAUSE_S),
    ],
)
def test_the_pause_doubles_after_the_free_tries_up_to_the_cap(failures: int, pause: float) -> None:
    gate = Gate(True, failures, last_failure=1000.0)
    assert gate.pause_left(1000.0) == pause
    assert gate.pause_left(1000.0 + pause) == 0.0


def test_setting_the_switch_mirrors_it_and_the_count_survives(vault: Vault) -> None:
    assert unlock_gate.read(vault.path) == Gate()
    unlock_gate.set_unlock_tool(vault, True)
    assert unlock_gate.read(vault.path).enabled is True
    for _ in range(4):
        unlock_gate.record(vault.path, ok=False)
    unlock_gate.set_unlock_tool(vault, False)
    gate = unlock_gate.read(vault.path)
    assert (gate.enabled, gate.failures) == (False, 4)
    unlock_gate.record(vault.path, ok=True)
    assert unlock_gate.read(vault.path) == Gate(False)
    assert (vault.path / GATE_NAME).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "damage",
    [b"", b"{", b'{"enabled": "yes", "failures": 0, "last_failure": 0}', b"[1, 2]"],
)
def test_a_damaged_gate_reads_as_disabled(vault: Vault, damage: bytes) -> None:
    unlock_gate.set_unlock_tool(vault, True)
    (vault.path / GATE_NAME).write_bytes(damage)
    assert unlock_gate.read(vault.path).enabled is False


def test_a_symlink_in_place_of_the_gate_is_not_followed(vault: Vault, tmp_path: Path) -> None:
    elsewhere = tmp_path / "enabled.json"
    elsewhere.write_text(json.dumps({"enabled": True, "failures": 0, "last_failure": 0}))
    (vault.path / GATE_NAME).symlink_to(elsewhere)
    assert unlock_gate.read(vault.path).enabled is False
    with pytest.raises(OSError):
        unlock_gate.record(vault.path, ok=False)
    assert json.loads(elsewhere.read_text())["failures"] == 0
