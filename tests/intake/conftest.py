"""Fixtures for intake tests: a real test vault, and transcripts in Claude Code's shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.vault.conftest import (  # noqa: F401
    cli_vault,
    make_vault,
    runtime_dir,
    store,
    vault,
    vault_dir,
)

#: Keyword-only recall: these tests are about what gets stored, not about embeddings.
LIGHT = {"AFFIDAVIT_EMBEDDER": "off"}


def line(role: str, content: Any, stamp: str = "2026-12-01T10:00:00Z", **extra: Any) -> str:
    """One transcript line as Claude Code writes it: type, message with role and content."""
    row = {
        "type": role,
        "sessionId": "s-1",
        "timestamp": stamp,
        "message": {"role": role, "content": content},
        **extra,
    }
    return json.dumps(row) + "\n"


@pytest.fixture
def transcript(tmp_path: Path) -> Callable[..., Path]:
    """Append lines to a session transcript (``~/.claude/projects/.../SESSION.jsonl``)."""
    path = tmp_path / "projects" / "demo" / "s-1.jsonl"
    path.parent.mkdir(parents=True)
    path.touch()

    def append(*lines: str) -> Path:
        with path.open("a", encoding="utf-8") as handle:
            handle.writelines(lines)
        return path

    return append
