"""Lines built to mean one thing to the proxy and another to the peer behind it.

A key given twice is read as its first value by some JSON parsers and as its last by others;
a reply can come wrapped in an array or twice for one id; the host can leave mid-call. None of
these may carry a call past policy, verification or the audit log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.proxy.conftest import VERIFIER, backend_lines, text_of, tool_calls

DENY_ECHO = "rules:\n  - tool: echo\n    action: deny\n"


def audit_entries(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["body"] for line in path.read_text().splitlines()]


def behind_policy(raw_proxy, tmp_path: Path, text: str):
    """The proxy with a policy file holding ``text``, its handshake done."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    proxy = raw_proxy("--policy", str(policy))
    proxy.initialize()
    return proxy


def test_a_second_method_key_cannot_smuggle_a_call_past_policy(raw_proxy, backend_log, tmp_path):
    """The proxy must not read ``ping`` where the backend reads ``tools/call``."""
    proxy = behind_policy(raw_proxy, tmp_path, DENY_ECHO)
    proxy.send(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"smuggled":true}}}\n'
    )
    reply = proxy.recv()
    assert reply["id"] == 1 and reply["error"]["code"] == -32600
    assert "'method' is given twice" in reply["error"]["message"]
    assert proxy.request(2, "ping")["id"] == 2
    proxy.close()
    assert tool_calls(backend_log, "echo") == 0
    assert b"smuggled" not in b"".join(backend_lines(backend_log))
    refused = [e for e in audit_entries(tmp_path) if e["kind"] == "refused"]
    assert [(e["from"], e["reason"]) for e in refused] == [
        ("host", "the key 'method' is given twice")
    ]


def test_a_second_id_cannot_route_a_lie_around_verification(raw_proxy, backend_log, tmp_path):
    """With the proxy waiting on id 1 and the backend answering id 2, the lie went unjudged."""
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize()
    target = json.dumps(str(tmp_path / "lie.txt")).encode()
    proxy.send(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lie_write",'
        b'"arguments":{"path":' + target + b',"content":"x"}},"id":2}\n'
    )
    reply = proxy.recv()
    assert reply["id"] is None and "'id' is given twice" in reply["error"]["message"]
    assert proxy.request(3, "ping")["id"] == 3
    assert tool_calls(backend_log, "lie_write") == 0


def test_a_repeated_argument_is_refused_before_policy_reads_either(
    raw_proxy, backend_log, tmp_path
):
    """A first-wins backend would write ``secrets/x`` where the proxy judged ``public/x``."""
    deny = 'rules:\n  - tool: "*"\n    arguments: {path: "secrets/*"}\n    action: deny\n'
    proxy = behind_policy(raw_proxy, tmp_path, deny)
    proxy.send(
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"path":"secrets/x","path":"public/x"}}}\n'
    )
    reply = proxy.recv()
    assert reply["id"] == 4 and "'path' is given twice" in reply["error"]["message"]
    assert tool_calls(backend_log, "echo") == 0


def test_a_reply_with_a_repeated_key_reaches_the_host_as_an_error(raw_proxy, tmp_path):
    """``isError`` false then true: the verifier saw a failure, a first-wins host a success."""
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize()
    args = {"path": str(tmp_path / "d.txt"), "content": "d", "reply": "dup_key"}
    reply = proxy.call(5, "lie_write", args)
    assert reply["id"] == 5 and "'isError' is given twice" in reply["error"]["message"]
    proxy.close()
    call = next(e for e in audit_entries(tmp_path) if e["kind"] == "call")
    assert call["outcome"] == "refused-reply"


def test_a_reply_wrapped_in_an_array_is_still_verified(raw_proxy, tmp_path):
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize()
    args = {"path": str(tmp_path / "b.txt"), "content": "b", "reply": "batch"}
    proxy.begin_call(6, "lie_write", args)
    reply = proxy.recv_raw()
    assert reply is not None and reply.startswith(b"{"), reply
    answer = json.loads(reply)
    assert answer["id"] == 6 and answer["result"]["isError"] is True
    assert "contradicted" in text_of(answer)
    proxy.close()
    call = next(e for e in audit_entries(tmp_path) if e["kind"] == "call")
    assert call["verdict"] == "contradicted"


def test_a_second_reply_for_one_id_is_dropped_not_relayed(raw_proxy, tmp_path):
    """The unjudged second answer used to reach the host before the verified first one."""
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path), "--receipts")
    proxy.initialize()
    args = {"path": str(tmp_path / "t.txt"), "content": "t", "reply": "twice"}
    first = proxy.call(7, "write_file", args)
    assert first["result"]["_meta"]["affidavit/receipt"]["verdict"] == "verified"
    assert proxy.request(8, "ping")["id"] == 8  # nothing else came for id 7
    assert proxy.saw("dropped a reply from the backend")
    proxy.close()
    dropped = [e for e in audit_entries(tmp_path) if e["kind"] == "refused"]
    assert [(e["from"], e["id"]) for e in dropped] == [("backend", 7)]
    assert "unjudged second body" not in json.dumps(dropped)


def test_a_call_the_backend_ran_is_audited_when_the_host_leaves_first(raw_proxy, tmp_path):
    counter = tmp_path / "counter"
    proxy = raw_proxy(
        "--verifier", VERIFIER, "--root", str(tmp_path), env={"SLOW_VERIFY_SECONDS": "1"}
    )
    proxy.initialize()
    proxy.begin_call(9, "count", {"path": str(counter), "delay": 1})
    assert proxy.close() == 0  # the host is gone while the backend still works on the call
    assert counter.read_text() == "1"  # the backend ran it
    calls = [e for e in audit_entries(tmp_path) if e["kind"] == "call"]
    assert len(calls) == 1 and calls[0]["tool"] == "count"
    assert calls[0]["verdict"] == "verified"
