"""docs/cli.md is the commands' own help: regenerate it when a command changes."""

from __future__ import annotations

from affidavit.cli.reference import render
from tests.support import REPO_ROOT

DOC = REPO_ROOT / "docs" / "cli.md"


def test_docs_cli_md_matches_the_commands() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: run `python -m affidavit.cli.reference > docs/cli.md`"
    )


def test_the_reference_covers_every_command_once() -> None:
    text = render()
    for path in (
        "affidavit memory store",
        "affidavit pack verify",
        "affidavit proxy run",
        "affidavit dev serve",
        "affidavit memory 2fa enable",
        "affidavit completion",
    ):
        assert text.count(f"\n## {path}\n") == 1, path
    assert "\n## affidavit store\n" not in text  # aliases: listed in the root's section only
