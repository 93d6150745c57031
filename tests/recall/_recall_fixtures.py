"""Fixtures for the recall tests: a ``Memory`` over the fast test vault, with or without model.

The model is the process-wide one (``shared_embedder``), so it loads once per test session.
Import the fixtures into a test module with
``from tests.vault._recall_fixtures import memory, keyword_memory  # noqa: F401``.
"""

from __future__ import annotations

import pytest

from affidavit.recall import Claim
from affidavit.recall.embedder import shared_embedder
from affidavit.recall.memory import Memory
from affidavit.vault import Vault


@pytest.fixture
def memory(vault: Vault) -> Memory:
    """Recall with the real embedding model over an empty test vault."""
    embedder = shared_embedder()
    assert embedder is not None, "the embedding model packages must be installed for tests"
    return Memory(vault, embedder=embedder)


@pytest.fixture
def keyword_memory(vault: Vault) -> Memory:
    """Recall with no model at all (keyword channel only)."""
    return Memory(vault, embedder=None)


def store(m: Memory, text: str, **fields: object) -> str:
    """Store one memory with a default source; return its id."""
    fields.setdefault("source", "test")
    result = m.store(Claim(text=text, **fields))
    assert result["status"] == "stored", result
    return str(result["id"])
