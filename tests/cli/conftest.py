"""Fixtures for the CLI tests: a real test vault and the environment that points at it."""

from __future__ import annotations

from tests.vault.conftest import cli_vault, make_vault, runtime_dir, vault, vault_dir  # noqa: F401
