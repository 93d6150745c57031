"""Roots: from --root and from a roots-capable host; an empty host answer keeps --root."""

from __future__ import annotations

from affidavit.proxy.roots import Roots, root_from_uri
from tests.proxy.conftest import VERIFIER


def test_root_uris_and_union():
    assert str(root_from_uri("file:///tmp/a%20b")) == "/tmp/a b"
    assert root_from_uri("https://example.invalid/x") is None
    roots = Roots(configured=(root_from_uri("file:///tmp"),))
    roots.update_from_host({"roots": [{"uri": "file:///"}, {"uri": 7}, "junk"]})
    assert [str(p) for p in roots.all] == ["/tmp", "/"]
    roots.update_from_host({"roots": []})
    assert [str(p) for p in roots.all] == ["/tmp"]


def answer_roots(proxy, roots):
    ask = proxy.recv()
    assert ask["method"] == "roots/list"
    proxy.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}})


def verdict(proxy, request_id, path):
    reply = proxy.call(request_id, "write_file", {"path": str(path), "content": "r"})
    return reply["result"]["_meta"]["affidavit/receipt"]["verdict"]


def test_host_answering_no_roots_does_not_discard_cli_roots(raw_proxy, tmp_path):
    proxy = raw_proxy("--receipts", "--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize({"roots": {"listChanged": True}})
    answer_roots(proxy, [])
    assert verdict(proxy, 1, tmp_path / "a.txt") == "verified"


def test_roots_asked_of_the_host_are_used(raw_proxy, tmp_path):
    proxy = raw_proxy("--receipts", "--verifier", VERIFIER)
    proxy.initialize({"roots": {}})
    answer_roots(proxy, [{"uri": tmp_path.as_uri(), "name": "work"}])
    assert verdict(proxy, 1, tmp_path / "b.txt") == "verified"


def test_roots_list_changed_asks_again(raw_proxy, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    proxy = raw_proxy("--receipts", "--verifier", VERIFIER)
    proxy.initialize({"roots": {"listChanged": True}})
    answer_roots(proxy, [{"uri": tmp_path.as_uri()}])
    proxy.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    answer_roots(proxy, [{"uri": other.as_uri()}])
    assert verdict(proxy, 1, other / "c.txt") == "verified"
    assert verdict(proxy, 2, tmp_path / "d.txt") == "unchecked"


def test_without_any_root_path_claims_stay_unchecked(raw_proxy, tmp_path):
    proxy = raw_proxy("--receipts", "--verifier", VERIFIER)
    proxy.initialize({})
    assert verdict(proxy, 1, tmp_path / "e.txt") == "unchecked"


def test_backend_asking_roots_gets_cli_roots_when_the_host_cannot_answer(raw_proxy, tmp_path):
    proxy = raw_proxy("--root", str(tmp_path))
    proxy.initialize({})
    reply = proxy.call(1, "ask_roots", {})
    assert tmp_path.as_uri() in reply["result"]["content"][0]["text"]


def test_backend_asking_roots_reaches_a_roots_capable_host(raw_proxy, tmp_path):
    proxy = raw_proxy("--root", str(tmp_path))
    proxy.initialize({"roots": {}})
    answer_roots(proxy, [])  # the proxy's own question after initialized
    proxy.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "ask_roots", "arguments": {}},
        }
    )
    ask = proxy.recv()
    assert ask["method"] == "roots/list" and ask["id"] == "roots-1"
    proxy.send(
        {"jsonrpc": "2.0", "id": "roots-1", "result": {"roots": [{"uri": "file:///host/root"}]}}
    )
    assert "file:///host/root" in proxy.recv()["result"]["content"][0]["text"]
