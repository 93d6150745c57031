"""The audit log: hash-chained, shared safely, secrets redacted, served as affidavit://audit."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from affidavit.core.errors import IntegrityError
from affidavit.proxy.audit import AuditLog, redact, verify_log
from tests.proxy.conftest import REPO


def filled(tmp_path, n: int = 5):
    log = AuditLog(tmp_path / "audit.jsonl", session="s1")
    for i in range(n):
        log.append({"kind": "call", "tool": f"t{i}"})
    return log.path


def test_chain_verifies_and_is_private(tmp_path):
    path = filled(tmp_path)
    report = verify_log(path)
    assert report.ok and report.entries == 5 and report.first_break is None
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("damage", ["edit", "delete", "swap", "garbage"])
def test_any_damage_is_found_at_the_right_entry(tmp_path, damage):
    path = filled(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    if damage == "edit":
        lines[2] = lines[2].replace(b'"t2"', b'"tX"')
    elif damage == "delete":
        del lines[2]
    elif damage == "swap":
        lines[2], lines[3] = lines[3], lines[2]
    else:
        lines[2] = b"not json\n"
    path.write_bytes(b"".join(lines))
    report = verify_log(path)
    assert not report.ok and report.first_break is not None and report.first_break.index == 2


def test_a_damaged_tail_refuses_to_append(tmp_path):
    path = filled(tmp_path, 2)
    with path.open("ab") as handle:
        handle.write(b'{"half a line')
    with pytest.raises(IntegrityError):
        AuditLog(path, session="s2").append({"kind": "call"})


def test_two_processes_appending_at_once_keep_one_chain(tmp_path):
    path = tmp_path / "shared.jsonl"
    code = (
        "import sys; from affidavit.proxy.audit import AuditLog\n"
        "log = AuditLog(sys.argv[1], session=sys.argv[2])\n"
        "for i in range(60): log.append({'kind': 'call', 'i': i})\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path), name], cwd=REPO) for name in "ab"
    ]
    assert [p.wait(120) for p in procs] == [0, 0]
    report = verify_log(path)
    assert report.ok and report.entries == 120


def test_redaction_hides_secret_keys_and_token_shaped_values():
    cleaned = redact(
        {
            "api_token": "plain-but-named",
            "headers": {"Authorization": "Bearer abc"},
            "note": "Bearer abcdefghijklmnop",
            "gh": "ghp_" + "a" * 36,
            "path": "docs/x.md",
            "content": "y" * 1000,
        }
    )
    assert cleaned["api_token"] == cleaned["headers"]["Authorization"] == "[redacted]"
    assert cleaned["note"] == "Bearer [redacted]" and cleaned["gh"] == "[redacted]"
    assert cleaned["path"] == "docs/x.md"
    assert len(cleaned["content"]) < 200 and "1000 chars" in cleaned["content"]


def test_secrets_in_arguments_reach_neither_the_log_nor_stderr(raw_proxy, tmp_path):
    proxy = raw_proxy("--receipts")
    proxy.initialize()
    secret = "s3cr3t-value-should-never-be-logged"
    reply = proxy.call(1, "echo", {"password": secret, "note": "Bearer tok_abcdefghijklmnopqrstu"})
    assert secret in json.dumps(reply)  # the host still gets the backend's real answer
    proxy.close()
    log_text = (tmp_path / "audit.jsonl").read_text()
    assert secret not in log_text and "tok_abcdefghijklmnopqrstu" not in log_text
    assert secret not in proxy.stderr
    entry = json.loads(log_text.splitlines()[-1])["body"]
    assert entry["arguments"]["password"] == "[redacted]" and len(entry["arguments_sha256"]) == 64
    assert set(entry["timings_ms"]) >= {"backend", "total"}


def test_audit_resource_shows_only_this_sessions_entries(raw_proxy):
    first = raw_proxy()
    first.initialize()
    first.call(1, "echo", {"n": 1})
    first.close()
    second = raw_proxy()
    second.initialize()
    second.call(1, "echo", {"n": 2})
    listing = second.request(2, "resources/list")
    assert [r["uri"] for r in listing["result"]["resources"]] == ["affidavit://audit"]
    templates = second.request(4, "resources/templates/list")  # the backend has no resources
    assert templates["result"] == {"resourceTemplates": []}
    read = second.request(3, "resources/read", {"uri": "affidavit://audit"})
    entries = json.loads(read["result"]["contents"][0]["text"])
    assert [e["arguments"] for e in entries] == [{"n": 2}]


def test_replay_refuses_a_broken_log(tmp_path, home):
    from tests.support import run_cli

    path = filled(tmp_path, 3)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2])
    policy = tmp_path / "p.yaml"
    policy.write_text("default: deny\n")
    result = run_cli(["proxy", "replay", str(path), "--policy", str(policy)], home)
    assert result.returncode == 5 and "is broken at entry 2" in result.stderr


def test_a_new_log_directory_is_private_but_an_existing_one_is_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    AuditLog(shared / "audit.jsonl", session="s").append({"kind": "call"})
    assert shared.stat().st_mode & 0o777 == 0o755
    AuditLog(tmp_path / "fresh" / "audit.jsonl", session="s").append({"kind": "call"})
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o700


SECRETS_IN_STRINGS = {
    "dotenv": ("write_file", {"path": ".env", "content": "DB_PASSWORD=hunter2-corral\nMODE=dev\n"}),
    "clone": ("git_clone", {"url": "https://alice:s3cretPassw0rd@git.example.com/team/r.git"}),
    "bearer": (
        "run_command",
        {"command": "curl -H 'Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl' https://x"},
    ),
    "sql": ("sqlite_execute", {"sql": "INSERT INTO keys VALUES ('sk-proj-ABCDEFGHIJKLMNOPQRST')"}),
    "long body": ("write_file", {"path": "big.txt", "content": "GH=ghp_" + "Z" * 36 + "\n" * 300}),
    "flag": ("run_command", {"command": "deploy --api-key=k3y-v4lue-991 --verbose"}),
}
LEAKS = (
    "hunter2-corral",
    "s3cretPassw0rd",
    "eyJhbGciOi",
    "ABCDEFGHIJKLMNOPQRST",
    "Z" * 36,
    "k3y-v4lue-991",
)


def test_secrets_inside_argument_strings_reach_neither_the_log_nor_the_model(raw_proxy, tmp_path):
    """A ``.env`` body, a password in a clone URL, a bearer token in a command, a key in SQL:
    all were stored verbatim, hash-chained, and served back through ``affidavit://audit``."""
    proxy = raw_proxy()
    proxy.initialize()
    for index, (tool, arguments) in enumerate(SECRETS_IN_STRINGS.values()):
        proxy.call(index, "echo", {**arguments, "as": tool})
    read = proxy.request(99, "resources/read", {"uri": "affidavit://audit"})
    served = read["result"]["contents"][0]["text"]
    proxy.close()
    stored = (tmp_path / "audit.jsonl").read_text()
    for leak in LEAKS:
        assert leak not in stored and leak not in served and leak not in proxy.stderr, leak
    entries = [json.loads(line)["body"]["arguments"] for line in stored.splitlines()]
    dotenv, clone, bearer, sql, big, flag = entries
    body = SECRETS_IN_STRINGS["dotenv"][1]["content"]
    assert (
        dotenv["path"] == ".env" and hashlib.sha256(body.encode()).hexdigest() in dotenv["content"]
    )
    assert clone["url"] == "https://[redacted]@git.example.com/team/r.git"
    assert (
        bearer["command"].startswith("curl -H 'Authorization: [redacted]")
        and "https://x" in bearer["command"]
    )
    assert sql["sql"] == "INSERT INTO keys VALUES ('[redacted]')"
    long_body = SECRETS_IN_STRINGS["long body"][1]["content"]
    assert big["content"] == f"[343 chars, sha256 {hashlib.sha256(long_body.encode()).hexdigest()}]"
    assert flag["command"] == "deploy --api-key=[redacted] --verbose"


def test_writers_that_take_turns_on_one_log_keep_one_chain(tmp_path):
    """Each writer remembers where its last append ended; another writer's append in between
    (or the log moved aside) must make it read the tail again, not chain after its own."""
    path = tmp_path / "audit.jsonl"
    first, second = AuditLog(path, session="a"), AuditLog(path, session="b")
    for i in range(3):
        first.write_many([{"kind": "call", "tool": f"a{i}"}, {"kind": "call", "tool": f"b{i}"}])
        second.write({"kind": "call", "tool": f"c{i}"})
    assert verify_log(path).ok and verify_log(path).entries == 9
    moved = path.rename(tmp_path / "old.jsonl")
    first.write({"kind": "call", "tool": "after the move"})
    assert verify_log(moved).ok and verify_log(moved).entries == 9
    assert verify_log(path).ok and verify_log(path).entries == 1


def test_the_writer_thread_completes_entries_in_order_and_flushes_on_demand(tmp_path):
    from affidavit.proxy.audit import AuditWriter

    log = AuditLog(tmp_path / "audit.jsonl", session="w")
    failures: list[Exception] = []
    writer = AuditWriter(log, lambda n: log.remember({"kind": "call", "n": n}), failures.append)
    for n in range(200):
        writer.put(n)
    writer.flush()
    assert [e["n"] for e in log.session_entries()] == list(range(200))
    writer.put("last")
    writer.close()
    written = [json.loads(line)["body"]["n"] for line in log.path.read_text().splitlines()]
    assert written == [*range(200), "last"] and verify_log(log.path).ok and not failures


def test_a_call_nobody_verifies_is_audited_as_on_the_full_path(raw_proxy, tmp_path):
    """The quick lane (no verifier, no receipt, no policy question) writes the same entry the
    full way wrote: forwarded, unchecked by no verifier, arguments redacted and digested."""
    from affidavit.core.canonical import digest_json
    from affidavit.proxy.audit_entries import Redacted

    proxy = raw_proxy()
    proxy.initialize()
    arguments = {"path": "notes.txt", "token": "hunter2-secret-value"}
    for request_id in range(5):
        assert proxy.call(request_id, "echo", arguments)["id"] == request_id
    proxy.close()
    path = tmp_path / "audit.jsonl"
    assert verify_log(path).ok
    entries = [json.loads(line)["body"] for line in path.read_text().splitlines()]
    assert len(entries) == 5
    redacted = Redacted(arguments).value
    digest = digest_json(redacted)
    for entry in entries:
        assert entry["kind"] == "call" and entry["tool"] == "echo"
        assert entry["outcome"] == "forwarded" and entry["verdict"] == "unchecked"
        assert entry["verifier"] == "none" and entry["claim"] == "echo"
        assert entry["evidence"][0]["observed"] == "no verifier for this tool"
        assert entry["policy"] == {
            "action": "allow",
            "rule": -1,
            "reason": "no policy",
            "allowed": True,
        }
        assert entry["arguments"] == redacted and entry["arguments_sha256"] == digest
        assert set(entry["timings_ms"]) == {"backend", "total"}
    assert "hunter2" not in path.read_text()


def test_the_entry_of_an_unverified_call_is_what_redacting_its_receipt_gives():
    """The audit thread writes the fields of the no-verifier receipt without rescanning the
    proxy's own words; they must be exactly what the general redaction makes of them."""
    from affidavit.proxy.audit_entries import NO_VERIFIER_WHY, NotJudged, Redacted
    from affidavit.proxy.receipts import unchecked

    for tool in ("echo", "token=abc123secretvalue", "write_file"):
        receipt = unchecked("none", tool, NO_VERIFIER_WHY)
        full = {
            "verdict": receipt.verdict.value,
            "verifier": receipt.verifier,
            "claim": redact(receipt.claim),
            "evidence": redact([e.as_dict() for e in receipt.evidence]),
        }
        assert NotJudged(Redacted(tool), receipt.evidence[0].when).to_json() == full
