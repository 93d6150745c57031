"""Inputs an SDK client cannot even send, but raw JSON can (a lone surrogate): refused cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.servers.dev import files


def test_lone_surrogates_are_refused_without_writing(repo: Path) -> None:
    with pytest.raises(InputError, match="lone surrogate"):
        files.write_file(repo, "a.txt", "bad \ud800 text")
    with pytest.raises(InputError, match="lone surrogate"):
        files.write_file(repo, "\udcff.txt", "fine")
    assert sorted(p.name for p in repo.iterdir()) == [".git", "README.md", "src"]
