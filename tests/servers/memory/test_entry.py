"""The fast ``serve`` entry: exactly the plain command line, everything else to typer."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.servers.memory_main import serve_args
from tests.support import run_cli


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["serve"], ("user", None)),
        (["serve", "--caller", "cursor"], ("cursor", None)),
        (["--assert-offline", "serve", "--caller=a", "--vault", "/v"], ("a", Path("/v"))),
        (["serve", "--help"], None),
        (["serve", "--caller"], None),
        (["serve", "--colour", "x"], None),
        (["grant", "a", "b", "rw"], None),
    ],
)
def test_serve_args(argv, expected):
    assert serve_args(argv) == expected


def test_a_bad_caller_name_is_one_line_before_any_mcp_traffic(home):
    done = run_cli(["serve", "--caller", "../etc"], home, input="")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("affidavit: error: caller '../etc' is not valid")
    assert done.stderr.count("\n") == 1
