"""``affidavit console`` on the command line: the fast path reads only what it knows."""

from __future__ import annotations

import socket

import pytest

from affidavit.cli.console import fast_settings
from affidavit.core.errors import ConflictError
from affidavit.proxy.audit import default_log_path
from tests.support import run_cli


def test_the_fast_path_reads_a_plain_console_command_line(tmp_path):
    log = tmp_path / "audit.jsonl"
    chosen = fast_settings(
        ["--assert-offline", "console", "--port=8123", "--no-browser", "--audit-log", str(log)]
    )
    assert chosen is not None
    assert (chosen.port, chosen.open_browser, chosen.audit_log) == (8123, False, log)
    defaults = fast_settings(["console"])
    assert defaults is not None and defaults.port is None and defaults.open_browser
    assert defaults.audit_log == default_log_path().absolute()


@pytest.mark.parametrize(
    "argv",
    [
        ["console", "--help"],
        ["console", "-h"],
        ["console", "--port", "eighty"],
        ["console", "--port"],
        ["console", "--port", "1", "--port", "2"],
        ["console", "--no-browser=yes"],
        ["console", "--bogus"],
        ["pack", "verify", "/x"],
    ],
)
def test_anything_else_is_left_to_typer(argv):
    assert fast_settings(argv) is None


def test_a_bad_port_is_typers_one_line_error(home):
    done = run_cli(["console", "--port", "eighty", "--no-browser"], home)
    assert done.returncode == 2
    assert "Invalid value for '--port': Input should be a valid integer" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_port_in_use_is_one_clear_error(home):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli(["console", "--port", str(port), "--no-browser"], home)
    assert done.returncode == ConflictError.exit_code
    assert done.stderr.strip().splitlines() == [
        f"affidavit: error: port {port} on 127.0.0.1 is in use; "
        "pick another --port, or leave it out"
    ]
