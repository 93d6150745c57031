"""``affidavit serve`` (``memory serve``) through the one parser: a bad command line is one line
before any MCP traffic. (The hand parser of the old fast entry, and its test, are gone: ADR 2.)"""

from __future__ import annotations

import pytest

from tests.support import run_cli


def test_a_bad_caller_name_is_one_line_before_any_mcp_traffic(home):
    done = run_cli(["serve", "--caller", "../etc"], home, input="")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("affidavit: error: caller '../etc' is not valid")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "serve", "--caller=../etc"],
        ["--assert-offline", "serve", "--vault", "/v", "--caller", "../etc"],
    ],
)
def test_every_spelling_reaches_the_same_check(home, args):
    done = run_cli(args, home, input="")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("affidavit: error: caller '../etc' is not valid")
