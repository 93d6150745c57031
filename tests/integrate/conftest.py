"""Fixtures for integrate tests: a fake HOME and affidavit home, never the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def fake_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, AFFIDAVIT_HOME and the XDG/APPDATA/client overrides at a temp dir."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AFFIDAVIT_HOME", str(home / ".affidavit"))
    for name in ("XDG_CONFIG_HOME", "APPDATA", "CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home
