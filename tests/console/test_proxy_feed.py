"""How the console reads audit entries: verdicts, approvals still waiting, pin changes.

The entries are written by the real AuditLog in the shapes the proxy writes them
(``proxy/audit_entries.py``); the browser tests cover the same through a real proxy.
"""

from __future__ import annotations

from affidavit.console.proxy_feed import CallFeed
from affidavit.proxy.audit import AuditLog


def call(tool: str, outcome: str, **fields):
    return {
        "kind": "call",
        "tool": tool,
        "backend": "srv",
        "arguments_sha256": "a1",
        "outcome": outcome,
        **fields,
    }


def test_each_entry_gets_the_verdict_the_table_shows(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl", session="s")
    for body in (
        call("write_file", "result", verdict="verified", verifier="filesystem", claim="wrote x"),
        call(
            "git_commit",
            "result",
            verdict="contradicted",
            evidence=[{"observed": "no object", "where": "repo"}],
        ),
        call("run", "forwarded", verdict="unchecked"),
        call("rm", "denied", policy={"action": "deny", "reason": "no"}),
        call("changed_tool", "refused", policy={"action": "refused"}),
        call("broken", "error", verdict=None),
        {
            "kind": "read",
            "uri": "repo://status",
            "backend": "srv",
            "outcome": "result",
            "verdict": "verified",
        },
        {"kind": "sampling", "policy": {"action": "deny", "limit": 3}},
    ):
        log.append(body)
    feed = CallFeed(log.path)
    feed.refresh()
    assert [(row.tool, row.verdict) for row in feed.after(0, "", "", "")] == [
        ("write_file", "verified"),
        ("git_commit", "contradicted"),
        ("run", "unchecked"),
        ("rm", "denied"),
        ("changed_tool", "denied"),
        ("broken", "error"),
        ("repo://status", "verified"),
        ("sampling/createMessage", "denied"),
    ]
    contradicted = feed.after(0, "", "", "contradicted")
    assert [row.evidence for row in contradicted] == [(("no object", "repo"),)]
    assert feed.after(2, "srv", "run", "") == [feed.after(0, "", "run", "")[0]]


def test_an_approval_waits_until_the_same_call_comes_back(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl", session="s")
    feed = CallFeed(log.path)
    log.append(call("deploy", "approval-asked", policy={"action": "require-approval"}))
    log.append({"kind": "pin-changed", "tool": "search", "pinned": "a" * 64, "seen": "b" * 64})
    feed.refresh()
    assert [row.tool for row in feed.waiting.values()] == ["deploy"]
    assert [entry["tool"] for entry in feed.pins] == ["search"]
    assert [row.tool for row in feed.after(0, "", "", "")] == ["deploy"]  # pins are not calls
    log.append(call("deploy", "result", verdict="unchecked"))
    feed.refresh()
    assert feed.waiting == {}
