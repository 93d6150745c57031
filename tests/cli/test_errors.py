"""What a user sees when the command line is wrong, and where log records go: one line each."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.cli import logs
from tests.support import run_cli


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memory", "store"], "Missing argument 'TEXT'; see `affidavit memory store --help`"),
        (["stor"], "No such command 'stor'. Did you mean 'store'?"),  # a lazy group suggests too
        (["proxy", "replya"], "No such command 'replya'. Did you mean 'replay'?"),  # not `run`
        (["memory", "lock", "--sign=yes"], "Option '--sign' does not take a value"),
        (["unlock", "--auto-lock", "-1"], "-1 is not in the range x>=0"),
        (["memory", "store", "x", "--source"], "Option '--source' requires an argument"),
        (["serve", "--colour", "x"], "No such option '--colour'"),
        (["-v", "-q", "memory", "status"], "--verbose and --quiet contradict each other"),
    ],
)
def test_a_usage_mistake_is_one_line_with_exit_2(home: Path, args: list[str], message: str) -> None:
    done = run_cli(args, home)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("affidavit: error: ") and done.stderr.count("\n") == 1
    assert message in done.stderr


@pytest.mark.parametrize("path", [["store"], ["memory", "store"]])
def test_text_beginning_with_a_dash_gets_the_double_dash_hint(home: Path, path: list[str]) -> None:
    done = run_cli([*path, "-5 degrees is the freezer setting", "--source", "chat"], home)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    command = " ".join(["affidavit", *path])
    assert f"is not an option of `{command}`; if it begins your text, put -- before" in done.stderr


def test_a_group_without_a_command_shows_its_help(home: Path) -> None:
    done = run_cli(["memory"], home)
    assert done.returncode == 2
    assert "Usage: affidavit memory [OPTIONS] COMMAND" in done.stderr


def test_the_proxy_runs_with_or_without_its_run_subcommand(home: Path) -> None:
    log = ["--audit-log", str(home / "a.jsonl")]
    for args in (["proxy", "run", *log], ["proxy", *log], ["proxy", *log, "--"]):
        done = run_cli(args, home)
        assert done.returncode == 2 and "no backend command" in done.stderr, (args, done.stderr)


def test_verbose_shows_affidavits_info_records(home: Path, tmp_path: Path) -> None:
    from tests.vault.conftest import create_test_vault, vault_env

    create_test_vault(tmp_path / "vault").close()
    env = vault_env(tmp_path / "vault", tmp_path / "run")
    told = run_cli(["-v", "memory", "recent"], home, env=env)
    assert told.returncode == 0, told.stderr
    assert told.stderr == f"affidavit: info: opened the vault at {tmp_path / 'vault'}\n"
    assert run_cli(["memory", "recent"], home, env=env).stderr == ""


def test_affidavit_debug_shows_affidavits_own_records_as_verbose_does(
    home: Path, tmp_path: Path
) -> None:
    """A server an MCP client starts gets no -vv; AFFIDAVIT_DEBUG=1 is how its bugs' tracebacks
    reach stderr (ADR 102), so the variable raises affidavit's log records as -vv does."""
    from tests.vault.conftest import create_test_vault, vault_env

    create_test_vault(tmp_path / "vault").close()
    env = vault_env(tmp_path / "vault", tmp_path / "run") | {"AFFIDAVIT_DEBUG": "1"}
    told = run_cli(["memory", "recent"], home, env=env)
    assert told.returncode == 0, told.stderr
    assert f"affidavit: info: opened the vault at {tmp_path / 'vault'}\n" in told.stderr


def test_other_libraries_stay_at_warnings_even_at_debug(home: Path) -> None:
    """The MCP SDK's debug records may quote a message (a passphrase for memory_unlock), and
    a server's stderr lands in the client's log: -vv is for affidavit's own records."""
    chatty = run_cli(["-vv", "serve"], home, input="")
    assert chatty.returncode == 0 and chatty.stdout == ""
    assert "Initializing server" not in chatty.stderr and chatty.stderr == ""


def test_quiet_leaves_out_warnings(home: Path, tmp_path: Path) -> None:
    """`pack verify` of an expired pack warns; --quiet keeps the report and drops the warning."""
    from tests.packs.conftest import pack_json, write_pack

    pack = write_pack(tmp_path / "pack", pack_json=pack_json(expires="2027-01-01T00:00:00Z"))
    args = ["pack", "verify", str(pack), "--at", "2027-06-01T00:00:00Z"]
    loud = run_cli(args, home)
    assert (
        loud.stderr
        == "affidavit: warning: pack expired at 2027-01-01T00:00:00Z; serving it as stale\n"
    )
    quiet = run_cli(["--quiet", *args], home)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == loud.stdout


@pytest.fixture
def own_logging() -> Iterator[None]:
    """Let a test configure logging in this process, and put pytest's own back afterwards."""
    root, ours = logging.getLogger(), logging.getLogger("affidavit")
    handlers, levels = root.handlers[:], (root.level, ours.level)
    yield
    root.handlers[:] = handlers
    root.setLevel(levels[0])
    ours.setLevel(levels[1])


@pytest.mark.usefixtures("own_logging")
def test_a_log_record_is_one_line_with_controls_shown(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(1)
    log = logging.getLogger("affidavit.test")
    log.debug("not shown at info")
    logging.getLogger("mcp.test").info("another library's info: not shown")
    log.info("stored \x1b]52;c;AAAA\x07\nline two")
    try:
        raise ValueError("bad\nvalue")
    except ValueError:
        log.warning("could not read", exc_info=True)
    assert capsys.readouterr().err.splitlines() == [
        "affidavit: info: stored ␛]52;c;AAAA␇␊line two",
        "affidavit: warning: could not read (ValueError: bad␊value)",
    ]
