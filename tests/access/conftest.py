"""Fixtures for the access tests: the real test vault of tests/vault/conftest.py, and the
memory server tests' vault setup."""

from __future__ import annotations

from tests.servers.memory.conftest import setup  # noqa: F401
from tests.vault.conftest import (  # noqa: F401
    cli_vault,
    make_vault,
    runtime_dir,
    store,
    vault,
    vault_dir,
)
