"""The CLI's error contract: one line on stderr, a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_cli


def test_version(home: Path) -> None:
    result = run_cli(["--version"], home)
    assert result.returncode == 0
    assert result.stdout.startswith("affidavit ")


def test_unknown_option_is_a_usage_error_without_traceback(home: Path) -> None:
    result = run_cli(["--no-such-flag"], home)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "No such option" in result.stderr


def test_no_arguments_prints_help_and_fails(home: Path) -> None:
    result = run_cli([], home)
    assert result.returncode == 2
    assert "Usage" in result.stdout + result.stderr
