"""Fixtures for the CLI tests: a real test vault and the environment that points at it, and
the memory server tests' vault setup (for tests that run a command beside a server)."""

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
