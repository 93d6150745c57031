"""Importers on a real vault: a claim per piece, skips with reasons, all or nothing, idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.core.errors import InputError, NotFoundError
from affidavit.intake import Format, read_plan, store_plan
from affidavit.recall import Memory
from affidavit.vault import Vault
from tests.exports.synthetic import write_chatgpt, write_claude

NOTES = """---
title: front matter is skipped
---
# Deploy
- Deploys run every Friday at 9pm UTC.
- The deploy key lives in vault/deploy.
  It rotates every 90 days.

A paragraph is not a bullet.

## People
* [x] Alice owns billing.
- Bob reports to Alice.
- Deploys run every Friday at 9pm UTC.
- {long}

```sh
- not a bullet inside code
```
"""

CHATS = [
    (
        "Deploy planning",
        [
            ("user", "We decided to ship releases on Fridays. Can you draft the notes?"),
            ("assistant", "Sure. The release train leaves at 9pm on Fridays."),
            ("user", "Thanks!"),
        ],
    ),
    ("Staging", [("user", "No, the staging database is db-2, not db-1.")]),
]


@pytest.fixture
def memory(vault: Vault) -> Memory:
    return Memory(vault, embedder=None)


def _notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_text(NOTES.format(long="Logs are kept " + "for a long time " * 20 + "."))
    return path


def _texts(memory: Memory) -> list[str]:
    return sorted(m["text"] for m in memory.recent(limit=100))


def test_markdown_one_claim_per_bullet_heading_as_tag_and_every_skip_has_a_reason(
    memory: Memory, tmp_path: Path
) -> None:
    plan = read_plan(Format.MARKDOWN, _notes(tmp_path), memory.max_chars)
    assert [(n.text, n.tags) for n in plan.notes] == [
        ("Deploys run every Friday at 9pm UTC.", ("deploy",)),
        ("The deploy key lives in vault/deploy. It rotates every 90 days.", ("deploy",)),
        ("Alice owns billing.", ("people",)),
        ("Bob reports to Alice.", ("people",)),
        ("Deploys run every Friday at 9pm UTC.", ("people",)),
    ]
    reasons = {s.where.rsplit(":", 1)[1]: s.reason for s in plan.skipped}
    assert "paragraph" in reasons["9"] and "code block" in reasons["17"]
    assert "at most 200 characters" in reasons["15"]
    stored = store_plan(memory, plan)
    assert (stored.stored, stored.duplicates) == (4, 1)  # the repeated bullet is stored once
    assert store_plan(memory, read_plan(Format.MARKDOWN, _notes(tmp_path), 200)).stored == 0
    assert len(_texts(memory)) == 4


def test_claude_memory_reads_every_md_file_of_a_folder(memory: Memory, tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    (folder / "topics").mkdir(parents=True)
    (folder / "CLAUDE.md").write_text("# Style\n- Use uv, not pip.\n@topics/deploy.md\n")
    (folder / "topics" / "deploy.md").write_text("- Staging lives on db-2.\n")
    plan = read_plan(Format.CLAUDE_MEMORY, folder, memory.max_chars)
    assert [(n.text, n.tags) for n in plan.notes] == [
        ("Use uv, not pip.", ("claude-memory", "style")),
        ("Staging lives on db-2.", ("claude-memory",)),
    ]
    assert [s.reason.split(" (")[0] for s in plan.skipped] == ["an import of another file"]
    assert plan.notes[1].source == str(folder / "topics" / "deploy.md")


@pytest.mark.parametrize(
    ("fmt", "write"), [(Format.CHATGPT, write_chatgpt), (Format.CLAUDE, write_claude)]
)
def test_chat_exports_keep_what_the_user_stated_dated_by_message(
    memory: Memory, tmp_path: Path, fmt: Format, write: object
) -> None:
    path = write(tmp_path / "conversations.json", CHATS)  # type: ignore[operator]
    plan = read_plan(fmt, path, memory.max_chars)
    assert [(n.text, n.tags[1], n.discovered) for n in plan.notes] == [
        ("We decided to ship releases on Fridays.", "decision", "2026-03-02"),
        ("No, the staging database is db-2, not db-1.", "correction", "2026-03-02"),
    ]
    reasons = sorted(s.reason for s in plan.skipped)
    assert reasons == [
        "no decision, preference, correction or fact in it",
        "the assistant's words: only what the user said is imported",
    ]
    assert store_plan(memory, plan).stored == 2
    assert store_plan(memory, read_plan(fmt, path, 200)).stored == 0


def test_compartment_jsonl_memories_in_relations_and_bad_texts_skipped(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    rows = [
        {
            "text": "Alice owns billing.",
            "source": "chat",
            "tags": ["people"],
            "discovered": 1764547200,
        },
        {"data": {"text": "Staging lives on db-2.", "kind": "fact"}, "namespace": "work"},
        {"subject": "alice", "predicate": "owns", "object": "billing"},
        {"text": "- one\n- two"},
        {"id": "x"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    plan = read_plan(Format.COMPARTMENT, path, memory.max_chars)
    assert [(n.text, n.source, n.tags, n.discovered) for n in plan.notes] == [
        ("Alice owns billing.", "chat", ("people",), "2025-12-01"),
        ("Staging lives on db-2.", "compartment export.jsonl", (), None),
    ]
    assert [s.where for s in plan.skipped] == ["export.jsonl:3", "export.jsonl:4", "export.jsonl:5"]
    assert store_plan(memory, plan, namespace="imported").stored == 2
    assert {m["namespace"] for m in memory.recent(limit=10)} == {"imported"}


def test_a_bad_file_stores_nothing(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps({"text": "Alice owns billing."}) + "\n{broken\n")
    with pytest.raises(InputError, match=r"export\.jsonl:2 is not JSON"):
        read_plan(Format.COMPARTMENT, path, memory.max_chars)
    chats = tmp_path / "conversations.json"
    chats.write_text('[{"mapping": {}, "title": "x"')
    with pytest.raises(InputError):
        read_plan(Format.CHATGPT, chats, memory.max_chars)
    with pytest.raises(NotFoundError, match="does not exist"):
        read_plan(Format.MARKDOWN, tmp_path / "missing.md", memory.max_chars)
    assert _texts(memory) == []


def test_a_batch_the_store_refuses_stores_none_of_it(memory: Memory, tmp_path: Path) -> None:
    from affidavit.core.errors import PolicyError

    plan = read_plan(Format.MARKDOWN, _notes(tmp_path), memory.max_chars)
    with pytest.raises((InputError, PolicyError)):
        store_plan(memory, plan, namespace="bad namespace!")
    assert _texts(memory) == []
