"""Reading a Claude Code transcript from an offset: whole lines only, text blocks only."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.intake import transcript as transcript_module
from affidavit.intake.transcript import read_from
from tests.intake.conftest import line


def test_reads_user_and_assistant_text_and_skips_tools_meta_and_other_lines(
    transcript: Callable[..., Path],
) -> None:
    path = transcript(
        line("user", "We decided to ship on Fridays."),
        line(
            "assistant",
            [
                {"type": "text", "text": "The API listens on port 8080."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            ],
        ),
        line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "a b c"}]),
        line("user", "<command-name>/clear</command-name>", isMeta=True),
        '{"type": "summary", "summary": "Deploy talk"}\n',
    )
    chunk = read_from(path, 0)
    assert [(m.role, m.text) for m in chunk.messages] == [
        ("user", "We decided to ship on Fridays."),
        ("assistant", "The API listens on port 8080."),
    ]
    assert chunk.offset == path.stat().st_size and chunk.unreadable_lines == 0


def test_a_half_written_line_waits_for_the_next_read(transcript: Callable[..., Path]) -> None:
    whole = line("user", "We decided to ship on Fridays.")
    half = line("user", "Alice owns billing.")
    path = transcript(whole, half[:20])
    first = read_from(path, 0)
    assert len(first.messages) == 1 and first.offset == len(whole.encode())
    transcript(half[20:])
    second = read_from(path, first.offset)
    assert [m.text for m in second.messages] == ["Alice owns billing."]


def test_a_broken_line_is_counted_not_fatal(transcript: Callable[..., Path]) -> None:
    path = transcript("{not json\n", line("user", "Alice owns billing."))
    chunk = read_from(path, 0)
    assert chunk.unreadable_lines == 1 and len(chunk.messages) == 1


def test_a_shorter_file_than_the_offset_is_read_from_the_start(
    transcript: Callable[..., Path],
) -> None:
    path = transcript(line("user", "Alice owns billing."))
    assert len(read_from(path, 10_000).messages) == 1


def test_a_long_backlog_is_read_a_bounded_chunk_per_run(
    transcript: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = [line("user", f"Shelf {n} holds {n} boxes.") for n in range(40)]
    path = transcript(*said)
    monkeypatch.setattr(transcript_module, "MAX_CHUNK", len(said[0]) * 7 + 3)
    texts, offset, runs = [], 0, 0
    while offset < path.stat().st_size:
        chunk = read_from(path, offset)
        texts += [m.text for m in chunk.messages]
        offset, runs = chunk.offset, runs + 1
    assert texts == [f"Shelf {n} holds {n} boxes." for n in range(40)] and runs > 5


def test_a_line_longer_than_a_chunk_and_deep_nesting_are_skipped_not_fatal(
    transcript: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = transcript("[" * 100_000 + "]" * 100_000 + "\n", line("user", "Alice owns billing."))
    chunk = read_from(path, 0)
    assert [m.text for m in chunk.messages] == ["Alice owns billing."]
    assert chunk.unreadable_lines == 1
    monkeypatch.setattr(transcript_module, "MAX_CHUNK", 1000)
    first = read_from(path, 0)
    assert (first.messages, first.unreadable_lines, first.offset) == ((), 1, 1000)


def test_a_fifo_named_as_the_transcript_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "s-1.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        read_from(fifo, 0)
