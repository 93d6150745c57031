"""Verified calls as memories (``proxy run --remember``), below the proxy: a claim with its
receipt waits in review or is stored at once (``auto_store``), is never kept twice, and a
receipt whose log was edited since proves nothing at accept either. The queue never raises:
a locked vault is said once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import InputError, LockedError
from affidavit.intake import CallClaim, CallMemories, accept, candidates, remember_call
from affidavit.proxy import AuditLog
from affidavit.recall import AUTO_STORE_SETTING, Memory, ToolReceipt, trust_log


@pytest.fixture
def claim(vault, tmp_path: Path) -> CallClaim:
    """A verified commit's claim, and its receipt in a real proxy audit log that the vault
    trusts (as ``proxy run --remember`` registers it)."""
    log = tmp_path / "audit" / "audit.jsonl"
    writer = AuditLog(log, session="s1")
    writer.append({"kind": "call", "tool": "git_commit", "verdict": "verified", "claim": "c"})
    writer.close()
    trust_log(vault, log)
    receipt = ToolReceipt(str(log), json.loads(log.read_text())["hash"])
    return CallClaim("commit 138ce5c on main adds 'add notes'", "affidavit proxy", receipt)


def test_a_claim_waits_once_and_accepting_it_stores_its_proof_where_it_was_meant(
    vault, claim: CallClaim
) -> None:
    memory = Memory(vault, embedder=None)
    assert remember_call(memory, "team", claim) == "waiting"
    assert remember_call(memory, "team", claim) == "known"  # never queued twice
    [waiting] = candidates(memory)
    assert waiting.namespace == "team" and waiting.evidence == (claim.receipt.as_dict(),)
    stored = accept(memory, waiting.id)
    assert stored["namespace"] == "team"
    assert memory.get_memory(stored["id"])["evidence"]["status"] == "proven"
    assert remember_call(memory, "team", claim) == "known"  # remembered now


def test_an_edited_wording_is_not_what_was_proven(vault, claim: CallClaim) -> None:
    memory = Memory(vault, embedder=None)
    remember_call(memory, "team", claim)
    [waiting] = candidates(memory)
    stored = accept(memory, waiting.id, text="Production is safe to deploy")
    assert "evidence" not in memory.get_memory(stored["id"])


def test_a_receipt_whose_log_was_edited_refuses_the_accept_and_the_store(
    vault, claim: CallClaim
) -> None:
    memory = Memory(vault, embedder=None)
    remember_call(memory, "team", claim)
    log = Path(claim.receipt.log)
    log.write_text(log.read_text().replace('"s1"', '"s9"'))
    [waiting] = candidates(memory)
    with pytest.raises(InputError, match="no longer verifies"):
        accept(memory, waiting.id)
    assert [c.id for c in candidates(memory)] == [waiting.id]  # still waiting, nothing stored
    vault.set_setting(AUTO_STORE_SETTING, True)
    with pytest.raises(InputError, match="no longer verifies"):
        remember_call(memory, "team", claim)
    assert memory.recent() == []


def test_auto_store_stores_with_the_receipt_and_dedupes_by_the_store_rule(
    vault, claim: CallClaim
) -> None:
    memory = Memory(vault, embedder=None)
    vault.set_setting(AUTO_STORE_SETTING, True)
    assert remember_call(memory, "team", claim) == "stored"
    assert remember_call(memory, "team", claim) == "duplicate"
    [stored] = memory.recent()
    assert stored["namespace"] == "team" and stored["evidence"]["status"] == "proven"
    assert candidates(memory) == []


def test_the_queue_says_a_locked_vault_once_and_never_raises(claim: CallClaim) -> None:
    said: list[str] = []

    def locked() -> Memory:
        raise LockedError("the vault is locked", "run `affidavit unlock`")

    memories = CallMemories("team", Path(claim.receipt.log), locked, said.append)
    for _ in range(3):
        memories.put(claim)
    memories.close()
    assert len(said) == 1 and "locked" in said[0]
