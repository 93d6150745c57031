"""Fixtures for the crypto tests: real ``ssh-keygen`` keys (tests/packs/conftest.py) and a real
test vault for the key slots (tests/vault/conftest.py)."""

from __future__ import annotations

from tests.packs.conftest import keygen, ssh_key  # noqa: F401
from tests.vault.conftest import make_vault, runtime_dir, store, vault, vault_dir  # noqa: F401
