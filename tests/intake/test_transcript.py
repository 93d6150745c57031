"""Reading a Claude Code transcript from an offset: whole lines only, text blocks only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
