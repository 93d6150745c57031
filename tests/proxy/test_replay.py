"""Verified replay: a retry never runs a side effect twice, and never answers from stale state."""

from __future__ import annotations

from tests.proxy.conftest import VERIFIER, tool_calls


def start(raw_proxy, tmp_path, *extra):
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path), *extra)
    proxy.initialize()
    return proxy


def test_sequential_retry_of_a_verified_call_is_answered_without_the_backend(
    raw_proxy, tmp_path, backend_log
):
    counter = tmp_path / "counter"
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    first = proxy.call(1, "count", {"path": str(counter)})
    retry = proxy.call(2, "count", {"path": str(counter)})
    assert first["result"]["content"] == retry["result"]["content"]
    assert retry["id"] == 2 and retry["result"]["_meta"]["affidavit/replayed"] is True
    assert counter.read_text() == "1" and tool_calls(backend_log, "count") == 1


def test_without_the_flag_every_retry_runs(raw_proxy, tmp_path, backend_log):
    counter = tmp_path / "counter"
    proxy = start(raw_proxy, tmp_path)
    proxy.call(1, "count", {"path": str(counter)})
    proxy.call(2, "count", {"path": str(counter)})
    assert counter.read_text() == "2"


def test_overlapping_identical_calls_run_once(raw_proxy, tmp_path, backend_log):
    counter = tmp_path / "counter"
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    for request_id in (1, 2, 3):
        proxy.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "count", "arguments": {"path": str(counter), "delay": 1.5}},
            }
        )
    replies = {proxy.recv()["id"] for _ in range(3)}
    assert replies == {1, 2, 3}
    assert counter.read_text() == "1" and tool_calls(backend_log, "count") == 1


def test_write_x_then_y_then_x_writes_x_again(raw_proxy, tmp_path, backend_log):
    target = tmp_path / "f.txt"
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    for request_id, content in enumerate(["x", "y", "x"], start=1):
        assert (
            proxy.call(request_id, "write_file", {"path": str(target), "content": content})[
                "result"
            ]["isError"]
            is False
        )
    assert target.read_text() == "x" and tool_calls(backend_log, "write_file") == 3
    proxy.call(4, "write_file", {"path": str(target), "content": "x"})
    assert (
        tool_calls(backend_log, "write_file") == 3
    )  # now x holds: answered from the verified result


def test_state_changed_behind_the_proxy_is_a_cache_miss(raw_proxy, tmp_path, backend_log):
    target = tmp_path / "f.txt"
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    proxy.call(1, "write_file", {"path": str(target), "content": "x"})
    target.write_text("tampered")
    proxy.call(2, "write_file", {"path": str(target), "content": "x"})
    assert target.read_text() == "x" and tool_calls(backend_log, "write_file") == 2


def test_a_contradicted_call_is_never_replayed(raw_proxy, tmp_path, backend_log):
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    args = {"path": str(tmp_path / "never.txt"), "content": "x"}
    assert proxy.call(1, "lie_write", args)["result"]["isError"] is True
    assert proxy.call(2, "lie_write", args)["result"]["isError"] is True
    assert tool_calls(backend_log, "lie_write") == 2


def test_different_arguments_are_different_calls(raw_proxy, tmp_path, backend_log):
    proxy = start(raw_proxy, tmp_path, "--idempotent-replay")
    proxy.call(1, "count", {"path": str(tmp_path / "a")})
    proxy.call(2, "count", {"path": str(tmp_path / "b")})
    assert tool_calls(backend_log, "count") == 2
