"""Evidence on a memory, judged: a citation into an installed signed pack, a receipt from the
proxy's audit log, and the attacks that must not make a memory ``proven`` (an edited log, a
swapped entry, a quote off by one character, a pack changed or uninstalled after the store,
an unsigned pack, the wrong signer).

Real parts: packs built and signed with ``ssh-keygen``, installed in a real vault; audit logs
written by the proxy's own writer.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.packs import TrustOptions, sign_pack
from affidavit.proxy import AuditLog, check_receipt
from affidavit.recall import Memory, trust_log
from affidavit.recall.claims import Claim
from affidavit.recall.evidence import (
    Evidence,
    EvidenceCheck,
    EvidenceStatus,
    PackCitation,
    ToolReceipt,
    parse_evidence,
)
from affidavit.recall.installed_packs import install, uninstall
from affidavit.recall.receipt_logs import trusted_logs
from tests.packs._build_fixtures import build_sample
from tests.packs.conftest import make_key

QUOTE = "Borrowing is free for members."
RECORD = "M-library-2"


def _hashes(log: Path) -> list[str]:
    return [json.loads(line)["hash"] for line in log.read_text().splitlines()]


class _Judge:
    """The memory's judge over its installed packs, synced as a read would sync them."""

    def __init__(self, vault) -> None:
        self.memory = Memory(vault, embedder=None)
        self.sync()

    def sync(self) -> None:
        self.memory.packs.sync(self.memory.index)

    def judge(self, items: list[Evidence]) -> EvidenceCheck:
        trusted = trusted_logs(self.memory.vault)
        return self.memory.judge.judge(items, self.memory.packs, trusted)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A proxy audit log: a verified commit, a contradicted write, a verified CI run."""
    path = tmp_path / "audit" / "audit.jsonl"
    writer = AuditLog(path, session="s1")
    for tool, verdict in (("git_commit", "verified"), ("write_file", "contradicted")):
        writer.append({"kind": "call", "tool": tool, "verdict": verdict, "claim": tool})
    writer.append({"kind": "call", "tool": "ci_run", "verdict": "verified", "claim": "CI"})
    writer.close()
    return path


def test_a_verified_entry_of_an_intact_log_proves_its_call(log: Path) -> None:
    verified, contradicted, _ = _hashes(log)
    assert check_receipt(log, verified).holds
    refused = check_receipt(log, contradicted)
    assert not refused.holds and "contradicted" in refused.reason
    assert "no entry" in check_receipt(log, "0" * 64).reason
    assert "cannot be read" in check_receipt(log.with_name("gone.jsonl"), verified).reason


def test_an_edited_log_proves_nothing_not_even_its_untouched_entries(log: Path) -> None:
    verified, _, last = _hashes(log)
    lines = log.read_text().splitlines()
    edited = json.loads(lines[1])
    edited["body"]["verdict"] = "verified"  # the attacker turns the lie into a proof
    log.write_text("\n".join([lines[0], json.dumps(edited), lines[2]]) + "\n")
    for entry in (verified, last):
        check = check_receipt(log, entry)
        assert not check.holds and "no longer verifies" in check.reason


def test_swapped_entries_break_the_chain(log: Path) -> None:
    first, _, last = _hashes(log)
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[2], lines[1], lines[0]]) + "\n")
    assert not check_receipt(log, first).holds
    assert not check_receipt(log, last).holds


def test_the_judge_sees_a_log_edited_after_it_said_proven(vault, log: Path) -> None:
    trust_log(vault, log)  # as `affidavit proxy trust-log` would
    judge = _Judge(vault)
    receipt = ToolReceipt(str(log), _hashes(log)[0])
    assert judge.judge([receipt]).status is EvidenceStatus.PROVEN
    AuditLog(log, session="s2").append({"kind": "call", "verdict": "verified"})
    assert judge.judge([receipt]).status is EvidenceStatus.PROVEN  # an honest append
    log.write_text(log.read_text().replace('"s1"', '"s9"', 1))
    stale = judge.judge([receipt])
    assert stale.status is EvidenceStatus.STALE and "no longer verifies" in stale.reasons[0]
    assert judge.judge([]).status is EvidenceStatus.UNPROVEN


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, str]:
    """The sample pack signed with a fresh Ed25519 key, and the key's fingerprint."""
    key = make_key(tmp_path / "keys")
    out = tmp_path / "library"
    expires = datetime.now(UTC) + timedelta(days=30)
    sign_pack(build_sample(tmp_path / "draft"), key.private, expires, out, sequence=1)
    return out, key.fingerprint


def test_a_quote_verbatim_in_a_signed_record_proves_and_a_near_quote_does_not(
    vault, signed
) -> None:
    pack, fingerprint = signed
    install(vault, pack, TrustOptions(trusted_fingerprints=(fingerprint,)), "library")
    judge = _Judge(vault)
    good = PackCitation("library", fingerprint, RECORD, QUOTE)
    assert judge.judge([good]).status is EvidenceStatus.PROVEN
    attacks = {
        "the quote is not verbatim": PackCitation("library", fingerprint, RECORD, QUOTE[:-1] + "!"),
        "signed by": PackCitation("library", "SHA256:" + "A" * 43, RECORD, QUOTE),
        "holds no record": PackCitation("library", fingerprint, "M-library-99", QUOTE),
        "no pack named": PackCitation("other", fingerprint, RECORD, QUOTE),
    }
    for reason, citation in attacks.items():
        check = judge.judge([good, citation])
        assert check.status is EvidenceStatus.STALE and reason in check.reasons[0], check


def test_a_pack_changed_or_uninstalled_after_the_store_makes_the_memory_stale(
    vault, signed
) -> None:
    pack, fingerprint = signed
    install(vault, pack, TrustOptions(trusted_fingerprints=(fingerprint,)), "library")
    memory = Memory(vault, embedder=None)
    citation = PackCitation("library", fingerprint, RECORD, QUOTE)
    stored = memory.store(
        Claim("Tool loans are free for members", "the library's pack", evidence=(citation,))
    )
    proven = memory.get_memory(stored["id"])["evidence"]
    assert proven == {"status": "proven", "items": [citation.as_dict()]}
    records = pack / "records.jsonl"
    records.write_bytes(records.read_bytes().replace(b"free", b"paid"))
    stale = memory.get_memory(stored["id"])
    assert stale["evidence"]["status"] == "stale", stale
    assert "changed on disk" in stale["evidence"]["reasons"][0]
    assert stale["text"] == "Tool loans are free for members"  # still readable, and says so
    uninstall(vault, "library")
    gone = memory.get_memory(stored["id"])["evidence"]
    assert "no pack named library" in gone["reasons"][0]


def test_an_unsigned_pack_proves_nothing(vault, tmp_path: Path) -> None:
    unsigned = build_sample(tmp_path / "unsigned")
    install(vault, unsigned, TrustOptions(), "loose", allow_unsigned=True)
    judge = _Judge(vault)
    check = judge.judge([PackCitation("loose", "SHA256:x", RECORD, QUOTE)])
    assert check.status is EvidenceStatus.STALE and "proves nothing" in check.reasons[0]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("a string", "must be a list"),
        ([{"type": "url"}], "must be 'pack' or 'receipt'"),
        ([{"type": "receipt", "log": "audit.jsonl", "entry": "0" * 64}], "absolute path"),
        ([{"type": "receipt", "log": "/tmp/a.jsonl", "entry": "xyz"}], "64 hex"),
        ([{"type": "pack", "pack": "p", "signer": "s", "record": "M-1"}], "quote"),
        ([{"type": "receipt", "log": "/a", "entry": "0" * 64}] * 2, "same item twice"),
        ([{"type": "receipt", "log": f"/{i}", "entry": "0" * 64} for i in range(9)], "at most"),
    ],
)
def test_malformed_evidence_is_one_clear_error(raw: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_evidence(raw)


def test_evidence_round_trips_through_its_wire_form() -> None:
    items = (
        PackCitation("library", "SHA256:abc", RECORD, QUOTE),
        ToolReceipt("/var/log/audit.jsonl", "a" * 64),
    )
    assert parse_evidence([item.as_dict() for item in items]) == items


def test_evidence_that_does_not_check_refuses_the_whole_batch(vault, signed, log: Path) -> None:
    pack, fingerprint = signed
    install(vault, pack, TrustOptions(trusted_fingerprints=(fingerprint,)), "library")
    trust_log(vault, log)
    memory = Memory(vault, embedder=None)
    good = Claim(
        "Commit 1 made it to main", "the proxy", evidence=(ToolReceipt(str(log), _hashes(log)[0]),)
    )
    near = PackCitation("library", fingerprint, RECORD, QUOTE.replace("free", "Free"))
    bad = Claim("Loans are free", "the library's pack", evidence=(near,))
    with pytest.raises(InputError, match=r"item 1: evidence\[0\] does not check: the quote"):
        memory.store_many([good, bad])
    assert memory.recent() == []  # nothing stored with a false claim of proof
    lie = Claim(
        "The file was written", "the proxy", evidence=(ToolReceipt(str(log), _hashes(log)[1]),)
    )
    with pytest.raises(InputError, match="contradicted"):
        memory.store(lie)
    stored = memory.store(good)
    assert memory.get_memory(stored["id"])["evidence"]["status"] == "proven"
