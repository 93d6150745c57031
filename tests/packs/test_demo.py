"""The evidence section of ``affidavit demo``, run for real in a child process."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_demo_section


def test_demo_builds_signs_verifies_serves_and_refuses_tampering(
    tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_demo_section("packs", work, home)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "built a pack of 10 records" in out
    assert "signed it with a throwaway key: SHA256:" in out
    assert "signature: verified, signer pinned, pinned=True" in out
    assert "freshness: fresh until" in out and "authenticated=True" in out
    assert "tools: verified_memory_search, verified_memory_get" in out
    assert "M-loans-2" in out and "Pell returned the ladder" in out
    assert "after a file was touched: affidavit: pack files changed on disk" in out
    assert "key code edited: pack refused: records.jsonl does not match" in out
    assert "edited and resealed: pack refused: SHA256SUMS.sig" in out
    assert sorted(p.name for p in work.iterdir()) == [
        "keys",
        "pack",
        "resealed",
        "signed",
        "tampered",
    ]
