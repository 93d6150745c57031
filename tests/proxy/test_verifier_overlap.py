"""Overlap windows: concurrent calls excuse each other; an abandoned window does not linger."""

from __future__ import annotations

from affidavit.proxy.verifiers.base import Evidence, Receipt, Verdict
from affidavit.proxy.verifiers.overlap import Overlaps, excuse_overlap


def test_calls_in_flight_together_overlap_both_ways() -> None:
    windows = Overlaps()
    first = windows.begin(["/repo"])
    second = windows.begin(["/repo"])
    elsewhere = windows.begin(["/other"])
    assert windows.end(first) is True  # the second started while the first was in flight
    assert windows.end(second) is True  # the first was still open when the second began
    assert windows.end(elsewhere) is False


def test_an_abandoned_window_does_not_excuse_later_calls() -> None:
    """The relay skips the verdict when the backend answers with an error: no free pass."""
    windows = Overlaps(grace_s=0.0)
    windows.begin(["/repo"])  # never ended
    later = windows.begin(["/repo"])
    assert windows.end(later) is False


def test_a_finished_call_does_not_overlap_the_next() -> None:
    windows = Overlaps()
    done = windows.begin(["/repo"])
    assert windows.end(done) is False
    after = windows.begin(["/repo"])
    assert windows.end(after) is False


def test_only_contradictions_are_excused() -> None:
    seen = (Evidence("HEAD moved twice", "/repo"),)
    lie = Receipt(Verdict.CONTRADICTED, "git", "committed", seen)
    excused = excuse_overlap(lie, True)
    assert excused.verdict is Verdict.UNCHECKED and len(excused.evidence) == 2
    assert excuse_overlap(lie, False) is lie
    ok = Receipt(Verdict.VERIFIED, "git", "committed", seen)
    assert excuse_overlap(ok, True) is ok


def test_a_file_key_overlaps_only_itself_and_what_holds_it() -> None:
    """Writes to two files of one repository are independent; a repository-wide call (a
    commit, a status read) overlaps every file call inside that repository."""
    windows = Overlaps()
    a, b = windows.begin(["/repo/a.txt"]), windows.begin(["/repo/b.txt"])
    outside = windows.begin(["/repository-two/a.txt"])
    assert windows.end(a) is False and windows.end(b) is False
    assert windows.end(outside) is False
    write = windows.begin(["/repo/src/x.py"])
    commit = windows.begin(["/repo"])
    assert windows.end(commit) is True and windows.end(write) is True
