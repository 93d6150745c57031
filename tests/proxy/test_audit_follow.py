"""Following the audit log as it grows (the console's live view): new entries, links checked."""

from __future__ import annotations

import pytest

from affidavit.proxy.audit import AuditLog, LogFollower, verify_log


def test_each_poll_returns_what_was_appended_since(tmp_path):
    path = tmp_path / "audit.jsonl"
    follower = LogFollower(path)
    assert follower.poll().entries == () and follower.report.ok  # no log yet: nothing, no error
    log = AuditLog(path, session="s")
    for tool in ("a", "b"):
        log.append({"kind": "call", "tool": tool})
    assert [e["tool"] for e in follower.poll().entries] == ["a", "b"]
    assert follower.poll().entries == ()
    log.append({"kind": "call", "tool": "c"})
    assert [e["tool"] for e in follower.poll().entries] == ["c"]
    assert follower.report == verify_log(path)


def test_a_line_being_written_is_read_once_it_is_whole(tmp_path):
    path = tmp_path / "audit.jsonl"
    AuditLog(path, session="s").append({"kind": "call", "tool": "a"})
    whole = path.read_bytes()
    AuditLog(path, session="s").append({"kind": "call", "tool": "b"})
    second = path.read_bytes()[len(whole) :]
    path.write_bytes(whole + second[:20])  # an append caught halfway
    follower = LogFollower(path)
    assert [e["tool"] for e in follower.poll().entries] == ["a"]
    with path.open("ab") as handle:
        handle.write(second[20:])
    assert [e["tool"] for e in follower.poll().entries] == ["b"]
    assert follower.report.ok and follower.report.entries == 2


@pytest.mark.parametrize("damage", ["edit", "delete"])
def test_a_break_is_reported_where_the_walk_finds_it_and_later_entries_still_come(tmp_path, damage):
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, session="s")
    for index in range(4):
        log.append({"kind": "call", "tool": f"t{index}"})
    lines = path.read_bytes().splitlines(keepends=True)
    if damage == "edit":
        lines[1] = lines[1].replace(b'"t1"', b'"tX"')
    else:
        del lines[1]
    path.write_bytes(b"".join(lines))
    follower = LogFollower(path)
    assert len(follower.poll().entries) == len(lines)
    report = follower.report
    assert not report.ok and report.first_break == verify_log(path).first_break
    assert report.first_break is not None and report.first_break.index == 1


def test_a_replaced_or_shortened_log_starts_over(tmp_path):
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, session="s")
    log.append({"kind": "call", "tool": "old"})
    follower = LogFollower(path)
    assert len(follower.poll().entries) == 1
    path.unlink()
    assert follower.poll().restarted
    AuditLog(path, session="s").append({"kind": "call", "tool": "new"})
    update = follower.poll()
    assert [e["tool"] for e in update.entries] == ["new"] and not update.restarted
    assert follower.report.ok and follower.report.entries == 1


def test_a_long_log_is_caught_up_with_over_several_polls(tmp_path):
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, session="s")
    for index in range(50):
        log.append({"kind": "call", "tool": f"t{index}"})
    follower = LogFollower(path)
    line = len(path.read_bytes()) // 50
    seen = []
    for _ in range(50):
        seen += [entry["tool"] for entry in follower.poll(max_bytes=10 * line).entries]
    assert seen == [f"t{index}" for index in range(50)]
    assert follower.report == verify_log(path)
    assert [e["tool"] for e in LogFollower(path).poll(max_bytes=3).entries] == ["t0"]
