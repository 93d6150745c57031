"""Check a pack in the browser: every ordered check, and the verdict `pack verify` gives."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.console.pages import TIMEOUT, open_console
from tests.packs._build_fixtures import build_sample
from tests.support import run_cli


def rows(page) -> list[tuple[str, str]]:
    """(check, status) of every row of the checks table, in order."""
    page.wait_for_selector("#result table.checks", timeout=TIMEOUT)
    return [
        (row.get_attribute("data-check"), row.get_attribute("data-status"))
        for row in page.locator("#result tr[data-check]").all()
    ]


def page_json(page) -> dict:
    return json.loads(page.locator("#result details pre").text_content())


def write_zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def check_zip(page, console, upload: Path) -> None:
    open_console(page, console, "/pack-check/")
    page.set_input_files("input[name=pack_zip]", str(upload))
    page.click("button:has-text('Check the pack')")


def check_folder(page, folder: Path, **flags: str) -> None:
    page.fill("input[name=pack_dir]", str(folder))
    for name, value in flags.items():
        page.fill(f"input[name={name}]", value)
    page.click("button:has-text('Check the pack')")


def test_a_good_pack_passes_every_check_with_the_verdict_of_pack_verify(
    start_console, page, tmp_path, home
):
    pack = build_sample(tmp_path / "sample")
    console = start_console()
    open_console(page, console, "/pack-check/")
    check_folder(page, pack)
    assert rows(page) == [
        ("files", "passed"),
        ("checksums", "passed"),
        ("records", "passed"),
        ("pack_json", "not applicable"),
        ("signature", "not applicable"),
        ("trust", "passed"),
        ("sequence", "not applicable"),
        ("expiry", "not applicable"),
    ]
    assert "VERIFIED" in page.inner_text("#result .notice.ok")
    cli = json.loads(run_cli(["pack", "verify", str(pack), "--json"], home).stdout)
    shown = page_json(page)
    assert {k: v for k, v in shown.items() if k != "judged_at"} == {
        k: v for k, v in cli.items() if k != "judged_at"
    }


def test_a_tampered_pack_shows_the_failing_check_and_what_was_not_reached(
    start_console, page, tmp_path, home
):
    pack = build_sample(tmp_path / "sample")
    records = pack / "records.jsonl"
    records.write_bytes(records.read_bytes().replace(b"Larkspur", b"Larkspar", 1))
    entries = {f"sample/{item.name}": item.read_bytes() for item in sorted(pack.iterdir())}
    check_zip(page, start_console(), write_zip(tmp_path / "tampered.zip", entries))
    assert rows(page) == [
        ("files", "passed"),
        ("checksums", "failed"),
        *(
            (check, "not reached")
            for check in ("records", "pack_json", "signature", "trust", "sequence", "expiry")
        ),
    ]
    cli = run_cli(["pack", "verify", str(pack), "--json"], home)
    assert cli.returncode != 0
    expected = json.loads(cli.stdout)
    shown = page_json(page)
    assert shown["verified"] is False and shown["check"] == expected["check"] == "checksums"
    assert shown["error"] == expected["error"]
    failing = page.locator("#result tr[data-check=checksums]").inner_text()
    assert "records.jsonl does not match its SHA256SUMS checksum (the file was changed)" in failing
    assert "REFUSED" in page.inner_text("#result .notice.error")


def test_trust_flags_are_read_as_pack_verify_reads_them(start_console, page, tmp_path):
    pack = build_sample(tmp_path / "sample")
    console = start_console()
    open_console(page, console, "/pack-check/")
    check_folder(page, pack, trusted_fingerprint="SHA256:" + "A" * 43)
    assert ("trust", "failed") in rows(page)
    assert "pack is unsigned, but a signer fingerprint is pinned" in page.inner_text("#result")
    page.fill("input[name=trusted_fingerprint]", "")
    check_folder(page, pack, min_sequence="two")
    error = page.locator(".notice.error").first.inner_text()
    assert error == "--min-sequence 'two' is not a whole number >= 0"


def test_an_unsafe_zip_is_refused_before_anything_is_checked(start_console, page, tmp_path):
    check_zip(page, start_console(), write_zip(tmp_path / "evil.zip", {"../../escape.txt": b"x"}))
    page.wait_for_selector(".notice.error", timeout=TIMEOUT)
    assert "is not a plain relative name" in page.inner_text(".notice.error")
    assert not (tmp_path.parent / "escape.txt").exists()
