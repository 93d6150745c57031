"""A memory's evidence in a real browser: the quote marked inside its signed record, the
proxy call with its verdict and the audit chain's state, the status on every row, and
"re-check now" after the proof stopped holding.

Real parts: packs signed with ``ssh-keygen`` and installed in a real vault, audit logs written
by the proxy's own writer, a real ``affidavit console`` process, Debian's Chromium through
Playwright. The screenshots of docs/evidence.md are taken here
(``AFFIDAVIT_SCREENSHOTS=docs/console pytest tests/console/test_memory_evidence.py`` writes
them).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from affidavit.packs import TrustOptions, sign_pack
from affidavit.packs.build import build_pack
from affidavit.proxy import AuditLog
from affidavit.recall import Memory, PackCitation, ToolReceipt, trust_log
from affidavit.recall.claims import Claim
from affidavit.recall.installed_packs import install
from tests.console.pages import TIMEOUT, open_console
from tests.console.test_guard import request, sign_in
from tests.packs._build_fixtures import SAMPLE_MESSAGES, SAMPLE_RECORDS, build_sample
from tests.packs.conftest import make_key
from tests.support import run_cli
from tests.vault.conftest import create_test_vault, vault_env

RECORD = "M-library-2"
QUOTE = "borrow for free"
HOSTILE = "<script>document.title='owned'</script>"
COMMIT = "Commit 138ce5c on main adds 'add notes'"


def _shoot(page: Any, name: str) -> None:
    """Save the evidence panel as docs/images/NAME.png when screenshots are asked for."""
    folder = os.environ.get("AFFIDAVIT_SCREENSHOTS")
    if folder:
        page.locator("#evidence").screenshot(path=str(Path(folder) / f"{name}.png"))


def _signed_pack(tmp_path: Path, draft: Path) -> tuple[Path, str]:
    key = make_key(tmp_path / "keys")
    out = tmp_path / "library"
    expires = datetime.now(UTC) + timedelta(days=30)
    sign_pack(draft, key.private, expires, out, sequence=1)
    return out, key.fingerprint


def _vault(tmp_path: Path) -> tuple[Any, dict[str, str]]:
    path = tmp_path / "vault"
    return create_test_vault(path), vault_env(path, tmp_path / "run")


def _store(vault: Any, text: str, *evidence: PackCitation | ToolReceipt) -> str:
    for item in evidence:
        if isinstance(item, ToolReceipt):
            trust_log(vault, item.log)  # as `affidavit proxy trust-log` would
    memory = Memory(vault, embedder=None)
    return str(memory.store(Claim(text, "test", evidence=evidence))["id"])


def _call_log(tmp_path: Path, message: str = "add notes") -> tuple[Path, str]:
    """An audit log holding one verified commit, as the proxy writes it; the entry's hash."""
    log = tmp_path / "audit" / "audit.jsonl"
    writer = AuditLog(log, session="s1")
    writer.append(
        {
            "kind": "call",
            "ts": "2026-12-04T18:02:11Z",
            "tool": "git_commit",
            "arguments": {"repo": "/srv/notes", "message": message},
            "verdict": "verified",
            "verifier": "git",
            "evidence": [{"observed": "commit 138ce5c is on main", "where": "git rev-parse"}],
        }
    )
    writer.close()
    return log, json.loads(log.read_text().splitlines()[0])["hash"]


def _recheck(page: Any) -> None:
    page.click("#recheck-form button")
    page.wait_for_selector("#evidence .notice", timeout=TIMEOUT)


def test_a_pack_citation_shows_its_quote_in_the_record_until_the_pack_is_uninstalled(
    start_console, page, home, tmp_path
):
    pack, fingerprint = _signed_pack(tmp_path, build_sample(tmp_path / "draft"))
    vault, env = _vault(tmp_path)
    install(vault, pack, TrustOptions(trusted_fingerprints=(fingerprint,)), "library")
    memory_id = _store(
        vault,
        "Members borrow tools for free",
        PackCitation("library", fingerprint, RECORD, QUOTE),
    )
    vault.close()
    console = start_console(env=env)
    open_console(page, console, f"/memory/m/{memory_id}")
    panel = page.locator("#evidence")
    assert panel.get_attribute("data-status") == "proven"
    item = panel.locator(".evidence-item.pack")
    assert item.get_attribute("data-holds") == "yes"
    assert item.locator("mark.cited").inner_text() == QUOTE
    record = item.locator("blockquote.record-text").inner_text()
    assert record.startswith("Members borrow for free;")  # the statement, quote inside
    assert fingerprint in item.inner_text() and "library" in item.inner_text()
    _shoot(page, "evidence-pack-proven")

    done = run_cli(["pack", "uninstall", "library"], home, env=env)
    assert done.returncode == 0, done.stderr
    _recheck(page)
    assert panel.get_attribute("data-status") == "stale"
    assert "Re-checked now: stale" in panel.inner_text()
    assert (
        "no pack named library is installed" in panel.locator(".evidence-item .notice").inner_text()
    )
    assert page.locator("#memory .chip.evidence-status").inner_text() == "stale"
    _shoot(page, "evidence-pack-stale")


def test_a_receipt_shows_the_call_its_verdict_and_the_chain_then_stale_once_edited(
    start_console, page, home, tmp_path
):
    log, entry = _call_log(tmp_path)
    vault, env = _vault(tmp_path)
    memory_id = _store(vault, COMMIT, ToolReceipt(str(log), entry))
    plain = _store(vault, "Mira prefers green tea over coffee")
    vault.close()
    console = start_console(env=env)

    open_console(page, console, "/memory/")  # the newest memories: a status on every row
    page.wait_for_selector("#results", timeout=TIMEOUT)
    rows = page.locator("#results li")
    badges = {
        row.locator("a").first.inner_text(): row.locator(".chip.evidence-status").inner_text()
        for row in rows.all()
    }
    assert badges == {COMMIT: "proven", "Mira prefers green tea over coffee": "unproven"}

    page.goto(f"{console.root}/memory/m/{memory_id}")
    panel = page.locator("#evidence")
    assert panel.get_attribute("data-status") == "proven"
    item = panel.locator(".evidence-item.receipt")
    assert item.locator(".verdict").inner_text() == "verified"
    assert item.locator(".chain").get_attribute("data-chain") == "ok"
    assert json.loads(item.locator("pre.arguments").inner_text()) == {
        "message": "add notes",
        "repo": "/srv/notes",
    }
    assert "commit 138ce5c is on main" in item.locator("ul.observed").inner_text()
    _shoot(page, "evidence-receipt-proven")

    lines = log.read_text().splitlines()
    edited = json.loads(lines[0])
    edited["body"]["tool"] = "git_push"  # the attacker rewrites what was proven
    log.write_text(json.dumps(edited) + "\n")
    _recheck(page)
    assert panel.get_attribute("data-status") == "stale"
    assert "no longer verifies" in panel.locator(".evidence-item .notice").inner_text()
    assert item.locator(".chain").get_attribute("data-chain") == "broken"
    assert item.get_attribute("data-holds") == "no"
    assert "git_push" not in panel.inner_text()  # a broken chain's entry is not shown as proof
    _shoot(page, "evidence-receipt-stale")
    page.goto(f"{console.root}/memory/m/{plain}")
    assert "No evidence" in page.locator("#evidence").inner_text()


def test_quotes_records_and_recorded_calls_are_shown_as_text_never_run(
    start_console, page, tmp_path
):
    """A signed record and an audit log are someone else's data: markup in them is text."""
    draft = tmp_path / "sources"
    draft.mkdir()
    records = SAMPLE_RECORDS.read_text(encoding="utf-8").replace(
        "Members borrow for free;", f"Members borrow for free {HOSTILE};"
    )
    (draft / "records.jsonl").write_text(records, encoding="utf-8")
    shutil.copy(SAMPLE_MESSAGES, draft / "messages.jsonl")
    build_pack(draft / "messages.jsonl", draft / "records.jsonl", tmp_path / "draft", "Hostile")
    pack, fingerprint = _signed_pack(tmp_path, tmp_path / "draft")
    log, entry = _call_log(tmp_path, message=f"notes {HOSTILE}")
    vault, env = _vault(tmp_path)
    install(vault, pack, TrustOptions(trusted_fingerprints=(fingerprint,)), "library")
    quote = f"free {HOSTILE}"
    memory_id = _store(
        vault,
        "Borrowing is free",
        PackCitation("library", fingerprint, RECORD, quote),
        ToolReceipt(str(log), entry),
    )
    vault.close()
    console = start_console(env=env)
    open_console(page, console, f"/memory/m/{memory_id}")
    panel = page.locator("#evidence")
    assert panel.get_attribute("data-status") == "proven"
    assert panel.locator("mark.cited").inner_text() == quote
    assert HOSTILE in panel.locator("pre.arguments").inner_text()
    assert panel.locator("script").count() == 0
    assert page.title() != "owned"


def test_re_check_is_a_guarded_post(start_console, tmp_path):
    log, entry = _call_log(tmp_path)
    vault, env = _vault(tmp_path)
    memory_id = _store(vault, COMMIT, ToolReceipt(str(log), entry))
    vault.close()
    console = start_console(env=env)
    path = f"/memory/m/{memory_id}/recheck"
    form = {"Origin": console.origin, "Content-Type": "application/x-www-form-urlencoded"}
    assert request(console, "POST", path, form, "")[0] == 401  # no session
    cookie = sign_in(console)
    evil = {**form, "Cookie": cookie, "Origin": "http://evil.example"}
    assert request(console, "POST", path, evil, "")[0] == 403  # another page's form
    status, _, body = request(console, "POST", path, {**form, "Cookie": cookie}, "")
    assert status == 200 and "Re-checked now: proven" in body
    status, _, body = request(console, "POST", "/memory/m/nope/recheck", {**form, "Cookie": cookie})
    assert status == 400 and "Traceback" not in body
