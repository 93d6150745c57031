"""The raw relay on the wire: bytes through unchanged, both directions, failures contained."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.proxy.conftest import VERIFIER, backend_lines, text_of, tool_calls


def test_messages_it_does_not_act_on_pass_byte_for_byte(raw_proxy, backend_log):
    proxy = raw_proxy()
    proxy.initialize()
    odd = (
        b'{ "method" : "ping",  "id" : "p-1", "jsonrpc":"2.0" , '
        b'"params":{"_meta":{"x":[1, 2.50]}}}\n'
    )
    proxy.send(odd)
    reply = proxy.recv_raw()
    # the backend's unusual key order and spacing reach the host untouched
    assert reply == b'{"result": {}, "id": "p-1", "jsonrpc": "2.0"}\n'
    note = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":7, "progress":0.5}}\n'
    )
    proxy.send(note)
    proxy.send(odd.replace(b"p-1", b"p-2"))
    proxy.recv_raw()
    received = backend_lines(backend_log)
    assert odd in received and note in received


def test_tools_call_without_a_verifier_is_forwarded_and_answered_unchanged(raw_proxy, backend_log):
    proxy = raw_proxy()
    proxy.initialize()
    line = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"b":1,"a":"\\u00e9"}}}\n'
    )
    proxy.send(line)
    assert proxy.recv_raw() == (
        b'{"result": {"content": [{"type": "text", '
        b'"text": "{\\"a\\": \\"\\\\u00e9\\", \\"b\\": 1}"}], '
        b'"isError": false}, "id": 9, "jsonrpc": "2.0"}\n'
    )
    assert line in backend_lines(backend_log)


def test_requests_both_ways_with_colliding_ids_are_correlated_by_direction(raw_proxy):
    proxy = raw_proxy()
    proxy.initialize({"sampling": {}})
    proxy.begin_call(1, "ask_host", {})
    backend_request = proxy.recv()
    assert backend_request["method"] == "sampling/createMessage"
    assert backend_request["id"] == 1  # the same id as the host's own request in flight
    proxy.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "role": "assistant",
                "model": "m",
                "content": {"type": "text", "text": "hi"},
            },
        }
    )
    answer = proxy.recv()
    assert answer["id"] == 1 and "host said" in text_of(answer) and '"hi"' in text_of(answer)


def test_garbage_from_either_side_is_dropped_and_logged(raw_proxy):
    proxy = raw_proxy()
    proxy.initialize()
    proxy.send(b"\n")
    proxy.send(b"not json at all\n")
    proxy.send(b'{"jsonrpc": "2.0", "id": 3, "method": \n')
    reply = proxy.call(4, "garbage", {})
    assert reply["id"] == 4 and text_of(reply) == "after garbage"
    assert proxy.request(5, "ping") == {"result": {}, "id": 5, "jsonrpc": "2.0"}
    assert proxy.saw("dropped a line from the host")
    assert proxy.saw("dropped a line from the backend")


def test_batches_pass_unless_they_hide_a_call_the_proxy_must_judge(raw_proxy, backend_log):
    proxy = raw_proxy()
    proxy.initialize()
    batch = (
        b'[{"jsonrpc":"2.0","id":"b1","method":"ping"},'
        b'{"jsonrpc":"2.0","method":"notifications/x"}]\n'
    )
    proxy.send(batch)
    assert batch in backend_lines(backend_log) or _eventually(
        lambda: batch in backend_lines(backend_log)
    )
    proxy.send(
        [
            {
                "jsonrpc": "2.0",
                "id": "b2",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {}},
            }
        ]
    )
    refused = proxy.recv()
    assert isinstance(refused, list) and refused[0]["id"] == "b2"
    assert "cannot be verified" in refused[0]["error"]["message"]
    assert tool_calls(backend_log, "echo") == 0


def test_backend_crash_answers_every_request_in_flight(raw_proxy):
    proxy = raw_proxy()
    proxy.initialize()
    proxy.begin_call(20, "slow", {"seconds": 30})
    proxy.begin_call(21, "crash", {})
    replies = {proxy.recv()["id"]: None, proxy.recv()["id"]: None}
    assert set(replies) == {20, 21}
    assert proxy.recv_raw() is None  # the proxy ends with its backend
    assert proxy.close() == 8
    assert proxy.saw("exited with code 3")


def test_backend_crash_errors_are_json_rpc_errors(raw_proxy):
    proxy = raw_proxy()
    proxy.initialize()
    reply = proxy.call(30, "crash", {})
    assert reply["error"]["code"] == -32001 and "exited with code 3" in reply["error"]["message"]


def test_host_disconnect_stops_the_backend(raw_proxy, tmp_path):
    pidfile = tmp_path / "backend.pid"
    proxy = raw_proxy(env={"RAW_BACKEND_PIDFILE": str(pidfile)})
    proxy.initialize()
    pid = int(pidfile.read_text())
    assert proxy.close() == 0
    with pytest.raises(ProcessLookupError):
        _wait_gone(pid)


def test_cancelled_request_that_is_held_never_reaches_the_backend(raw_proxy, backend_log, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  - tool: echo\n    action: require-approval\n")
    proxy = raw_proxy("--policy", str(policy))
    proxy.initialize({"elicitation": {}})
    proxy.begin_call(40, "echo", {"x": 1})
    ask = proxy.recv()
    assert ask["method"] == "elicitation/create" and '"x": 1' in ask["params"]["message"]
    proxy.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 40}})
    assert proxy.request(41, "ping")["id"] == 41
    assert tool_calls(backend_log, "echo") == 0
    assert b"notifications/cancelled" not in b"".join(backend_lines(backend_log))


def test_a_slow_verification_blocks_no_other_traffic(raw_proxy, tmp_path):
    proxy = raw_proxy(
        "--verifier", VERIFIER, "--root", str(tmp_path), env={"SLOW_VERIFY_SECONDS": "3"}
    )
    proxy.initialize()
    target = tmp_path / "f.txt"
    proxy.begin_call(50, "write_file", {"path": str(target), "content": "x"})
    proxy.begin_call(51, "echo", {})
    proxy.send({"jsonrpc": "2.0", "id": 52, "method": "ping"})
    order = [proxy.recv()["id"] for _ in range(3)]
    assert order[-1] == 50, order


def test_a_verifier_that_times_out_leaves_the_original_reply(raw_proxy, tmp_path):
    proxy = raw_proxy(
        "--verifier",
        VERIFIER,
        "--root",
        str(tmp_path),
        "--verify-timeout",
        "1",
        env={"SLOW_VERIFY_SECONDS": "4"},
    )
    proxy.initialize()
    reply = proxy.call(60, "lie_write", {"path": str(tmp_path / "g.txt"), "content": "y"})
    assert reply["result"]["isError"] is False  # unchecked: the claim stands as the backend made it
    assert proxy.saw("UNCHECKED · test-file") and proxy.saw("verification timed out")


def test_contradicted_claim_becomes_an_error_with_evidence(raw_proxy, tmp_path):
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path))
    proxy.initialize()
    reply = proxy.call(70, "lie_write", {"path": str(tmp_path / "h.txt"), "content": "z"})
    assert reply["result"]["isError"] is True
    assert "contradicted" in text_of(reply) and "does not hold the content" in text_of(reply)
    assert reply["result"]["_meta"]["affidavit/receipt"]["verdict"] == "contradicted"
    honest = proxy.call(71, "write_file", {"path": str(tmp_path / "h.txt"), "content": "z"})
    assert honest["result"]["isError"] is False


def test_receipts_flag_appends_the_receipt(raw_proxy, tmp_path):
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path), "--receipts")
    proxy.initialize()
    reply = proxy.call(80, "write_file", {"path": str(tmp_path / "r.txt"), "content": "ok"})
    assert reply["result"]["content"][-1]["text"].startswith("[affidavit receipt] VERIFIED")
    assert reply["result"]["_meta"]["affidavit/receipt"]["verdict"] == "verified"
    assert proxy.saw("[affidavit receipt] VERIFIED")


def test_missing_backend_command_is_one_clear_error(home):
    from tests.support import run_cli

    result = run_cli(
        ["proxy", "--audit-log", str(home / "a.jsonl"), "--", "no-such-program-xyz"], home
    )
    assert result.returncode == 8
    assert result.stderr.strip().splitlines() == [
        "affidavit: error: backend command 'no-such-program-xyz' was not found; "
        "check the command after `--`"
    ]
    nothing = run_cli(["proxy", "--audit-log", str(home / "a.jsonl")], home)
    assert nothing.returncode == 2 and "no backend command" in nothing.stderr


def _eventually(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def _wait_gone(pid: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        os.kill(pid, 0)  # raises ProcessLookupError once the process is gone
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            waited = 0
        if waited:
            raise ProcessLookupError
        time.sleep(0.05)


_ = (json, Path)


def test_stdin_from_a_regular_file_is_relayed_then_ends_cleanly(home, tmp_path, backend_log):
    import subprocess
    import sys

    from tests.proxy.conftest import RAW_BACKEND, proxy_env

    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"f","version":"1"}}}\n'
        '{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "affidavit", "proxy", "--audit-log", str(tmp_path / "a.jsonl"),
             "--", *RAW_BACKEND],
            stdin=stdin, capture_output=True, timeout=60,
            env=proxy_env(home, {"RAW_BACKEND_LOG": str(backend_log)}),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["id"] for r in replies) == [1, 2]


def test_a_call_held_for_approval_is_answered_when_the_backend_dies(raw_proxy, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  - tool: echo\n    action: require-approval\n")
    proxy = raw_proxy("--policy", str(policy))
    proxy.initialize({"elicitation": {}})
    proxy.begin_call(1, "echo", {})
    assert proxy.recv()["method"] == "elicitation/create"  # nobody answers it
    proxy.begin_call(2, "crash", {})
    answers = {proxy.recv()["id"]: None, proxy.recv()["id"]: None}
    assert set(answers) == {1, 2}
    assert proxy.close() == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--verifier", "no_such_module_xyz:V", "--", "true"], "cannot be loaded"),
        (["--verifier", "json:dumps", "--", "true"], "is not a verifier"),
        # a missing --root is exit 3 "does not exist" (tests/cli/test_cli_polish.py)
        (["--root", __file__, "--", "true"], f"--root {__file__} is not a directory"),
        (["--verify-timeout", "0", "--", "true"], "--verify-timeout must be positive"),
        (["--backend-url", "http://127.0.0.1:1/mcp", "--", "true"], "not both"),
    ],
)
def test_bad_proxy_options_are_one_line_usage_errors(home, args, message):
    from tests.support import run_cli

    result = run_cli(["proxy", "--audit-log", str(home / "a.jsonl"), *args], home)
    assert result.returncode == 2 and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_crashing_verifier_leaves_the_original_reply_unchecked(raw_proxy, tmp_path):
    proxy = raw_proxy("--verifier", VERIFIER, "--root", str(tmp_path), "--receipts")
    proxy.initialize()
    reply = proxy.call(
        1, "lie_write", {"path": str(tmp_path / "v.txt"), "content": "crash the verifier"}
    )
    assert reply["result"]["isError"] is False
    receipt = reply["result"]["_meta"]["affidavit/receipt"]
    assert receipt["verdict"] == "unchecked" and "verifier failed (RuntimeError)" in str(receipt)


def test_a_pipelined_flood_is_answered_exactly_once_each(raw_proxy):
    proxy = raw_proxy()
    proxy.initialize()
    lines = []
    for i in range(600):
        if i % 3 == 0:
            lines.append(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",' % i
                         + b'"params":{"name":"echo","arguments":{"i":%d}}}\n' % i)  # fmt: skip
        else:
            lines.append(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i)
        if i % 50 == 0:
            lines.append(b"garbage in the middle\n")
    proxy.send(b"".join(lines))
    seen = [proxy.recv()["id"] for _ in range(600)]
    assert sorted(seen) == list(range(600))


def test_sigterm_shuts_down_like_a_host_disconnect(raw_proxy, tmp_path):
    import signal

    pidfile = tmp_path / "backend.pid"
    proxy = raw_proxy(env={"RAW_BACKEND_PIDFILE": str(pidfile)})
    proxy.initialize()
    proxy.call(1, "echo", {"before": "sigterm"})
    pid = int(pidfile.read_text())
    proxy.proc.send_signal(signal.SIGTERM)
    assert proxy.proc.wait(30) == 0
    with pytest.raises(ProcessLookupError):
        _wait_gone(pid)
    entries = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert len(entries) == 1 and '"before":"sigterm"' in entries[0]


def test_an_id_is_free_again_as_soon_as_its_answer_is_out(raw_proxy):
    """A held request (one the proxy acts on) is answered from the event loop while the host
    is read by another thread: a host reusing the id the moment it sees the answer must not
    be told the id is still in flight."""
    proxy = raw_proxy()
    proxy.initialize()
    for request_id in range(40):
        listing = proxy.request(request_id, "resources/list")
        assert "result" in listing, listing
        again = proxy.request(request_id, "ping")
        assert again == {"jsonrpc": "2.0", "id": request_id, "result": {}}, again
