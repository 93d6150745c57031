"""The pack maker, end to end in a real browser: export in, verified (and signed) pack out."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path

from affidavit.packs.verify import verify_pack
from tests.console.pages import (
    TIMEOUT,
    add_record,
    build,
    check_result,
    load_export,
    quote_sentence,
)
from tests.exports.synthetic import write_chatgpt, write_claude
from tests.support import run_cli


def test_a_chatgpt_export_becomes_a_pack_that_pack_verify_accepts(
    start_console, page, tmp_path, home
):
    export = write_chatgpt(tmp_path / "conversations.json")
    console = start_console()
    load_export(page, console, export)
    quote_sentence(page, "I run the tool library on Larkspur Lane.")
    add_record(page, "Running the tool library", "roles")
    page.click("a:has-text('Bike repair')")
    quote_sentence(page, "The repair café opens on Saturday mornings at nine.")
    page.fill("textarea[name=statement]", "The repair café opens Saturdays at nine.")
    add_record(page, "Repair café hours", "places")
    out = tmp_path / "library-pack"
    build(page, "Tool library", folder=out)
    assert page.locator("#built").is_visible(), page.inner_text("main")

    verified = run_cli(["pack", "verify", str(out), "--json"], home)
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["records"] == 2
    records = {r["record_id"]: r for r in verify_pack(out).records}
    assert records["M-1"]["role"] == "user" and records["M-1"]["speaker"] == "user"
    assert records["M-1"]["evidence"][0]["quote"] == "I run the tool library on Larkspur Lane."
    cafe = records["M-2"]
    assert cafe["statement"] == "The repair café opens Saturdays at nine."
    assert (
        cafe["evidence"][0]["message_id"] == 4 and cafe["date_first_utc"] == "2026-03-02T09:21:00Z"
    )


def test_a_quote_that_is_not_verbatim_is_refused_with_the_builders_message(
    start_console, page, tmp_path, home
):
    export = write_chatgpt(tmp_path / "conversations.json")
    console = start_console()
    load_export(page, console, export)
    quote_sentence(page, "Borrowing is free for members.")
    page.fill("input[name=topic]", "Fees")
    page.fill("input[name=category]", "rules")
    check_result(page, "ok")
    page.fill("textarea[name=quote-0]", "Borrowing is free for everyone.")
    said = check_result(page, "error")
    assert page.locator("#add-record").is_disabled()

    # the same record given to `pack build` on the command line: the same words
    records = tmp_path / "records.jsonl"
    record = {
        "record_id": "M-1",
        "role": "user",
        "topic": "Fees",
        "category": "rules",
        "quotes": [{"message_id": 1, "quote": "Borrowing is free for everyone."}],
    }
    records.write_text(json.dumps(record) + "\n")
    cli = run_cli(
        [
            "pack",
            "build",
            "--from-chatgpt",
            str(export),
            "--records",
            str(records),
            "--out",
            str(tmp_path / "p"),
            "--title",
            "T",
        ],
        home,
    )
    builder_says = cli.stderr.strip().removeprefix("affidavit: error: ")
    assert "does not appear verbatim in message 1" in builder_says
    assert said == f"Refused — {builder_says}"


def test_selected_words_are_cited_at_their_code_point_offset(start_console, page, tmp_path):
    text = "🎉 Party on the 12th. Bring 🍰 cake and chairs."
    export = write_claude(tmp_path / "conversations.json", [("Party", [("user", text)])])
    console = start_console()
    load_export(page, console, export)
    # select "cake and chairs" with a real DOM selection, then release the mouse over it
    page.evaluate(
        """(words) => {
            const node = document.querySelector('.message .text');
            const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
            let text;
            while ((text = walker.nextNode())) {
                const at = text.data.indexOf(words);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(text, at);
                range.setEnd(text, at + words.length);
                const selection = window.getSelection();
                selection.removeAllRanges();
                selection.addRange(range);
                node.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
                return;
            }
            throw new Error('words not found');
        }""",
        "cake and chairs",
    )
    page.fill("input[name=topic]", "Party")
    page.fill("input[name=category]", "events")
    start = text.index("cake and chairs")  # code points: each emoji counts once, not twice
    said = check_result(page, "ok")
    assert f"#1 [{start}, {start + len('cake and chairs')})" in said


def test_a_signed_pack_downloads_as_a_zip_that_verifies_pinned_and_strict(
    start_console, page, tmp_path, home
):
    key = tmp_path / "pack-signing"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tester", "-f", str(key)], check=True
    )
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-E", "sha256", "-f", f"{key}.pub"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[1]
    export = write_chatgpt(tmp_path / "conversations.json")
    console = start_console()
    load_export(page, console, export)
    quote_sentence(page, "Drills go out for three days.")
    add_record(page, "Loan periods", "rules")
    build(page, "Loan rules", key=key)
    assert fingerprint in page.inner_text("#built")
    with page.expect_download(timeout=TIMEOUT) as download:
        page.click("a:has-text('Download loan-rules.zip')")
    data = Path(download.value.path()).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == sorted(
            f"loan-rules/{name}"
            for name in (
                "MEMORY.md",
                "PACK.json",
                "README.md",
                "SHA256SUMS",
                "SHA256SUMS.sig",
                "records.jsonl",
            )
        )
        archive.extractall(tmp_path / "unzipped")
    pack = tmp_path / "unzipped" / "loan-rules"
    done = run_cli(
        [
            "pack",
            "verify",
            str(pack),
            "--trusted-fingerprint",
            fingerprint,
            "--strict",
            "--min-sequence",
            "1",
        ],
        home,
    )
    assert done.returncode == 0, done.stderr
    assert "pinned" in done.stdout
