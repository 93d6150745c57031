"""The vault API on a real SQLite file: store, read, update, forget, settings, batches."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from affidavit.core.errors import ConflictError, InputError, LockedError, NotFoundError
from affidavit.vault import DB_NAME, NewItem, Vault
from tests.vault.conftest import TEST_PASSPHRASE


def memory(text: str, **extra: object) -> NewItem:
    return NewItem(data={"text": text, "source": "test", **extra})


def reopen(v: Vault) -> Vault:
    path = v.path
    v.close()
    return Vault.open(path, passphrase=TEST_PASSPHRASE)


def test_put_get_roundtrip_survives_reopen(vault: Vault) -> None:
    vector = bytes(range(256)) * 6
    item = vault.put(
        NewItem(
            data={"text": "the build runs on port 8080", "source": "chat", "tags": ["ci"]},
            namespace="work",
            vector=vector,
        )
    )
    assert item.kind == "memory" and item.namespace == "work" and item.seq == 1
    assert item.saved_at.endswith("Z")
    again = reopen(vault)
    try:
        got = again.get(item.id)
        assert got == item
        assert got.vector == vector
    finally:
        again.close()


def test_ids_are_random_not_derived_from_content(vault: Vault) -> None:
    a = vault.put(memory("same text"))
    b = vault.put(memory("same text"))
    assert a.id != b.id
    assert len(a.id) == 20 and int(a.id, 16) >= 0


def test_put_many_is_one_transaction_and_validates_everything_first(vault: Vault) -> None:
    vault.put(memory("already here"))
    batch = [memory("one"), memory("two"), NewItem(data={"text": "no source"}), memory("four")]
    with pytest.raises(InputError, match=r"item 2: a memory needs a non-empty 'source'"):
        vault.put_many(batch)
    assert [it.data["text"] for it in vault.items()] == ["already here"]
    stored = vault.put_many(batch[:2] + batch[3:])
    assert [it.seq for it in stored] == [2, 3, 4]
    assert vault.verify_audit().entries == 1 + 4  # init + one entry per stored record


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (NewItem(data={"text": "x", "source": "s"}, kind="Bad Kind"), "kind"),
        (NewItem(data={"text": "x", "source": "s"}, namespace="no spaces"), "namespace"),
        (NewItem(data={"text": "", "source": "s"}), "'text'"),
        (NewItem(data={"text": "x", "source": "s", "tags": "ci"}), "tags"),
        (NewItem(data={"text": "x", "source": "s", "n": float("nan")}), "not plain JSON"),
        (NewItem(data={"text": "x" * (1 << 20), "source": "s"}), "limit"),
        (NewItem(data={"text": "x", "source": "s"}, vector="not bytes"), "vector"),  # type: ignore[arg-type]
        (NewItem(data={"text": "x", "source": "s"}, id="bad id!"), "id"),
        (NewItem(data={"text": "x", "source": "s"}, id="a1", saved_at="yesterday"), "saved_at"),
    ],
)
def test_bad_items_are_refused_with_one_clear_line(
    vault: Vault, item: NewItem, message: str
) -> None:
    with pytest.raises(InputError, match=message) as err:
        vault.put(item)
    assert "\n" not in str(err.value)
    assert len(vault) == 0


def test_other_kinds_need_no_text(vault: Vault) -> None:
    rel = vault.put(
        NewItem(data={"subject": "a", "predicate": "uses", "object": "b"}, kind="relation")
    )
    assert [it.id for it in vault.items(kind="relation")] == [rel.id]
    assert list(vault.items(kind="memory")) == []


def test_update_makes_a_new_sealed_version(vault: Vault) -> None:
    item = vault.put(
        memory("v1", tags=["a"]),
    )
    updated = vault.update(item.id, {"text": "v1", "source": "test", "superseded_by": "x"})
    assert updated.seq > item.seq and updated.saved_at == item.saved_at
    assert vault.get(item.id).data["superseded_by"] == "x"
    again = reopen(vault)
    try:
        assert again.get(item.id).data["superseded_by"] == "x"
        assert again.verify_audit().ops["update"] == 1
    finally:
        again.close()


def test_update_keeps_or_replaces_the_vector(vault: Vault) -> None:
    item = vault.put(NewItem(data={"text": "t", "source": "s"}, vector=b"\x01" * 8))
    assert vault.update(item.id, {"text": "t2", "source": "s"}).vector == b"\x01" * 8
    assert vault.update(item.id, {"text": "t3", "source": "s"}, vector=None).vector is None


def test_update_of_unknown_id_is_not_found(vault: Vault) -> None:
    with pytest.raises(NotFoundError):
        vault.update("0" * 20, {"text": "t", "source": "s"})


def test_update_many_is_one_transaction_all_or_nothing(vault: Vault) -> None:
    a, b = vault.put_many([memory("a"), memory("b")])
    seq = vault.seq
    with pytest.raises(NotFoundError):
        vault.update_many(
            {
                a.id: ({"text": "a2", "source": "s"}, a.vector),
                "0" * 20: ({"text": "x", "source": "s"}, None),
            }
        )
    assert vault.get(a.id).data["text"] == "a" and vault.seq == seq  # nothing written
    done = vault.update_many(
        {a.id: ({"text": "a2", "source": "s"}, None), b.id: ({"text": "b2", "source": "s"}, None)}
    )
    assert [it.data["text"] for it in done] == ["a2", "b2"] and vault.seq == seq + 2
    assert vault.update_many({}) == []


def test_forget_hides_and_shred_destroys(vault: Vault) -> None:
    keep, hide, shred = vault.put_many([memory("keep"), memory("hide"), memory("shred")])
    vault.forget(hide.id)
    vault.forget(shred.id, shred=True)
    with pytest.raises(NotFoundError, match="forgotten"):
        vault.get(hide.id)
    with pytest.raises(NotFoundError, match="shredded"):
        vault.get(shred.id)
    with pytest.raises(NotFoundError):
        vault.forget(hide.id)
    conn = sqlite3.connect(vault.path / DB_NAME)
    rows = dict(conn.execute("SELECT rid, blob IS NULL FROM records").fetchall())
    conn.close()
    assert rows == {keep.id: 0, hide.id: 0, shred.id: 1}
    vault.forget(hide.id, shred=True)  # a forgotten record can still be shredded
    again = reopen(vault)
    try:
        assert [it.id for it in again.items()] == [keep.id]
        status = again.status()
        assert (status["forgotten"], status["shredded"]) == (0, 2)
        assert again.verify_audit().ok
    finally:
        again.close()


def test_settings_are_sealed_and_follow_the_log(vault: Vault) -> None:
    vault.set_setting("grants", {"agent-b": {"work": "ro"}})
    assert vault.get_setting("grants") == {"agent-b": {"work": "ro"}}
    assert vault.get_setting("missing", 7) == 7
    other = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        vault.set_setting("grants", {"agent-b": {"work": "rw"}})
        assert other.refresh() == []  # settings are not public changes
        assert other.get_setting("grants") == {"agent-b": {"work": "rw"}}
        assert len(other) == 0 and list(other.items()) == []
    finally:
        other.close()
    data = (vault.path / DB_NAME).read_bytes()
    assert b"grants" not in data and b"agent-b" not in data


def test_refresh_is_incremental_and_reports_foreign_changes(vault: Vault) -> None:
    other = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert other.refresh() == []
        a = vault.put(memory("from the first process"))
        b = vault.put(memory("to be forgotten"))
        vault.forget(b.id)
        changes = other.refresh()  # row states, not history: b's put was overtaken
        assert [(c.op, c.id) for c in changes] == [("put", a.id), ("forget", b.id)]
        assert other.get(a.id) == a
        assert other.refresh() == []
        # a write absorbs foreign rows first; they still come back from the next refresh
        c = vault.put(memory("third"))
        mine = other.put(memory("mine"))
        assert [ch.id for ch in other.refresh()] == [c.id]
        assert other.seq == mine.seq == vault.seq + 1
    finally:
        other.close()


def test_listeners_see_own_and_foreign_changes(vault: Vault) -> None:
    other = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    seen: list[tuple[str, str]] = []
    other.add_listener(lambda ch: seen.append((ch.op, ch.id)))
    try:
        a = vault.put(memory("foreign"))
        b = other.put(memory("own"))
        other.forget(b.id, shred=True)
        assert seen == [("put", a.id), ("put", b.id), ("shred", b.id)]
    finally:
        other.close()


def test_import_is_idempotent_by_id(vault: Vault) -> None:
    rows = [
        NewItem(
            data={"text": f"r{i}", "source": "s"}, id=f"imp-{i}", saved_at="2026-01-02T03:04:05Z"
        )
        for i in range(3)
    ]
    assert vault.import_items(rows) == {"imported": 3, "already_present": 0, "kept_forgotten": 0}
    vault.forget("imp-1")
    assert vault.import_items(rows) == {"imported": 0, "already_present": 2, "kept_forgotten": 1}
    assert vault.get("imp-0").saved_at == "2026-01-02T03:04:05Z"
    clash = [
        NewItem(
            data={"text": "different", "source": "s"}, id="imp-2", saved_at="2026-01-02T03:04:05Z"
        ),
        memory("new one"),
    ]
    before = vault.seq
    with pytest.raises(ConflictError, match="imp-2"):
        vault.put_many(clash)
    assert vault.seq == before and len(vault) == 2


def test_duplicate_ids_in_one_batch_are_refused(vault: Vault) -> None:
    rows = [NewItem(data={"text": "a", "source": "s"}, id="same") for _ in range(2)]
    with pytest.raises(InputError, match="twice"):
        vault.put_many(rows)


def _digest_files(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def test_reads_never_write(vault: Vault) -> None:
    items = vault.put_many([memory(f"m{i}") for i in range(20)])
    vault.set_setting("x", 1)
    reader = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        before = _digest_files(vault.path)
        audit_before = reader.verify_audit().entries
        for it in items:
            reader.get(it.id)
        list(reader.items())
        reader.status()
        reader.get_setting("x")
        reader.refresh()
        reader.verify_audit()
        assert _digest_files(vault.path) == before
        assert reader.verify_audit().entries == audit_before
    finally:
        reader.close()


def test_create_refuses_an_existing_vault(vault: Vault) -> None:
    with pytest.raises(ConflictError, match="already exists"):
        Vault.create(vault.path, "another")


def test_open_without_a_vault_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no vault at"):
        Vault.open(tmp_path / "nothing", passphrase="x")


def test_closed_handle_refuses_use(vault: Vault) -> None:
    vault.close()
    with pytest.raises(LockedError):
        vault.get("x")
    with pytest.raises(LockedError):
        vault.put(memory("x"))


def test_files_are_private(vault: Vault) -> None:
    vault.put(memory("x"))
    assert vault.path.stat().st_mode & 0o777 == 0o700
    for p in vault.path.iterdir():
        assert p.stat().st_mode & 0o077 == 0, p.name


def test_create_refuses_a_directory_holding_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    tmp_path.chmod(0o755)
    with pytest.raises(ConflictError, match="not empty"):
        Vault.create(tmp_path, "pw")
    assert tmp_path.stat().st_mode & 0o777 == 0o755 and not (tmp_path / DB_NAME).exists()


def test_import_error_names_the_row_even_after_a_skipped_forgotten_one(vault: Vault) -> None:
    rows = [
        NewItem(
            data={"text": f"r{i}", "source": "s"}, id=f"imp-{i}", saved_at="2026-01-02T03:04:05Z"
        )
        for i in range(3)
    ]
    vault.import_items(rows)
    vault.forget("imp-0")
    bad = NewItem(data={"text": "no source"}, id="imp-9", saved_at="2026-01-02T03:04:05Z")
    with pytest.raises(InputError, match="item 3: "):
        vault.import_items([*rows, bad])
    seen: list[tuple[int, int]] = []
    counts = vault.import_items(
        rows[1:] * 1
        + [NewItem(data={"text": f"n{i}", "source": "s"}, id=f"new-{i}") for i in range(2500)],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert counts == {"imported": 2500, "already_present": 2, "kept_forgotten": 0}
    assert seen[0] == (1000, 2502) and seen[-1] == (2502, 2502)
