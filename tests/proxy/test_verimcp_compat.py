"""verimcp users switch without editing: its flags, its policy spelling, its audit logs.

``recorded/verimcp-0.3.0-audit.jsonl`` is a real log: verimcp 0.3.0 (from PyPI) ran in front
of ``raw_backend.py`` twice, once as ``verimcp --policy-config verimcp-policy.yaml
--audit-log audit.jsonl -- python raw_backend.py`` (an allowed call, two denials, an approval
the host could not give), once adding ``--root ws --idempotent-replay`` (a verified write, its
retry answered from cache, a plain forward). ``recorded/verimcp-policy.yaml`` is the policy it
ran with, in verimcp's spelling (``require_approval``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import IntegrityError, UsageError
from affidavit.proxy import backtest, load_policy, load_verifiers, read_entries, verify_log
from tests.proxy.conftest import sample_twice, text_of, tool_calls
from tests.support import run_cli

RECORDED = Path(__file__).with_name("recorded")
VERIMCP_LOG = RECORDED / "verimcp-0.3.0-audit.jsonl"
VERIMCP_POLICY = RECORDED / "verimcp-policy.yaml"


def test_a_verimcp_policy_file_loads_with_its_own_spelling() -> None:
    policy = load_policy(VERIMCP_POLICY)
    assert policy.decide("echo", {"mode": "ask"}).action == "require-approval"
    assert policy.decide("echo", {"path": "secrets/key.txt"}).action == "deny"
    assert policy.decide("echo", {"path": "docs/a.md"}).action == "allow"


def test_the_same_decisions_verimcp_recorded() -> None:
    """Back-testing verimcp's own policy on its own log changes nothing: same rules, same
    decisions, read through our policy engine."""
    entries = read_entries(VERIMCP_LOG)
    assert [e["kind"] for e in entries] == ["call"] * 7
    assert {e["session"] for e in entries} == {"b9d23359474f", "93a6411b9382"}
    assert [e["policy"]["action"] for e in entries[:4]] == [
        "allow",
        "deny",
        "require-approval",
        "deny",
    ]
    assert [e["outcome"] for e in entries[4:]] == ["result", "replayed", "forwarded"]
    assert entries[4]["verdict"] == "verified" and entries[4]["verifier"] == "FilesystemVerifier"
    assert backtest(entries, load_policy(VERIMCP_POLICY)).changed == ()


def test_proxy_replay_reads_a_verimcp_log_with_verimcps_flags(tmp_path: Path, home: Path) -> None:
    stricter = tmp_path / "stricter.yaml"
    stricter.write_text("rules:\n  - tool: write_file\n    action: require_approval\n")
    argv = ["proxy", "replay", str(VERIMCP_LOG), "--policy-config", str(stricter), "--json"]
    result = run_cli(argv, home)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["calls"] == 7
    assert [(c["tool"], c["was"], c["would_be"]) for c in report["changed"]] == [
        ("echo", "deny", "allow"),
        ("echo", "require-approval", "allow"),
        ("echo", "deny", "allow"),
        ("write_file", "allow", "require-approval"),
        ("write_file", "allow", "require-approval"),
    ]
    one = run_cli([*argv, "--session", "93a6411b9382"], home)
    assert json.loads(one.stdout)["calls"] == 3


def test_audit_verify_reads_a_verimcp_log_and_says_it_is_not_chained(home: Path) -> None:
    report = verify_log(VERIMCP_LOG)
    assert (report.ok, report.entries, report.chained, report.format) == (
        True,
        7,
        False,
        "verimcp",
    )
    text = run_cli(["audit", "verify", "--log", str(VERIMCP_LOG)], home)
    assert text.returncode == 0, text.stderr
    assert "verimcp audit log: 7 entries read; it is not hash-chained" in text.stdout
    as_json = run_cli(["audit", "verify", "--log", str(VERIMCP_LOG), "--json"], home)
    doc = json.loads(as_json.stdout)
    assert (doc["chained"], doc["format"], doc["entries"], doc["head"]) == (
        False,
        "verimcp",
        7,
        None,
    )


def test_a_damaged_verimcp_log_is_refused_with_the_line(tmp_path: Path, home: Path) -> None:
    damaged = tmp_path / "audit.jsonl"
    lines = VERIMCP_LOG.read_text().splitlines()
    damaged.write_text("\n".join([*lines[:3], '{"not": "an entry"}', *lines[3:]]) + "\n")
    with pytest.raises(IntegrityError, match="line 4 is not a verimcp audit entry"):
        read_entries(damaged)
    result = run_cli(["audit", "verify", "--log", str(damaged)], home)
    assert result.returncode == 5 and "line 4" in result.stderr
    assert "Traceback" not in result.stderr


def test_our_own_log_still_reports_as_chained(raw_proxy, tmp_path: Path) -> None:
    proxy = raw_proxy()
    proxy.initialize()
    proxy.call(1, "echo", {"x": 1})
    proxy.close()
    report = verify_log(tmp_path / "audit.jsonl")
    assert (report.ok, report.chained, report.format) == (True, True, "affidavit")


def test_verimcps_command_line_runs_the_proxy(raw_proxy, tmp_path: Path, backend_log: Path):
    """A client config written for verimcp, with only the command renamed."""
    proxy = raw_proxy(
        "--policy-config",
        str(VERIMCP_POLICY),
        "--verifiers",
        "filesystem,git_server_commit",
        "--sampling-limit",
        "1",
        "--sampling-window",
        "60",
        "--approval-timeout",
        "5",
        "--root",
        str(tmp_path),
    )
    proxy.initialize()
    denied = proxy.call(1, "echo", {"path": "secrets/key.txt"})
    assert denied["result"]["isError"] is True and "policy denied" in text_of(denied)
    ask = proxy.call(2, "echo", {"mode": "ask"})
    assert ask["result"]["isError"] is True and "elicitation" in text_of(ask)
    assert "docs/a.md" in text_of(proxy.call(3, "echo", {"path": "docs/a.md"}))
    proxy.close()
    assert tool_calls(backend_log, "echo") == 1


def test_sampling_limit_from_the_command_line(raw_proxy) -> None:
    second = sample_twice(raw_proxy("--sampling-limit", "1", "--sampling-window", "30"))
    assert "sampling refused" in second and "1 per 30 s" in second


def test_verifiers_by_verimcp_name_and_unknown_names() -> None:
    names = [v.name for v in load_verifiers(["git_commit", "ci_run", "resource_read"])]
    assert sorted(names) == ["ci", "git", "resources"]
    with pytest.raises(UsageError, match="no_such_verifier"):
        load_verifiers(["no_such_verifier"])
