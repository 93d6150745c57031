"""Packs installed into the vault: built and signed by the real code, keyed by ssh-keygen,
searched next to memories, read-only, and dropped from recall when they change or are revoked."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from affidavit.core.errors import NotFoundError, PolicyError
from affidavit.packs import PackRefused, TrustOptions, sign_pack
from affidavit.recall import Claim, Memory, installed_packs
from tests.packs._build_fixtures import build_sample
from tests.packs.conftest import make_key

EXPIRES = datetime.now(UTC) + timedelta(days=30)


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, TrustOptions, Path]:
    """The sample pack built and signed (sequence 7); trust pinned to its key; a revoked file."""
    key = make_key(tmp_path / "keys")
    draft = build_sample(tmp_path / "draft")
    pack = tmp_path / "library"
    sign_pack(draft, key.private, EXPIRES, pack, sequence=7)
    revoked = tmp_path / "revoked"
    revoked.write_text("")
    trust = TrustOptions(trusted_fingerprints=(key.fingerprint,), revoked_keys=revoked)
    return pack, trust, revoked


def _memory(vault) -> Memory:
    return Memory(vault, embedder=None)


def test_install_seals_the_proof_and_search_finds_records_beside_memories(vault, signed):
    pack, trust, _ = signed
    done = installed_packs.install(vault, pack, trust)
    assert done.name == "library" and done.namespace == "pack:library"
    assert done.signature == "verified" and done.sequence == 7 and done.records > 3
    assert [p.name for p in installed_packs.installed(vault)] == ["library"]

    memory = _memory(vault)
    memory.store(Claim(text="The key box code of the library was told to Ada.", source="user"))
    found = memory.search("key box code")
    by_ns = {hit["namespace"] for hit in found["results"]}
    assert by_ns == {"pack:library", "user"}  # the caller's own namespace (ADR 161)
    hit = next(h for h in found["results"] if h["namespace"] == "pack:library")
    assert hit["id"].startswith("pack:library:M-")
    assert hit["pack"]["signature"] == "verified" and hit["pack"]["sequence"] == 7
    assert hit["pack"]["freshness"] == "fresh"
    assert hit["pack"]["fingerprint"] == done.fingerprint
    assert memory.get_memory(hit["id"])["text"] == hit["text"]
    assert "warnings" not in found
    only_mine = memory.search("key box code", namespaces=["user"])
    assert {h["namespace"] for h in only_mine["results"]} == {"user"}
    assert [p["name"] for p in memory.status()["packs"]] == ["library"]


def test_pack_records_are_read_only(vault, signed):
    pack, trust, _ = signed
    installed_packs.install(vault, pack, trust)
    memory = _memory(vault)
    hit = memory.search("key box code")["results"][0]
    with pytest.raises(PolicyError, match="read-only"):
        memory.store(Claim(text="The key box code is 0000.", source="me", namespace="pack:library"))
    with pytest.raises(PolicyError, match="read-only"):
        memory.forget(hit["id"])
    assert memory.get_memory(hit["id"])["id"] == hit["id"]


def test_a_pack_edited_after_install_drops_out_with_a_warning(vault, signed):
    pack, trust, _ = signed
    installed_packs.install(vault, pack, trust)
    memory = _memory(vault)
    assert memory.search("key box code")["results"]
    readme = pack / "README.md"
    readme.write_bytes(readme.read_bytes() + b"\nedited\n")
    found = memory.search("key box code")
    assert found["results"] == []
    assert "changed on disk" in found["warnings"][0]
    fresh = _memory(vault)  # a new process verifies again and refuses too
    again = fresh.search("key box code")
    assert again["results"] == [] and "library" in again["warnings"][0]
    assert fresh.status()["packs"][0]["in_recall"] is False


def test_a_touched_pack_drops_out_even_with_the_same_bytes(vault, signed):
    pack, trust, _ = signed
    installed_packs.install(vault, pack, trust)
    memory = _memory(vault)
    assert memory.search("key box code")["results"]
    os.utime(pack / "records.jsonl", ns=(1, 1))
    assert memory.search("key box code")["results"] == []


def test_a_key_revoked_after_install_drops_the_pack_out(vault, signed):
    pack, trust, revoked = signed
    done = installed_packs.install(vault, pack, trust)
    memory = _memory(vault)
    assert memory.search("key box code")["results"]
    revoked.write_text(f"{done.fingerprint}\n")
    found = memory.search("key box code")
    assert found["results"] == []
    assert "revoked" in found["warnings"][0]


def test_refused_pack_writes_nothing_and_uninstall(vault, signed, tmp_path):
    pack, trust, _revoked = signed
    other = make_key(tmp_path / "other-keys", "stranger")
    pinned_elsewhere = TrustOptions(trusted_fingerprints=(other.fingerprint,))
    with pytest.raises(PackRefused, match="not a pinned signer"):
        installed_packs.install(vault, pack, pinned_elsewhere)
    assert installed_packs.installed(vault) == []
    installed_packs.install(vault, pack, trust, name="lib")
    memory = _memory(vault)
    assert memory.search("key box code")["results"]
    installed_packs.uninstall(vault, "lib")
    assert memory.search("key box code")["results"] == []
    with pytest.raises(NotFoundError, match="no pack named 'lib'"):
        installed_packs.uninstall(vault, "lib")


def test_a_validly_signed_older_pack_swapped_in_is_refused_until_reinstalled(vault, tmp_path):
    """A rollback: the folder replaced by another pack the same key signed (it verifies)."""
    import shutil

    key = make_key(tmp_path / "k2", "second")
    pinned = TrustOptions(trusted_fingerprints=(key.fingerprint,))
    newer, older = tmp_path / "newer", tmp_path / "older"
    sign_pack(build_sample(tmp_path / "d2"), key.private, EXPIRES, newer, sequence=9)
    sign_pack(build_sample(tmp_path / "d3"), key.private, EXPIRES, older, sequence=8)
    installed_packs.install(vault, newer, pinned)
    shutil.rmtree(newer)
    shutil.copytree(older, newer)
    memory = _memory(vault)
    found = memory.search("key box code")
    assert (
        found["results"] == [] and "changed on disk since it was installed" in found["warnings"][0]
    )
    installed_packs.install(vault, newer, pinned)  # the user checks it and installs it again
    again = memory.search("key box code")
    assert again["results"] and "warnings" not in again
    assert again["results"][0]["pack"]["sequence"] == 8


def test_a_pack_folder_deleted_after_install_drops_out_in_every_process(vault, signed):
    import shutil

    pack, trust, _ = signed
    installed_packs.install(vault, pack, trust)
    running = _memory(vault)
    assert running.search("key box code")["results"]
    shutil.rmtree(pack)
    assert "changed on disk" in running.search("key box code")["warnings"][0]
    fresh = _memory(vault).search("key box code")
    assert fresh["results"] == [] and "pack library is out of recall" in fresh["warnings"][0]
