"""The proxy's demo section, run for real: lie caught, honest write verified, retry replayed."""

from __future__ import annotations

import json
import subprocess

from affidavit.cli import demo_proxy


def test_demo_section_shows_the_three_outcomes(tmp_path, capsys, monkeypatch, home):
    monkeypatch.setenv("AFFIDAVIT_HOME", str(home / ".affidavit"))
    demo_proxy.run(tmp_path)
    out = capsys.readouterr().out
    assert "CONTRADICTED" in out and "VERIFIED" in out
    assert "answered from the verified result" in out and "chain intact" in out
    entries = [
        json.loads(line)["body"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()
    ]
    assert [(e["tool"], e["verdict"], e["outcome"]) for e in entries] == [
        ("git_commit", "contradicted", "result"),
        ("write_file", "verified", "result"),
        ("write_file", "verified", "replayed"),
    ]
    assert (tmp_path / "repo" / "notes.md").read_text() == "Verified notes.\n"
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "repo"), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert log.stdout.strip() == "1"  # the "commit" the liar reported never happened
