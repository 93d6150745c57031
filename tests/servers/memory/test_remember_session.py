"""``affidavit proxy run --remember NAMESPACE``: verified calls become memories (issue 29).

Real processes: the proxy in front of the real dev server on a real git repository (and in
front of the demo liar), driven over raw pipes; the vault read back with the real CLI. A
verified commit waits in review with its receipt (``auto_store`` off) or is stored and
``proven`` at once (on); a lie, a secret and a locked vault each have their test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.proxy.conftest import RawProxy
from tests.servers.memory.conftest import LIGHT, VaultSetup
from tests.support import GIT_IDENTITY, run_cli

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _cli(setup: VaultSetup, env: dict[str, str], *args: str) -> Any:
    done = run_cli(list(args), setup.home, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _new_repo(tmp_path: Path) -> Path:
    """An empty git repository on ``main``."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def _devserver_session(
    setup: VaultSetup, tmp_path: Path, env: dict[str, str], *messages: str
) -> tuple[Path, str]:
    """Commit through the proxy with ``--remember team``: the audit log and its stderr."""
    repo = _new_repo(tmp_path)
    log = tmp_path / "audit" / "audit.jsonl"
    devserver = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]
    proxy = RawProxy(
        ["--audit-log", str(log), "--remember", "team", "--root", str(repo), "--", *devserver],
        setup.home,
        env,
    )
    try:
        proxy.initialize()
        for i, message in enumerate(messages):
            wrote = proxy.call(2 * i + 1, "write_file", {"path": f"n{i}.md", "content": "hi\n"})
            assert not wrote["result"].get("isError"), wrote
            commit = proxy.call(2 * i + 2, "git_commit", {"message": message})
            assert not commit["result"].get("isError"), commit
    finally:
        assert proxy.close() == 0, proxy.stderr
    return log, proxy.stderr


def _entry(log: Path, tool: str) -> str:
    """The link hash of the one verified call of ``tool`` in ``log``."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    [hit] = [e for e in lines if e["body"].get("tool") == tool]
    assert hit["body"]["verdict"] == "verified", hit
    return str(hit["hash"])


def test_a_verified_commit_waits_in_review_with_its_receipt_and_accepting_proves_it(
    setup: VaultSetup, tmp_path: Path
) -> None:
    env = setup.env(**LIGHT, **GIT_IDENTITY)
    log, _ = _devserver_session(setup, tmp_path, env, "add notes")
    receipt = {"type": "receipt", "log": str(log), "entry": _entry(log, "git_commit")}

    waiting = _cli(setup, env, "review", "--json")["candidates"]
    [commit] = [c for c in waiting if c["text"].startswith("commit ")]
    sha = subprocess.run(
        ["git", "-C", str(tmp_path / "repo"), "rev-parse", "--short=7", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert commit["text"] == f"commit {sha} on main adds 'add notes'"
    assert commit["evidence"] == [receipt] and commit["namespace"] == "team"
    assert commit["category"] == "verified-call" and "git_commit" in commit["source"]
    assert any(c["text"].startswith("file ") and "n0.md was written" in c["text"] for c in waiting)
    assert _cli(setup, env, "search", "notes", "--json")["results"] == []  # quarantined

    stored = _cli(setup, env, "review", "accept", commit["id"], "--json")
    assert stored["status"] == "stored" and stored["namespace"] == "team"
    got = _cli(setup, env, "get", stored["id"], "--json")["memory"]
    assert got["evidence"] == {"status": "proven", "items": [receipt]}


def test_with_auto_store_the_commit_is_stored_proven_until_the_log_is_edited(
    setup: VaultSetup, tmp_path: Path
) -> None:
    env = setup.env(**LIGHT, **GIT_IDENTITY)
    _cli(setup, env, "settings", "auto_store", "on", "--json")
    log, _ = _devserver_session(setup, tmp_path, env, "add notes")
    receipt = {"type": "receipt", "log": str(log), "entry": _entry(log, "git_commit")}

    assert _cli(setup, env, "review", "--json")["candidates"] == []
    found = _cli(setup, env, "search", "commit adds notes", "--proven-only", "--json")
    [hit] = [h for h in found["results"] if h["text"].startswith("commit ")]
    assert hit["namespace"] == "team" and hit["tags"] == ["verified-call"]
    assert hit["evidence"] == {"status": "proven", "items": [receipt]}

    edited = log.read_text().replace('"tool":"write_file"', '"tool":"read_file"', 1)
    assert edited != log.read_text()
    log.write_text(edited)  # someone rewrites history in the log
    again = _cli(setup, env, "search", "commit adds notes", "--proven-only", "--json")
    assert again["results"] == []  # stale now: proven_only leaves it out
    stale = _cli(setup, env, "get", hit["id"], "--json")["memory"]["evidence"]
    assert stale["status"] == "stale" and "no longer verifies" in stale["reasons"][0]


def test_a_secret_in_the_commit_message_never_reaches_the_candidate(
    setup: VaultSetup, tmp_path: Path
) -> None:
    env = setup.env(**LIGHT, **GIT_IDENTITY)
    _devserver_session(setup, tmp_path, env, f"rotate the key {TOKEN}")
    waiting = _cli(setup, env, "review", "--json")["candidates"]
    [commit] = [c for c in waiting if c["text"].startswith("commit ")]
    assert TOKEN not in json.dumps(waiting) and "[redacted]" in commit["text"]


def test_a_lie_yields_no_candidate_and_a_locked_vault_is_said_once(
    setup: VaultSetup, tmp_path: Path
) -> None:
    env = setup.env(**LIGHT, **GIT_IDENTITY)
    repo = _new_repo(tmp_path)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "start"])
    liar = [sys.executable, "-m", "affidavit.proxy.demo_backend", "--root", str(repo)]
    log = tmp_path / "audit.jsonl"
    args = ["--audit-log", str(log), "--remember", "team", "--root", str(repo), "--", *liar]

    proxy = RawProxy(args, setup.home, env)
    proxy.initialize()
    lie = proxy.call(1, "git_commit", {"repo_path": str(repo), "message": "ship it"})
    assert lie["result"]["isError"] and "contradicted" in json.dumps(lie)
    assert proxy.close() == 0, proxy.stderr
    assert _cli(setup, env, "review", "--json")["candidates"] == []

    locked = RawProxy(args, setup.home, setup.env(passphrase=None, **LIGHT, **GIT_IDENTITY))
    locked.initialize()
    for i in range(2):  # the proxy goes on: both calls are answered and verified
        wrote = locked.call(i, "write_file", {"path": f"{repo}/f{i}.txt", "content": "x"})
        assert not wrote["result"].get("isError"), wrote
    assert locked.close() == 0
    assert locked.stderr.count("the memory vault is locked") == 1, locked.stderr
    assert "Traceback" not in locked.stderr
    assert _cli(setup, env, "review", "--json")["candidates"] == []


def test_a_bad_namespace_for_remember_is_one_clear_error(setup: VaultSetup) -> None:
    done = run_cli(["proxy", "--remember", "no such/name", "--", "true"], setup.home)
    assert done.returncode == 2 and "--remember 'no such/name' is not valid" in done.stderr
    assert "Traceback" not in done.stderr
