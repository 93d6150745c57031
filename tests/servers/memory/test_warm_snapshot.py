"""A memory server's warm-up renews the vault's sealed snapshot when it lags (ADR 0210), so
the next start reads one file instead of decrypting every record."""

from __future__ import annotations

import pytest

from affidavit.recall import index_build
from affidavit.recall.memory import Memory
from affidavit.servers.memory import handlers
from affidavit.servers.memory.handlers import MemoryTools
from affidavit.vault import NewItem, Vault, snapshot
from tests.servers.memory.conftest import VaultSetup
from tests.vault.conftest import TEST_PASSPHRASE


def _warm(setup: VaultSetup) -> MemoryTools:
    tools = MemoryTools("tester", setup.path)
    tools.warm_up_in_background()
    assert tools._warming is not None
    tools._warming.join(timeout=120)
    return tools


def test_the_warm_up_seals_a_snapshot_the_next_start_opens_from(
    setup: VaultSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AFFIDAVIT_PASSPHRASE", TEST_PASSPHRASE)
    monkeypatch.setenv("AFFIDAVIT_EMBEDDER", "off")
    vault = Vault.open(setup.path, passphrase=TEST_PASSPHRASE)
    vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(5)])
    vault.close()
    first = _warm(setup)
    assert snapshot.path_in(setup.path).exists()
    assert first.memory().vault.snapshot_lag == 0
    first.memory().vault.close()

    monkeypatch.setattr(handlers, "SNAPSHOT_LAG", 2)
    memory = Memory(Vault.open(setup.path, passphrase=TEST_PASSPHRASE), embedder=None)
    memory.vault.put_many([NewItem(data={"text": f"later {i}", "source": "s"}) for i in range(2)])
    memory.vault.close()
    second = _warm(setup)
    assert second.memory().vault.snapshot_lag == 2  # within the lag allowed: kept as it is
    assert len(second.memory().index) == 7
    second.memory().vault.close()

    memory = Memory(Vault.open(setup.path, passphrase=TEST_PASSPHRASE), embedder=None)
    memory.vault.put(NewItem(data={"text": "one more", "source": "s"}))
    memory.vault.close()
    third = _warm(setup)
    assert third.memory().vault.snapshot_lag == 0  # three behind: sealed again
    third.memory().vault.close()


def test_a_snapshot_whose_index_image_is_of_no_use_is_sealed_again(
    setup: VaultSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade the snapshot's index image has another release's layout: the vault
    still opens from the snapshot (its position is current) but the index is built, and the
    warm-up seals a new image however few writes happened since, so the next start restores."""
    monkeypatch.setenv("AFFIDAVIT_PASSPHRASE", TEST_PASSPHRASE)
    monkeypatch.setenv("AFFIDAVIT_EMBEDDER", "off")
    vault = Vault.open(setup.path, passphrase=TEST_PASSPHRASE)
    vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(5)])
    assert vault.save_snapshot({index_build.SECTION: b"\0\0\0\x0d" + b'{"version":1}'})
    vault.close()

    upgraded = _warm(setup)
    assert upgraded.memory().vault.snapshot_lag == 0
    vectors = upgraded.memory().embedder is not None  # a model another test loaded stays
    upgraded.memory().vault.close()
    reopened = Vault.open(setup.path, passphrase=TEST_PASSPHRASE)
    try:
        section = reopened.take_section(index_build.SECTION)
        assert section is not None
        restored = index_build.restore(section, list(reopened.items("memory")), vectors)
        assert restored is not None and len(restored) == 5
    finally:
        reopened.close()
