"""``affidavit grant`` and ``affidavit unlock-tool`` as a user runs them."""

from __future__ import annotations

from affidavit import access as acl
from affidavit.access import unlock_gate
from affidavit.vault import Vault
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE


def test_unlock_tool_switch_round_trip(setup):
    env = setup.env()
    assert "disabled" in run_cli(["unlock-tool", "status"], setup.home, env=env).stdout
    assert "enabled" in run_cli(["unlock-tool", "enable"], setup.home, env=env).stdout
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        assert unlock_gate.unlock_tool_enabled(v) is True
    assert "disabled" in run_cli(["unlock-tool", "disable"], setup.home, env=env).stdout
    bad = run_cli(["unlock-tool", "maybe"], setup.home, env=env)
    assert bad.returncode == 2 and "enable, disable or status" in bad.stderr


def test_a_locked_vault_is_one_line_telling_to_unlock(setup):
    for args in (["grant", "bot", "user", "ro"], ["unlock-tool", "enable"]):
        done = run_cli(args, setup.home, env=setup.env(passphrase=None))
        assert done.returncode == 6, done.stderr
        assert done.stderr.count("\n") == 1 and "affidavit unlock" in done.stderr
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        assert acl.Grants.load(v).table == {} and not unlock_gate.unlock_tool_enabled(v)


def test_grant_list_without_grants_explains_the_defaults(setup):
    done = run_cli(["grant", "--list"], setup.home, env=setup.env())
    assert done.returncode == 0, done.stderr
    assert "defaults apply" in done.stdout
    missing = run_cli(["grant", "bot"], setup.home, env=setup.env())
    assert missing.returncode == 2 and "CALLER NAMESPACE" in missing.stderr
