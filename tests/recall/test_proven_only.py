"""``search(proven_only=True)``: only memories whose evidence holds at this read; a filter,
so the ranking of what is left is the ranking without it (ADR 0221)."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.proxy import AuditLog
from affidavit.recall import Memory, trust_log
from affidavit.recall.claims import Claim
from affidavit.recall.evidence import ToolReceipt


def _verified_log(vault, path: Path) -> ToolReceipt:
    """A proxy audit log holding one verified commit, registered as trusted (as `affidavit
    proxy trust-log` does), and that entry's receipt."""
    writer = AuditLog(path, session="s1")
    writer.append({"kind": "call", "tool": "git_commit", "verdict": "verified", "claim": "c"})
    writer.close()
    trust_log(vault, path)
    return ToolReceipt(str(path), json.loads(path.read_text())["hash"])


def test_proven_only_keeps_memories_whose_proof_holds_now(vault, tmp_path: Path) -> None:
    memory = Memory(vault, embedder=None)
    kept = _verified_log(vault, tmp_path / "kept" / "audit.jsonl")
    edited = _verified_log(vault, tmp_path / "edited" / "audit.jsonl")
    said = memory.store(Claim("The deploy branch is release", "chat"))["id"]
    proven = memory.store(Claim("The deploy branch is main", "proxy", evidence=(kept,)))["id"]
    later = memory.store(Claim("The deploy branch is staging", "proxy", evidence=(edited,)))["id"]

    every = [h["id"] for h in memory.search("deploy branch", top_k=3)["results"]]
    assert set(every) == {said, proven, later}
    only = memory.search("deploy branch", top_k=3, proven_only=True)["results"]
    assert [h["id"] for h in only] == [i for i in every if i != said]
    assert all(h["evidence"]["status"] == "proven" for h in only)

    Path(edited.log).write_text(Path(edited.log).read_text().replace('"s1"', '"s9"'))
    only = memory.search("deploy branch", top_k=3, proven_only=True)["results"]
    assert [h["id"] for h in only] == [proven]  # stale now: still readable, not proven
    assert memory.get_memory(later)["evidence"]["status"] == "stale"
    assert memory.search("nothing about it at all", proven_only=True)["results"] == []
