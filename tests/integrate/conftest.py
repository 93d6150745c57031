"""Fixtures for integrate tests: a fake HOME and affidavit home, never the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

# Every variable a known client reads to move its config: a test sees none of the real ones.
CLIENT_ENV = (
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "APPDATA",
    "LOCALAPPDATA",
    "CODEX_HOME",
    "COPILOT_HOME",
    "CLAUDE_CONFIG_DIR",
    "HERMES_HOME",
    "OPENCLAW_CONFIG_PATH",
    "OPENCLAW_STATE_DIR",
    "OPENCLAW_HOME",
    "CRUSH_GLOBAL_CONFIG",
    "JAN_DATA_ROOT",
)


@pytest.fixture
def fake_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, AFFIDAVIT_HOME and the XDG/APPDATA/client overrides at a temp dir."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AFFIDAVIT_HOME", str(home / ".affidavit"))
    for name in CLIENT_ENV:
        monkeypatch.delenv(name, raising=False)
    return home
