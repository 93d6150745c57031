"""``affidavit console`` on the command line: its errors are one clear line."""

from __future__ import annotations

import socket

from affidavit.core.errors import ConflictError
from tests.support import run_cli


def test_a_bad_port_is_a_one_line_usage_error(home):
    done = run_cli(["console", "--port", "eighty", "--no-browser"], home)
    assert done.returncode == 2
    assert "Invalid value for '--port': 'eighty' is not a valid integer" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_port_in_use_is_one_clear_error(home):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli(
            ["console", "--host", "127.0.0.1", "--port", str(port), "--no-browser"], home
        )
    assert done.returncode == ConflictError.exit_code
    assert done.stderr.strip().splitlines() == [
        f"affidavit: error: port {port} on 127.0.0.1 is in use; "
        "pick another --port, or leave it out"
    ]


def test_a_host_that_is_not_loopback_is_a_one_line_usage_error(home):
    done = run_cli(["console", "--host", "192.0.2.1", "--no-browser"], home)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "affidavit: error: --host 192.0.2.1 is not a loopback address; "
        "use 127.x.y.z, or leave it out"
    ]
