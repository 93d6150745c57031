"""Suite-wide settings: the offline guard is on in this process and in every child."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from affidavit.core import offline

os.environ["AFFIDAVIT_ASSERT_OFFLINE"] = "1"
offline.install()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh fake home directory for one test."""
    path = tmp_path / "home"
    path.mkdir()
    return path
