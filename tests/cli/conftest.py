"""Fixtures for the CLI tests: a real test vault and the environment that points at it."""

from __future__ import annotations

from tests.vault.conftest import (  # noqa: F401
    cli_vault,
    make_vault,
    runtime_dir,
    store,
    vault,
    vault_dir,
)
