"""A row rolled back by whoever administers the rows: a saved copy of a record row put back
after the record was forgotten (or shredded) and other writes followed.

The copy is genuine (sealed by the vault's own key, bound to its own id, seq and state), the
row count and the top sequence number still match the sealed anchor, so only the audit log
tells that this version is not the record's last: every read must consult it, on a fresh
open and while following the log, as ``audit verify`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import IntegrityError
from affidavit.vault import NewItem, Vault
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, raw_execute

ROW = "SELECT rid, seq, state, wkey, blob FROM {t}records WHERE rid = ?"
RESTORE = "UPDATE {t}records SET seq = ?, state = ?, wkey = ?, blob = ? WHERE rid = ?"


def _restore(vault_dir: Path, store: str | None, saved: tuple[object, ...]) -> None:
    rid, seq, state, wkey, blob = saved
    raw_execute(vault_dir, store, RESTORE, (seq, state, wkey, blob, rid))


def _remember_then_forget(vault: Vault, store: str | None, *, shred: bool) -> tuple[str, tuple]:
    """Store three facts, save the middle one's row as an administrator would, forget it."""
    items = vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(3)])
    victim = items[1].id
    ((saved),) = raw_execute(vault.path, store, ROW, (victim,))
    vault.forget(victim, shred=shred)
    return victim, tuple(saved)


@both_stores
@pytest.mark.parametrize("shred", [False, True], ids=["forgotten", "shredded"])
@pytest.mark.parametrize("order", ["restore-then-write", "write-then-restore"])
def test_a_restored_copy_of_a_gone_row_is_refused_by_a_fresh_client(
    vault: Vault, store: str | None, shred: bool, order: str
) -> None:
    victim, saved = _remember_then_forget(vault, store, shred=shred)
    if order == "write-then-restore":
        vault.put(NewItem(data={"text": "a later write", "source": "s"}))
        _restore(vault.path, store, saved)
    else:
        _restore(vault.path, store, saved)
        vault.put(NewItem(data={"text": "a later write", "source": "s"}))
    vault.close()
    with pytest.raises(IntegrityError, match=f"record {victim}") as caught:
        fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
        try:  # on an unfixed vault: the forgotten record is back, silently
            assert fresh.get(victim).data["text"] != "fact 1", "the forgotten record came back"
        finally:
            fresh.close()
    assert "\n" not in str(caught.value) and "audit" in str(caught.value)


@both_stores
@pytest.mark.parametrize("shred", [False, True], ids=["forgotten", "shredded"])
def test_a_running_client_refuses_a_tail_whose_forget_row_was_rolled_back(
    vault: Vault, store: str | None, shred: bool
) -> None:
    """A client opened before the forget follows the log: the forget's entry is there, its
    row is not (the older copy sits below the client's sequence number)."""
    items = vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(3)])
    victim = items[1].id
    ((saved),) = raw_execute(vault.path, store, ROW, (victim,))
    follower = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        vault.forget(victim, shred=shred)
        _restore(vault.path, store, tuple(saved))
        vault.put(NewItem(data={"text": "a later write", "source": "s"}))
        with pytest.raises(IntegrityError, match=f"record {victim}"):
            follower.refresh()
            assert victim not in {it.id for it in follower.items()}, "the forget was lost"
            follower.get(victim)  # on an unfixed vault this read still answers
    finally:
        follower.close()


@both_stores
def test_an_honest_log_still_opens_and_follows(vault: Vault, store: str | None) -> None:
    """The check refuses rollbacks only: updates, forgets, shreds, settings and key changes
    from two clients open and follow as before."""
    items = vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(4)])
    follower = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        vault.update(items[0].id, {"text": "fact 0 corrected", "source": "s"})
        vault.forget(items[1].id)
        vault.forget(items[2].id, shred=True)
        vault.forget(items[1].id, shred=True)  # a forgotten record shredded later
        vault.set_setting("grants", {"a": "rw"})
        vault.set_credentials(TEST_PASSPHRASE)
        follower.put(NewItem(data={"text": "from the follower", "source": "s"}))
        vault.refresh()
        follower.refresh()
        assert {it.id for it in follower.items()} == {it.id for it in vault.items()}
        assert follower.get(items[0].id).data["text"] == "fact 0 corrected"
    finally:
        follower.close()
    vault.close()
    fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert len(fresh) == 3 and fresh.verify_audit().ok
    finally:
        fresh.close()
