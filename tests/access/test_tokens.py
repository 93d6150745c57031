"""HTTP bearer tokens on a real vault: issued once, stored as a sealed hash, replaced, revoked;
and the commands that manage them."""

from __future__ import annotations

import json

import pytest

from affidavit.access import tokens
from affidavit.core.errors import InputError, NotFoundError
from affidavit.vault import Vault
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE


@pytest.fixture
def vault(setup):
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        yield v


def test_issue_names_the_caller_and_a_new_token_replaces_the_old(vault):
    first = tokens.issue(vault, "cursor")
    other = tokens.issue(vault, "bob")
    assert first != other and first.startswith(tokens.PREFIX) and len(first) > 40
    assert tokens.caller_for(vault, first) == "cursor"
    assert tokens.caller_for(vault, other) == "bob"
    second = tokens.issue(vault, "cursor")
    assert tokens.caller_for(vault, first) is None
    assert tokens.caller_for(vault, second) == "cursor"
    assert [info.caller for info in tokens.listing(vault)] == ["bob", "cursor"]


def test_revoke_and_bad_names(vault):
    token = tokens.issue(vault, "cursor")
    tokens.revoke(vault, "cursor")
    assert tokens.caller_for(vault, token) is None
    with pytest.raises(NotFoundError, match="has no token"):
        tokens.revoke(vault, "cursor")
    with pytest.raises(InputError):
        tokens.issue(vault, "no spaces allowed")


def test_only_the_hash_is_kept_and_it_survives_reopening(setup, vault):
    token = tokens.issue(vault, "cursor")
    stored = json.dumps(vault.get_setting(tokens.TOKENS_SETTING))
    assert token not in stored and tokens.digest(token) in stored
    vault.close()
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as again:
        assert tokens.caller_for(again, token) == "cursor"


def test_commands_issue_list_revoke_and_grant_still_grants(setup):
    env = setup.env()
    issued = run_cli(["grant", "token", "cursor", "--json"], setup.home, env=env)
    assert issued.returncode == 0, issued.stderr
    token = json.loads(issued.stdout)["token"]
    listed = run_cli(["token", "--list"], setup.home, env=env)
    assert "cursor (issued" in listed.stdout and token not in listed.stdout
    # a caller named "token" can still be granted with three arguments
    granted = run_cli(["grant", "token", "shared", "ro"], setup.home, env=env)
    assert granted.returncode == 0 and "token shared ro" in granted.stdout
    revoked = run_cli(["token", "--revoke", "cursor"], setup.home, env=env)
    assert revoked.returncode == 0, revoked.stderr
    again = run_cli(["token", "--revoke", "cursor"], setup.home, env=env)
    assert again.returncode != 0 and "has no token" in again.stderr
    assert "Traceback" not in again.stderr
    neither = run_cli(["token"], setup.home, env=env)
    assert neither.returncode != 0 and "pass CALLER, or --list" in neither.stderr
