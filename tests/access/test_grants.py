"""Grant logic on a real vault: defaults, overrides, ``*``, ``none``, sealed storage."""

from __future__ import annotations

import pytest

from affidavit import access as acl
from affidavit.access import unlock_gate
from affidavit.core.errors import InputError, PolicyError
from affidavit.vault import Vault
from tests.vault.conftest import TEST_PASSPHRASE


@pytest.fixture
def vault(setup):
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        yield v


def test_defaults(vault):
    grants = acl.Grants.load(vault)
    assert grants.mode("user", "anything") == "rw"
    assert grants.mode("cursor", "cursor") == "rw"
    assert grants.mode("cursor", "user") == "ro"
    assert not grants.hides_any("cursor")
    grants.require_write("cursor", "cursor")
    with pytest.raises(PolicyError, match="affidavit grant cursor user rw"):
        grants.require_write("cursor", "user")


def test_exact_grant_beats_star_beats_default_and_none_hides(vault):
    acl.grant(vault, "bot", "*", "none")
    acl.grant(vault, "bot", "shared", "ro")
    acl.grant(vault, "bot", "bot", "rw")
    grants = acl.Grants.load(vault)
    assert grants.mode("bot", "shared") == "ro"
    assert grants.mode("bot", "user") == "none"
    assert grants.mode("bot", "bot") == "rw"
    assert grants.hides_any("bot")
    assert grants.readable("bot", ["user", "shared", "bot", "other"]) == ["bot", "shared"]
    with pytest.raises(PolicyError, match="no access"):
        grants.require_read("bot", "user")
    assert acl.Grants.load(vault).mode("user", "shared") == "rw"  # others unaffected


@pytest.mark.parametrize(
    ("caller", "namespace", "mode"),
    [("bot", "user", "write"), ("../x", "user", "ro"), ("bot", "a b", "ro"), ("", "user", "ro")],
)
def test_bad_grants_are_refused(vault, caller, namespace, mode):
    with pytest.raises(InputError):
        acl.grant(vault, caller, namespace, mode)
    assert acl.Grants.load(vault).table == {}


def test_grants_and_the_unlock_switch_survive_reopening(setup, vault):
    acl.grant(vault, "bot", "user", "ro")
    unlock_gate.set_unlock_tool(vault, True)
    vault.close()
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as again:
        assert acl.Grants.load(again).table == {"bot": {"user": "ro"}}
        assert unlock_gate.unlock_tool_enabled(again) is True
        unlock_gate.set_unlock_tool(again, False)
        assert unlock_gate.unlock_tool_enabled(again) is False
