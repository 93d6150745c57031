"""The vault's commands as a user and a script see them: real processes, one-line errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from affidavit.core.hashchain import GENESIS, link_hash
from affidavit.vault import DB_NAME, NewItem, Vault
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault


def cli(args: list[str], home: Path, env: dict[str, str], **extra: str) -> tuple[int, str, str]:
    done = run_cli(args, home, env={**env, **extra})
    for stream in (done.stdout, done.stderr):
        assert TEST_PASSPHRASE not in stream and "Traceback" not in stream
    return done.returncode, done.stdout, done.stderr


def seed(env: dict[str, str], *texts: str, namespace: str = "default") -> list[str]:
    """Store memories in the CLI's vault in-process (setup, not the thing under test)."""
    v = Vault.open(Path(env["AFFIDAVIT_VAULT"]), passphrase=TEST_PASSPHRASE)
    try:
        items = v.put_many(
            [
                NewItem(data={"text": t, "source": "s", "tags": ["t"]}, namespace=namespace)
                for t in texts
            ]
        )
        return [it.id for it in items]
    finally:
        v.close()


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("affidavit: error: ")
    return lines[0]


def test_init_creates_a_private_vault_and_refuses_to_overwrite(home: Path, tmp_path: Path) -> None:
    env = {"AFFIDAVIT_VAULT": str(tmp_path / "v"), "AFFIDAVIT_PASSPHRASE": "init passphrase one"}
    code, out, _ = cli(["init"], home, env)
    assert code == 0 and str(tmp_path / "v") in out
    assert (tmp_path / "v").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "v" / DB_NAME).stat().st_mode & 0o777 == 0o600
    before = (tmp_path / "v" / DB_NAME).read_bytes()
    code, _, err = cli(["init"], home, env)
    assert code == 4 and "already exists" in one_error_line(err)
    assert (tmp_path / "v" / DB_NAME).read_bytes() == before
    code, out, _ = cli(["store", "real default KDF works", "--source", "test", "--json"], home, env)
    assert code == 0 and json.loads(out)["id"]


def test_init_without_a_passphrase_on_a_pipe_is_refused(home: Path, tmp_path: Path) -> None:
    code, _, err = cli(["init"], home, {"AFFIDAVIT_VAULT": str(tmp_path / "v")})
    assert code == 6 and "AFFIDAVIT_PASSPHRASE" in one_error_line(err)
    assert not (tmp_path / "v").exists()


def test_init_with_a_new_keyfile_makes_a_two_factor_vault(home: Path, tmp_path: Path) -> None:
    keyfile = tmp_path / "usb" / "vault.key"
    keyfile.parent.mkdir()
    env = {
        "AFFIDAVIT_VAULT": str(tmp_path / "v"),
        "AFFIDAVIT_PASSPHRASE": "two factor passphrase",
        "AFFIDAVIT_RUNTIME_DIR": str(tmp_path),
    }
    code, out, _ = cli(["init", "--keyfile", str(keyfile), "--json"], home, env)
    assert code == 0 and json.loads(out)["two_factor"] is True
    assert keyfile.stat().st_size == 64 and keyfile.stat().st_mode & 0o777 == 0o600
    keyfile.rename(tmp_path / "elsewhere.key")
    code, _, err = cli(["status", "--json"], home, env)
    assert code == 3 and "keyfile" in one_error_line(err)
    code, out, _ = cli(
        ["status", "--json"], home, env, AFFIDAVIT_KEYFILE=str(tmp_path / "elsewhere.key")
    )
    assert code == 0 and json.loads(out)["state"] == "unlocked"


def test_store_get_forget_roundtrip(home: Path, cli_vault: dict[str, str]) -> None:
    code, out, _ = cli(
        [
            "store",
            "CI runs on port 8080",
            "--source",
            "from chat",
            "--namespace",
            "work",
            "--tag",
            "ci",
            "--tag",
            "ports",
            "--json",
        ],
        home,
        cli_vault,
    )
    assert code == 0
    stored = json.loads(out)
    assert stored["namespace"] == "work" and stored["status"] == "stored"
    code, out, _ = cli(["get", stored["id"], "--json"], home, cli_vault)
    assert json.loads(out)["memory"]["tags"] == ["ci", "ports"]
    code, out, _ = cli(["get", stored["id"]], home, cli_vault)
    assert code == 0 and out.splitlines()[0] == "CI runs on port 8080"
    assert "source: from chat" in out and "tags: ci, ports" in out
    code, out, _ = cli(["forget", stored["id"], "--shred", "--json"], home, cli_vault)
    assert code == 0 and json.loads(out)["shredded"] is True
    code, _, err = cli(["get", stored["id"]], home, cli_vault)
    assert code == 3 and "shredded" in one_error_line(err)


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["store", "  ", "--source", "s"], 2, "non-empty 'text'"),
        (["get", "0123456789abcdef0123"], 3, "no record"),
        (["export"], 2, "--plaintext"),
        (["import", "/nonexistent/file.jsonl"], 3, "does not exist"),
    ],
)
def test_bad_input_is_one_clear_line(
    home: Path, cli_vault: dict[str, str], args: list[str], code: int, needle: str
) -> None:
    got, _, err = cli(args, home, cli_vault)
    assert got == code and needle in one_error_line(err)


def test_no_vault_and_locked_vault_are_named(
    home: Path, tmp_path: Path, cli_vault: dict[str, str]
) -> None:
    code, _, err = cli(["status"], home, {"AFFIDAVIT_VAULT": str(tmp_path / "none")})
    assert code == 3 and "no vault at" in one_error_line(err)
    locked = {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"}
    code, _, err = cli(["store", "x", "--source", "s"], home, locked)
    assert code == 6 and "locked" in one_error_line(err)
    code, out, _ = cli(["status", "--json"], home, locked)
    assert code == 0 and json.loads(out)["state"] == "locked"
    code, _, err = cli(["get", "x"], home, cli_vault, AFFIDAVIT_PASSPHRASE="wrong")
    assert code == 6 and "wrong passphrase" in one_error_line(err)


def test_a_vault_from_a_newer_format_is_refused_untouched(
    home: Path, cli_vault: dict[str, str]
) -> None:
    db = Path(cli_vault["AFFIDAVIT_VAULT"]) / DB_NAME
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    before = db.read_bytes()
    code, _, err = cli(["store", "x", "--source", "s"], home, cli_vault)
    assert code == 9 and "format 2" in one_error_line(err) and "upgrade" in err
    assert db.read_bytes() == before


def test_unlock_then_lock(home: Path, cli_vault: dict[str, str]) -> None:
    code, out, _ = cli(["unlock", "--auto-lock", "15"], home, cli_vault)
    assert code == 0 and "auto-lock after 15" in out
    no_secret = {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"}
    code, out, _ = cli(["status", "--json"], home, no_secret)
    info = json.loads(out)
    assert info["state"] == "unlocked" and info["auto_lock_minutes"] == 15
    code, out, _ = cli(["lock"], home, no_secret)
    assert code == 0 and "locked" in out
    code, _, _ = cli(["store", "x", "--source", "s"], home, no_secret)
    assert code == 6
    code, out, _ = cli(["lock"], home, no_secret)
    assert code == 0 and "already locked" in out
    code, out, _ = cli(["unlock", "--once"], home, cli_vault)
    assert code == 0 and "next command" in out
    code, out, _ = cli(["get", "missing-id"], home, no_secret)  # opens, consuming the session
    assert code == 3
    code, out, _ = cli(["status", "--json"], home, no_secret)
    assert json.loads(out)["state"] == "locked"


def test_export_import_roundtrip_all_or_nothing(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    seed(cli_vault, "fact 0", "fact 1", "fact 2")
    code, out, err = cli(["export", "--plaintext"], home, cli_vault)
    assert code == 0 and "PLAINTEXT" in err
    rows = [json.loads(line) for line in out.splitlines()]
    assert sorted(r["data"]["text"] for r in rows) == ["fact 0", "fact 1", "fact 2"]
    dump = tmp_path / "dump.jsonl"
    dump.write_text(out)
    code, out, _ = cli(["import", str(dump), "--json"], home, cli_vault)
    assert code == 0 and json.loads(out)["already_present"] == 3

    other = {**cli_vault, "AFFIDAVIT_VAULT": str(tmp_path / "second")}
    create_test_vault(tmp_path / "second").close()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dump.read_text() + '{"id": "x1", "data": {"text": "no source"}}\n')
    code, _, err = cli(["import", str(bad)], home, other)
    assert code == 2 and "item 3" in one_error_line(err) and "nothing was imported" in err
    code, out, _ = cli(["status", "--json"], home, other)
    assert json.loads(out)["records"] == 0
    code, out, _ = cli(["import", str(dump), "--json"], home, other)
    assert json.loads(out)["imported"] == 3
    code, out, _ = cli(["export", "--plaintext"], home, other)
    assert sorted(json.loads(x)["id"] for x in out.splitlines()) == sorted(r["id"] for r in rows)


def test_status_json_counts_namespaces(home: Path, cli_vault: dict[str, str]) -> None:
    seed(cli_vault, "in a", namespace="a")
    seed(cli_vault, "in b", "in b again", namespace="b")
    code, out, _ = cli(["status", "--json"], home, cli_vault)
    info = json.loads(out)
    assert code == 0 and info["namespaces"] == {"a": 1, "b": 2} and info["format"] == 1
    assert info["audit"]["entries"] == 1 + 3 and len(info["audit"]["head"]) == 64
    assert info["size_bytes"] > 0
    _, out, _ = cli(["status"], home, cli_vault)
    assert "records: 3 (a 1, b 2)" in out


def test_passwd_and_two_factor_commands(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    seed(cli_vault, "kept across rekeys")
    code, _, err = cli(["passwd"], home, cli_vault)
    assert code == 6 and "AFFIDAVIT_NEW_PASSPHRASE" in one_error_line(err)
    code, _, _ = cli(["passwd"], home, cli_vault, AFFIDAVIT_NEW_PASSPHRASE="the second passphrase")
    assert code == 0
    code, _, _ = cli(["status", "--json"], home, cli_vault)
    assert code == 6
    env2 = {**cli_vault, "AFFIDAVIT_PASSPHRASE": "the second passphrase"}
    keyfile = tmp_path / "k.key"
    code, out, _ = cli(["2fa", "enable", "--keyfile", str(keyfile)], home, env2)
    assert code == 0 and keyfile.exists()
    keyfile.rename(tmp_path / "moved.key")
    code, _, err = cli(["status", "--json"], home, env2)
    assert code == 3 and "keyfile" in one_error_line(err)
    code, _, _ = cli(["2fa", "disable", "--keyfile", str(tmp_path / "moved.key")], home, env2)
    assert code == 0
    code, out, _ = cli(["export", "--plaintext"], home, env2)
    assert "kept across rekeys" in out
    code, out, _ = cli(["audit", "verify", "--json"], home, env2)
    report = json.loads(out)
    assert report["ok"] and report["ops"]["passwd"] == 1 and report["ops"]["2fa-enable"] == 1


def test_signed_manifest_verifies_without_a_passphrase(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    seed(cli_vault, "signed fact")
    out_file = tmp_path / "m.json"
    code, out, _ = cli(["lock", "--sign", "--out", str(out_file)], home, cli_vault)
    assert code == 0 and str(out_file) in out
    bare = {"AFFIDAVIT_RUNTIME_DIR": cli_vault["AFFIDAVIT_RUNTIME_DIR"]}
    vault_dir = cli_vault["AFFIDAVIT_VAULT"]
    code, out, _ = cli(["verify", str(out_file), "--vault", vault_dir, "--json"], home, bare)
    report = json.loads(out)
    assert code == 0 and report["records"] == 1 and report["vault_file"]
    code, _, _ = cli(["verify", str(out_file), "--key", report["signer"]], home, bare)
    assert code == 0
    code, _, err = cli(["verify", str(out_file), "--key", "SHA256:someoneelse"], home, bare)
    assert code == 6 and "pinned" in one_error_line(err)
    doc = json.loads(out_file.read_text())
    doc["manifest"]["records"] = 99
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    code, _, err = cli(["verify", str(forged)], home, bare)
    assert code == 6 and "signature" in one_error_line(err)
    seed(cli_vault, "written after signing")
    code, _, err = cli(["verify", str(out_file), "--vault", vault_dir], home, bare)
    assert code == 5 and "differs" in one_error_line(err)
    code, _, err = cli(["verify", str(tmp_path / "nothing.json")], home, bare)
    assert code == 3


def test_audit_verify_names_the_broken_entry(home: Path, cli_vault: dict[str, str]) -> None:
    seed(cli_vault, "m0", "m1", "m2")
    code, out, _ = cli(["audit", "verify"], home, cli_vault)
    assert code == 0 and "4 entries" in out
    conn = sqlite3.connect(Path(cli_vault["AFFIDAVIT_VAULT"]) / DB_NAME)
    with conn:
        conn.execute("DELETE FROM audit WHERE n = 4")
    conn.close()
    code, _, err = cli(["audit", "verify"], home, cli_vault)
    assert code == 5 and "truncated" in one_error_line(err)


def test_audit_verify_a_proxy_log(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    prev, lines = GENESIS, []
    for i in range(3):
        body = {"tool": "t", "n": i}
        digest = link_hash(prev, body)
        lines.append(json.dumps({"body": body, "prev": prev, "hash": digest}))
        prev = digest
    log.write_text("\n".join(lines) + "\n")
    code, out, _ = cli(["audit", "verify", "--log", str(log)], home, {})
    assert code == 0 and "3 entries" in out
    log.write_text(log.read_text().replace('"n": 1', '"n": 7'))
    code, out, err = cli(["audit", "verify", "--log", str(log), "--json"], home, {})
    assert code == 5 and json.loads(out)["broken_at"] == 2
    assert "entry 2" in one_error_line(err)


def _pty_run(args: list[str], env: dict[str, str], answers: list[str]) -> tuple[int, str]:
    """Run the CLI on a real pseudo-terminal, answering each prompt (``...: ``) in turn."""
    import os
    import pty
    import select
    import signal
    import sys

    pid, fd = pty.fork()
    if pid == 0:  # the child: a real process with the pty as its controlling terminal
        os.execve(sys.executable, [sys.executable, "-m", "affidavit", *args], env)  # noqa: S606
    screen, since = b"", b""
    pending = list(answers)
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:  # a prompt nobody answers: fail instead of hanging
            os.kill(pid, signal.SIGKILL)
            break
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # EIO: the child exited and closed the terminal
            break
        if not chunk:
            break
        screen += chunk
        since += chunk
        if pending and since.endswith(b": "):
            os.write(fd, (pending.pop(0) + "\n").encode())
            since = b""
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), screen.decode(errors="replace")


def test_init_on_a_terminal_asks_twice_and_never_echoes(home: Path, tmp_path: Path) -> None:
    from tests.support import cli_env

    env = cli_env(home, {"AFFIDAVIT_VAULT": str(tmp_path / "v")})
    code, screen = _pty_run(["init"], env, ["typed secret 1", "typed secret 2"])
    assert code == 2 and "differ" in screen and not (tmp_path / "v" / DB_NAME).exists()
    code, screen = _pty_run(["init"], env, ["typed secret 1", "typed secret 1"])
    assert code == 0 and "created an encrypted vault" in screen
    assert "typed secret" not in screen  # getpass never echoed it
    code, screen = _pty_run(
        ["store", "asked on the terminal", "--source", "tty"], env, ["typed secret 1"]
    )
    assert code == 0 and "Vault passphrase:" in screen
