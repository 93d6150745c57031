"""reindex, retag, atomize and settings on a real test vault (issue 18 item 5)."""

from __future__ import annotations

import pytest

from affidavit.core.errors import InputError, NotFoundError, UsageError
from affidavit.recall import Claim, Memory, maintenance
from affidavit.recall.memory import MODEL_SETTING, model_identity
from affidavit.vault import NewItem
from tests.recall import _recall_fixtures as fx

memory = fx.memory  # recall with the real model (tests/recall/_recall_fixtures.py)

LONG = (
    "The Lantern team met on Monday. Priya owns the staging database now. "
    "Backups move to 03:00 UTC."
)


def test_retag_renames_and_merges_in_one_batch(vault):
    m = Memory(vault, embedder=None)
    a = m.store(Claim(text="The CI runners live in Frankfurt.", source="x", tags=["infra"]))["id"]
    b = m.store(Claim(text="The pager rota changes weekly.", source="x", tags=["infra", "ops"]))[
        "id"
    ]
    c = m.store(Claim(text="Lunch is at noon.", source="x", tags=["food"]))["id"]
    seq = vault.seq
    done = maintenance.retag(m, "INFRA", "ops")
    assert done == {"old": "infra", "new": "ops", "retagged": sorted([a, b])}
    assert vault.get(a).data["tags"] == ["ops"] and vault.get(b).data["tags"] == ["ops"]
    assert vault.get(c).data["tags"] == ["food"]
    assert vault.seq == seq + 2  # one transaction, one new version per record changed
    assert [h["id"] for h in m.search("runners", tags=["ops"])["results"]] == [a]
    with pytest.raises(InputError, match="the same"):
        maintenance.retag(m, "ops", "OPS")


def test_atomize_splits_reviewed_claims_into_corrections(vault):
    vault.set_setting("max_memory_chars", 400)
    m = Memory(vault, embedder=None)
    original = m.store(Claim(text=LONG, source="meeting notes", tags=["lantern"]))["id"]
    plan = maintenance.plan_atomize(m, original)
    assert plan.pieces == (
        "The Lantern team met on Monday.",
        "Priya owns the staging database now.",
        "Backups move to 03:00 UTC.",
    )
    assert vault.get(original).data.get("superseded_by") is None  # planning writes nothing
    stored = maintenance.apply_atomize(m, plan)
    assert [s["status"] for s in stored] == ["stored"] * 3
    assert m.get_memory(original)["superseded_by"] == stored[0]["id"]
    hit = m.search("who owns the staging database")["results"][0]
    assert hit["text"] == "Priya owns the staging database now."
    assert hit["tags"] == ["lantern"] and "atomized from" in hit["source"]
    single = m.store(Claim(text="Backups are encrypted.", source="x"))["id"]
    with pytest.raises(InputError, match="one claim already"):
        maintenance.plan_atomize(m, single)
    with pytest.raises(NotFoundError):
        maintenance.plan_atomize(m, "nosuchid")


def test_split_claims_drops_headings_and_list_markers():
    text = "# Notes\n- Ada leads QA.\n- Bo ships on Fridays. Cy reviews.\n\n1. The VPN is wg0."
    assert maintenance.split_claims(text) == [
        "Ada leads QA.",
        "Bo ships on Fridays.",
        "Cy reviews.",
        "The VPN is wg0.",
    ]


def test_settings_list_get_set_and_unknown_keys(vault):
    m = Memory(vault, embedder=None)
    keys = [row["key"] for row in maintenance.list_settings(m)]
    assert keys == ["max_memory_chars", "auto_expire", "auto_store", "auto_lock_minutes"]
    assert maintenance.set_setting(m, "max_memory_chars", "300")["value"] == 300
    assert m.max_chars == 300
    with pytest.raises(InputError, match="whole number"):
        maintenance.set_setting(m, "max_memory_chars", "many")
    with pytest.raises(UsageError, match="unknown setting 'colour'") as err:
        maintenance.setting("colour")
    assert "max_memory_chars" in (err.value.hint or "")


def _expired(vault, text: str) -> str:
    """A memory whose expiry day has passed (written as the vault holds it: a store refuses)."""
    return vault.put(NewItem({"text": text, "source": "x", "expires": "2020-01-01"})).id


def test_auto_expire_off_keeps_expired_memories_until_expire(vault):
    m = Memory(vault, embedder=None)
    maintenance.set_setting(m, "auto_expire", "off")
    old = _expired(vault, "The door code is 1234.")
    m.store(Claim(text="The gate code is 5678.", source="x"))
    assert vault.get(old).id == old  # not forgotten by the write
    with pytest.raises(NotFoundError, match="expired"):
        m.get_memory(old)  # but hidden from reads
    assert m.expire() == {"expired": [old]}
    maintenance.set_setting(m, "auto_expire", "on")
    again = _expired(vault, "The shed code is 42.")
    m.store(Claim(text="The bike lock code is 99.", source="x"))
    with pytest.raises(NotFoundError):
        vault.get(again)


def test_reindex_without_a_model_rebuilds_and_refuses_re_embed(vault):
    m = Memory(vault, embedder=None)
    m.store(Claim(text="The kiln fires on Thursdays.", source="x"))
    done = maintenance.reindex(m)
    assert done == {"re_embedded": 0, "model": None, "previous_model": None, "indexed": 1}
    with pytest.raises(UsageError, match="--re-embed needs the embedding model"):
        maintenance.reindex(m, re_embed=True)
    assert vault.get_setting(MODEL_SETTING) is None


def test_the_model_is_recorded_and_a_changed_model_means_re_embedding(memory):
    vault = memory.vault
    kiln = memory.store(Claim(text="The kiln fires on Thursdays.", source="x"))["id"]
    memory.store(Claim(text="The glaze store is in the basement.", source="x"))
    recorded = vault.get_setting(MODEL_SETTING)
    assert recorded == model_identity()
    unchanged = maintenance.reindex(memory)
    assert unchanged["re_embedded"] == 0 and unchanged["indexed"] == 2

    # The vault says its vectors came from another model, and one vector is wrong for it.
    vault.set_setting(MODEL_SETTING, {"id": "an-older-model", "sha256": "0" * 64})
    vault.update(kiln, dict(vault.get(kiln).data), vector=None)
    assert vault.get(kiln).vector is None
    seq = vault.seq
    done = maintenance.reindex(memory, progress=lambda d, t: None)
    assert done["re_embedded"] == 2 and done["previous_model"]["id"] == "an-older-model"
    assert vault.get(kiln).vector is not None and vault.seq == seq + 3  # 2 records + setting
    assert vault.get_setting(MODEL_SETTING) == recorded
    assert memory.search("when is pottery fired")["results"][0]["id"] == kiln
    forced = maintenance.reindex(memory, re_embed=True)
    assert forced["re_embedded"] == 2
