"""Fixtures for the build, search and serve tests: the sample input and MCP helpers.

Complements ``conftest.py`` (key fixtures and ``write_pack``); nothing here writes a pack by
hand except through the real builder or ``write_pack``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from affidavit.packs import format as fmt
from affidavit.packs.build import build_pack

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "affidavit" / "packs" / "sample"
SAMPLE_MESSAGES = SAMPLE / "messages.jsonl"
SAMPLE_RECORDS = SAMPLE / "records.jsonl"
SAMPLE_TITLE = "Larkspur Lane tool library"


def build_sample(out: Path) -> Path:
    """Build the fictional sample pack at ``out`` with the real builder."""
    build_pack(SAMPLE_MESSAGES, SAMPLE_RECORDS, out, SAMPLE_TITLE, "Invented sample data.")
    return out


def jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    """Write rows (dicts as JSON, strings as given) one per line."""
    lines = [row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def pack_records(pack: Path) -> list[dict[str, Any]]:
    """The records of a pack as stored."""
    lines = (pack / fmt.RECORDS).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def tool_body(result: Any) -> dict[str, Any]:
    """A successful tool result's object, after checking text and structuredContent agree."""
    assert result.is_error is not True, result.content
    assert len(result.content) == 1 and result.content[0].type == "text"
    body = json.loads(result.content[0].text)
    assert body == result.structured_content
    return body


def tool_error(result: Any) -> str:
    """An ``isError`` tool result's one message."""
    assert result.is_error is True
    assert result.structured_content is None
    return result.content[0].text


def seal_and_sign(pack: Path, key: Any, meta: dict[str, Any] | None = None) -> Path:
    """Add PACK.json (if given), reseal and sign with the real ``ssh-keygen -Y sign``."""
    from tests.packs.conftest import keygen_sign, reseal

    if meta is not None:
        (pack / fmt.PACK_JSON).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    reseal(pack)
    keygen_sign(pack, key)
    return pack
