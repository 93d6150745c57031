"""``affidavit devserver`` refuses a bad --repo-path with one line, before any MCP traffic."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_cli


def test_bad_repo_paths_are_one_line_errors(repo: Path, home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for path, message, code in (
        (plain, "is not a git work tree", 3),
        (repo / "src", "is inside the git work tree", 2),
    ):
        done = run_cli(["devserver", "--repo-path", str(path)], home)
        assert done.returncode == code, done.stderr
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("affidavit: error: ")
        assert message in lines[0]
