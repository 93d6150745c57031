"""Logs written before the audit entries became frozen types still verify, read and replay,
and the proxy still writes entries of the same shape (issue 25, item 6; ADR 0164).

``recorded/affidavit-0.1.0-audit.jsonl`` was written by the proxy as it was before that change
(dict entries completed by the audit thread), running :func:`scripted_session`: every kind of
entry and every way a call or read ends that the session can reach. The same session run now
must give entries with the same fields and the same decisions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from affidavit.proxy import check_receipt, read_entries, verify_log
from tests.proxy.conftest import VERIFIER, sample_twice
from tests.support import run_cli

RECORDED = Path(__file__).parent / "recorded" / "affidavit-0.1.0-audit.jsonl"
POLICY = 'rules:\n  - tool: "*"\n    arguments: {path: "secrets/*"}\n    action: deny\n'
VARYING = {
    "session",
    "ts",
    "timings_ms",
    "arguments",
    "arguments_sha256",
    "claim",
    "evidence",
    "uri",
}
"""Fields that differ between runs (times, and values naming the run's temporary paths)."""


def scripted_session(raw_proxy: Any, tmp_path: Path) -> Path:
    """Two proxy runs on one log: calls verified, replayed, contradicted, denied, forwarded,
    a read denied and one the backend failed, a sampling request over the limit, a refused
    line; then a changed tool definition (refused), and an error reply judged for a receipt."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    common = ("--policy", str(policy), "--verifier", VERIFIER, "--root", str(tmp_path))
    first = raw_proxy(*common, "--idempotent-replay", "--sampling-limit", "1", "--pin-tools")
    assert "sampling refused" in sample_twice(first)  # the second request is over the limit
    target = str(tmp_path / "ok.txt")
    assert not first.call(3, "write_file", {"path": target, "content": "x"})["result"]["isError"]
    replayed = first.call(4, "write_file", {"path": target, "content": "x"})["result"]
    assert replayed["_meta"]["affidavit/replayed"] is True
    lie = first.call(5, "lie_write", {"path": str(tmp_path / "no.txt"), "content": "y"})
    assert lie["result"]["isError"] is True
    assert first.call(6, "write_file", {"path": "secrets/k", "content": "z"})["result"]["isError"]
    assert first.call(7, "echo", {"token": "hunter2-secret-value", "note": "hi"})["result"]
    denied = first.request(8, "resources/read", {"uri": (tmp_path / "secrets" / "x").as_uri()})
    assert "policy denied" in denied["error"]["message"]
    assert "error" in first.request(9, "resources/read", {"uri": (tmp_path / "r").as_uri()})
    first.send(b'{"jsonrpc":"2.0","id":10,"method":"ping","method":"tools/call"}\n')
    assert first.recv()["id"] == 10
    assert first.close() == 0

    changed = tmp_path / "tools.json"
    tool = {"name": "echo", "description": "now says more", "inputSchema": {"type": "object"}}
    changed.write_text(json.dumps([tool]))
    second = raw_proxy(
        *common, "--pin-tools", "--receipts", env={"RAW_BACKEND_TOOLS": str(changed)}
    )
    second.initialize()
    assert second.call(11, "echo", {})["result"]["isError"] is True  # its pin changed
    assert "error" in second.call(12, "nope", {})
    assert second.close() == 0
    return tmp_path / "audit.jsonl"


def _shapes(entries: list[Any]) -> list[str]:
    """What must not change between releases, entry by entry: every field's name and the
    values that do not depend on the run (times, temporary paths). Sorted: an entry written
    right after a reply may land before or after the next call's (the threads race)."""
    shapes = []
    for entry in entries:
        fixed = {k: v for k, v in entry.items() if k not in VARYING}
        timed = sorted(entry.get("timings_ms", {}))
        shapes.append(json.dumps({**fixed, "fields": sorted(entry), "timed": timed}))
    return sorted(shapes)


def test_a_log_written_before_the_entry_types_verifies_reads_and_replays(home, tmp_path):
    log = tmp_path / "old.jsonl"
    shutil.copy(RECORDED, log)
    report = verify_log(log)
    assert report.ok and report.entries == len(RECORDED.read_bytes().splitlines())
    entries = read_entries(log)
    assert {e["kind"] for e in entries} == {"call", "read", "refused", "sampling", "pin-changed"}

    verified = [
        json.loads(line)["hash"]
        for line in RECORDED.read_bytes().splitlines()
        if json.loads(line)["body"].get("verdict") == "verified"
    ]
    assert verified and check_receipt(log, verified[0]).holds

    checked = run_cli(["audit", "verify", "--log", str(log)], home)
    assert checked.returncode == 0, checked.stderr
    allow_all = tmp_path / "allow.yaml"
    allow_all.write_text("default: allow\n")
    replay = run_cli(["proxy", "replay", str(log), "--policy", str(allow_all), "--json"], home)
    assert replay.returncode == 0, replay.stderr
    backtest = json.loads(replay.stdout)
    assert backtest["changed"], backtest  # the calls the old policy denied are allowed now


def test_the_proxy_still_writes_what_it_wrote_before(raw_proxy, tmp_path):
    written = read_entries(scripted_session(raw_proxy, tmp_path))
    recorded = read_entries(RECORDED)
    assert _shapes(written) == _shapes(recorded)
    assert "hunter2" not in (tmp_path / "audit.jsonl").read_text()
