"""Every entry a real proxy writes is an :data:`AuditEntry`: no field the contract does not name.

The audit log is what ``proxy replay`` and ``affidavit://audit`` read; a field added in one
place and not declared in the contract is a field no reader knows about (issue 15, item 2).
The session below makes entries of each kind a proxy writes in a normal run: an allowed call
with its verdict, a call the policy denies, and a line the proxy refuses.
"""

from __future__ import annotations

import typing
from pathlib import Path

from affidavit.proxy import AuditEntry, read_entries
from tests.proxy.conftest import VERIFIER

DENY_SECRETS = 'rules:\n  - tool: "*"\n    arguments: {path: "secrets/*"}\n    action: deny\n'


def test_every_entry_of_a_session_is_an_audit_entry(raw_proxy, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DENY_SECRETS)
    proxy = raw_proxy("--policy", str(policy), "--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize()
    target = tmp_path / "ok.txt"
    assert proxy.call(1, "write_file", {"path": str(target), "content": "x"})["result"]
    denied = proxy.call(2, "write_file", {"path": "secrets/key", "content": "x"})
    assert denied["result"]["isError"] is True
    proxy.send(b'{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/call"}\n')
    assert proxy.recv()["id"] == 3
    proxy.close()

    entries = read_entries(tmp_path / "audit.jsonl")
    declared = set(AuditEntry.__annotations__)
    kinds = set(typing.get_args(AuditEntry.__annotations__["kind"]))
    assert {e["kind"] for e in entries} == {"call", "refused"}
    for entry in entries:
        assert set(entry) <= declared, set(entry) - declared
        assert entry["kind"] in kinds
    outcomes = {e.get("outcome") for e in entries if e["kind"] == "call"}
    assert {"denied"} < outcomes  # the denied call, and the allowed one with its own outcome
