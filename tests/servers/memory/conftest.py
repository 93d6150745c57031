"""Fixtures for the memory server tests: a real test vault and the env that points at it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from affidavit.servers.memory.catalogue import catalogue
from affidavit.vault.session_dir import RUNTIME_ENV
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, vault_env

# Keyword-only recall (no embedding model): lighter servers where embeddings do not matter.
LIGHT = {"AFFIDAVIT_EMBEDDER": "off"}
#: The tools a server lists while the user has not allowed memory_unlock (the default).
OFFERED = {spec.name for spec in catalogue()} - {"memory_unlock"}


@dataclass
class VaultSetup:
    """A vault on disk plus the environments for servers that use it."""

    path: Path
    runtime: Path
    home: Path

    def env(self, *, passphrase: str | None = TEST_PASSPHRASE, **extra: str) -> dict[str, str]:
        """Server/CLI environment; ``passphrase=None`` relies on an unlock session instead."""
        return {**vault_env(self.path, self.runtime, passphrase=passphrase), **extra}


@pytest.fixture
def setup(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> VaultSetup:
    """An empty test vault (cheap KDF), closed again, with a private runtime dir."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv(RUNTIME_ENV, str(runtime))
    create_test_vault(tmp_path / "vault").close()
    return VaultSetup(tmp_path / "vault", runtime, home)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    """Run one async scenario to the end (each test owns its event loop)."""
    asyncio.run(scenario())


def body(result: Any) -> dict[str, Any]:
    """A successful tool result's structured content, checked against its text twin."""
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    """An ``isError`` result's one line."""
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return str(text)
