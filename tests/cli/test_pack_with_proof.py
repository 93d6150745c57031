"""``pack build --from-vault`` carries each proven memory's evidence into its record as
``proof`` (issue 29, item 4): the signed pack still verifies in the verified-memory format,
``pack verify`` says how many records carry proof, and a stale proof is left out with a word.

Real processes on a real vault; a real proxy audit log; keys from the real ssh-keygen.
"""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.proxy import AuditLog
from tests.packs.conftest import make_key
from tests.support import run_cli

LIGHT = {"AFFIDAVIT_EMBEDDER": "off"}


def _ok(done) -> str:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return str(done.stdout)


def test_a_pack_from_a_vault_with_a_proven_memory_verifies_and_shows_its_proof(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    env = {**cli_vault, **LIGHT}
    logs = {}
    for name in ("kept", "edited"):
        logs[name] = tmp_path / name / "audit.jsonl"
        writer = AuditLog(logs[name], session="s1")
        body = {"kind": "call", "tool": "git_commit", "verdict": "verified", "verifier": "git"}
        writer.append({**body, "claim": "committed 'add notes'", "evidence": [{"observed": "ok"}]})
        writer.close()
        _ok(run_cli(["proxy", "trust-log", str(logs[name])], home, env=env))
    receipt = {"type": "receipt", "log": str(logs["kept"])}
    receipt["entry"] = json.loads(logs["kept"].read_text())["hash"]
    stale = {"type": "receipt", "log": str(logs["edited"])}
    stale["entry"] = json.loads(logs["edited"].read_text())["hash"]
    for text, extra in (
        ("commit 138ce5c on main adds 'add notes'", ["--evidence", json.dumps(receipt)]),
        ("The release train leaves on Thursdays", []),
        ("commit 9f0e1d2 on main adds 'fix'", ["--evidence", json.dumps(stale)]),
    ):
        _ok(run_cli(["store", text, "--source", "s", "--namespace", "team", *extra], home, env=env))
    edited = logs["edited"].read_text().replace('"s1"', '"s9"')
    logs["edited"].write_text(edited)  # its memory is stale now

    draft = tmp_path / "draft"
    from_vault = ["--from-vault", "--namespace", "team", "--title", "Team facts"]
    built = run_cli(["pack", "build", *from_vault, "--out", str(draft)], home, env=env)
    _ok(built)
    assert "without proof" in built.stderr and "no longer verifies" in built.stderr
    records = [json.loads(line) for line in (draft / "records.jsonl").read_text().splitlines()]
    proven = {r["statement"]: r["proof"] for r in records if "proof" in r}
    assert list(proven) == ["commit 138ce5c on main adds 'add notes'"]
    [item] = proven["commit 138ce5c on main adds 'add notes'"]["items"]
    assert item["type"] == "receipt" and item["entry"] == receipt["entry"]
    assert item["verdict"] == "verified" and item["tool"] == "git_commit"
    assert str(logs["kept"]) not in json.dumps(records)  # no local path in a published pack

    key = make_key(tmp_path / "keys")
    signed = tmp_path / "team-pack"
    _ok(
        run_cli(
            ["pack", "sign", "--pack", str(draft), "--key", str(key.private), "--expires", "30d",
             "--out", str(signed)],
            home, env=env,
        )
    )  # fmt: skip
    trusted = f"--trusted-fingerprint={key.fingerprint}"
    shown = _ok(run_cli(["pack", "verify", str(signed), trusted], home, env=env))
    assert "proof" in shown and "1 records carry proof (1 receipt)" in shown
    report = json.loads(_ok(run_cli(["pack", "verify", str(signed), trusted, "--json"], home)))
    assert report["proof"] == {"records": 1, "items": {"receipt": 1}}
    assert report["records"] == 3 and report["signature"]["status"] == "verified"
