"""Screenshots of every console page, for docs/console.md.

Run: ``python scripts/console_screenshots.py [--out docs/console]``. Drives a real console
(and a real proxy in front of the lying backend of the proxy tests) with Debian's Chromium
through Playwright, on invented data, and writes one PNG per page.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.console.browser import RunningConsole, launch_chromium  # noqa: E402
from tests.console.pages import (  # noqa: E402
    add_record,
    build,
    check_result,
    load_export,
    open_console,
    quote_sentence,
)
from tests.exports.synthetic import write_chatgpt  # noqa: E402
from tests.proxy._verifier_fixtures import LYING_BACKEND, init_repo  # noqa: E402
from tests.support import cli_env  # noqa: E402

CONVERSATIONS = [
    (
        "Tool library",
        [
            ("user", "I run the tool library on Larkspur Lane. Borrowing is free for members."),
            ("assistant", "Noted: you run the tool library, and members borrow for free."),
            ("user", "Drills go out for three days. Everything else goes out for a week."),
            ("assistant", "Three days for drills, a week for the rest."),
        ],
    ),
    (
        "Repair café",
        [
            ("user", "The repair café opens on Saturday mornings at nine. Bring your own tea."),
            ("assistant", "Saturday at nine, tea not included."),
        ],
    ),
    ("Garden plot", [("user", "Our plot is number 14, next to the compost bins.")]),
]


def _env(home: Path) -> dict[str, str]:
    env = cli_env(home)
    env["PYTHONPATH"] = str(REPO)
    return env


def pack_pages(page: Any, console: RunningConsole, work: Path, out: Path) -> Path:
    """The pack maker (loaded, refused, built) and the checker (verified, tampered)."""
    export = write_chatgpt(work / "conversations.json", CONVERSATIONS)
    load_export(page, console, export)
    quote_sentence(page, "I run the tool library on Larkspur Lane.")
    add_record(page, "Running the tool library", "roles")
    quote_sentence(page, "Drills go out for three days.")
    quote_sentence(page, "Everything else goes out for a week.")
    page.fill("input[name=topic]", "Loan periods")
    page.fill("input[name=category]", "rules")
    check_result(page, "ok")
    page.screenshot(path=str(out / "pack-maker.png"), full_page=True)
    page.fill("textarea[name=quote-1]", "Everything else goes out for two weeks.")
    check_result(page, "error")
    page.locator(".maker").screenshot(path=str(out / "pack-maker-refused.png"))
    page.fill("textarea[name=quote-1]", "Everything else goes out for a week.")
    add_record(page, "Loan periods", "rules")

    key = work / "pack-signing"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "librarian", "-f", str(key)],
        check=True,
    )
    pack = work / "library-pack"
    build(page, "Tool library", folder=pack, key=key)
    page.screenshot(path=str(out / "pack-built.png"), full_page=True)

    fingerprint = page.locator("#built dd").filter(has_text="SHA256:").first.inner_text()
    page.goto(console.root + "/pack-check/")
    page.fill("input[name=pack_dir]", str(pack))
    page.fill("input[name=trusted_fingerprint]", fingerprint)
    page.check("input[name=strict]")
    page.click("button:has-text('Check the pack')")
    page.wait_for_selector("#result")
    page.screenshot(path=str(out / "pack-check.png"), full_page=True)

    records = pack / "records.jsonl"
    records.write_bytes(records.read_bytes().replace(b"Larkspur", b"Larkspar"))
    page.fill("input[name=pack_dir]", str(pack))
    page.click("button:has-text('Check the pack')")
    page.wait_for_selector("#result .notice.error")
    page.locator("#result").screenshot(path=str(out / "pack-check-tampered.png"))
    return pack


def proxy_page(page: Any, console: RunningConsole, work: Path, home: Path, out: Path) -> None:
    """Proxy calls: verified, contradicted and denied calls, a filter and a policy replay."""
    from _rpc import LineClient  # benchmarks/_rpc.py

    repo = init_repo(work / "repo")
    plan = work / "plan.json"
    plan.write_text(json.dumps({"git_commit": "fabricated"}))
    policy = work / "policy.yaml"
    policy.write_text(
        'rules:\n  - tool: "git_checkout"\n    action: deny\n    reason: stay on main\n'
    )
    backend = [sys.executable, str(LYING_BACKEND), "--repo-path", str(repo), "--plan", str(plan)]
    argv = [sys.executable, "-m", "affidavit", "proxy", "--audit-log", str(home / "audit.jsonl")]
    argv += ["--policy", str(policy), "--root", str(repo), "--", *backend]
    open_console(page, console, "/proxy/")
    proxy = LineClient(argv, _env(home), cwd=REPO)
    try:
        proxy.initialize()
        for name, arguments in [
            ("write_file", {"path": "notes.txt", "content": "opening hours\n"}),
            ("git_commit", {"message": "Add opening hours"}),
            ("git_branch", {"name": "winter-hours"}),
            ("git_checkout", {"name": "winter-hours"}),
            ("write_file", {"path": "rota.txt", "content": "Saturday: Ada\n"}),
        ]:
            proxy.request("tools/call", {"name": name, "arguments": arguments})
    finally:
        proxy.close()
    page.locator("#calls tr[data-index='5']").wait_for()
    stricter = work / "stricter.yaml"
    stricter.write_text(
        'default: require-approval\nrules:\n  - tool: "write_*"\n    action: allow\n'
    )
    page.fill("input[name=policy]", str(stricter))
    page.click("#replay-form button")
    page.wait_for_selector("#replay .notice")
    page.screenshot(path=str(out / "proxy.png"), full_page=True)


MEMORIES = [
    (
        "The tool library on Larkspur Lane opens Tuesday to Saturday",
        ["library", "hours"],
        "2026-03-02",
    ),
    (
        "Drills go out for three days; everything else for a week",
        ["library", "loans"],
        "2026-03-02",
    ),
    ("Ada runs the Saturday shift at the tool library", ["library", "people"], "2026-04-11"),
    ("The repair café meets on Saturday mornings at nine", ["repair-cafe", "hours"], "2026-05-20"),
    ("Ravi fixes bicycles at the repair café", ["repair-cafe", "people"], "2026-06-01"),
    ("Our garden plot is number 14, next to the compost bins", ["garden"], "2026-07-15"),
    ("The compost is turned on the first Sunday of each month", ["garden", "hours"], "2026-08-03"),
    ("Late returns pay no fine but lose borrowing for a week", ["library", "loans"], "2026-09-09"),
]


def memory_pages(page: Any, work: Path, out: Path) -> None:
    """The memory section on an invented vault: search, a corrected memory, the graph, an
    import, captured candidates to review, the overview and the locked vault."""
    from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, vault_env

    from affidavit.recall import Memory

    vault_path = work / "memory-vault"
    vault = create_test_vault(vault_path)
    memory = Memory(vault)
    ids = [
        memory.store(text=t, source="chat with the librarian", tags=tags, discovered=day)["id"]
        for t, tags, day in MEMORIES
    ]
    opinion = memory.store(
        text="Saturday is the best day to volunteer", source="chat", kind="opinion"
    )["id"]
    memory.store(
        text="Sunday is the best day to volunteer", source="chat", kind="opinion", supersedes=[]
    )
    corrected = memory.store(
        text="The tool library on Larkspur Lane opens Wednesday to Sunday",
        source="notice on the door",
        tags=["library", "hours"],
        supersedes=[ids[0]],
    )["id"]
    memory.link("Ada", "volunteers_at", "tool library", src_id=ids[2], valid_from="2026-04-11")
    memory.link("Ravi", "volunteers_at", "repair café", src_id=ids[4], valid_from="2026-06-01")
    memory.link("tool library", "located_on", "Larkspur Lane", src_id=corrected)
    memory.link("Ada", "knows", "Ravi", valid_from="2025-01-01", valid_to="2026-12-31")
    memory.link("repair café", "meets_at", "tool library", src_id=ids[3])
    vault.close()
    del opinion

    home = work / "memory-home"
    home.mkdir()
    env = {**_env(home), **vault_env(vault_path, work / "memory-run")}
    console = RunningConsole([], env)
    try:
        open_console(page, console, "/memory/?q=who+is+around+on+Saturday")
        page.wait_for_selector("#results li.hit")
        page.screenshot(path=str(out / "memory-search.png"), full_page=True)
        page.goto(f"{console.root}/memory/m/{corrected}")
        page.wait_for_selector("#history")
        page.screenshot(path=str(out / "memory-page.png"), full_page=True)
        page.goto(f"{console.root}/memory/graph")
        page.wait_for_selector("#graph[data-drawn]")
        page.screenshot(path=str(out / "memory-graph.png"), full_page=True)
        export = work / "export.jsonl"
        with export.open("w") as rows:
            for i in range(2000):
                data = {"text": f"Loan {i}: a ladder went out and came back", "source": "loan book"}
                saved = f"2026-{1 + i * 11 // 2000:02d}-15T10:00:00Z"  # spread over the year
                row = {"id": f"loan{i:05d}", "namespace": "loans", "data": data, "saved_at": saved}
                rows.write(json.dumps(row) + "\n")
        page.goto(f"{console.root}/memory/import")
        page.fill("input[name=path]", str(export))
        page.click("#import-form button")
        page.wait_for_selector("#import[data-finished]", timeout=300_000)
        page.screenshot(path=str(out / "memory-import.png"), full_page=True)
        review_page(page, console, env, work, out)
        page.goto(f"{console.root}/memory/overview")
        page.screenshot(path=str(out / "memory-overview.png"), full_page=True)
    finally:
        console.stop()
    locked = {k: v for k, v in env.items() if k != "AFFIDAVIT_PASSPHRASE"}
    console = RunningConsole([], locked)
    try:
        open_console(page, console, "/memory/")
        page.wait_for_selector("#locked")
        page.fill("input[name=passphrase]", "a wrong guess")
        page.click("#unlock-form button")
        page.wait_for_selector("#locked .notice.error")
        page.screenshot(path=str(out / "memory-locked.png"), full_page=True)
        page.fill("input[name=passphrase]", TEST_PASSPHRASE)
        page.click("#unlock-form button")
        page.wait_for_selector("#search-form")
    finally:
        console.stop()


SESSION = [
    ("user", "No, the workshop key is in the blue box, not the drawer. Thanks!"),
    ("assistant", "Got it. Let me check the loan book."),
    ("user", "We decided to close the library on public holidays. Ada owns the ladder rota."),
]


def review_page(
    page: Any, console: RunningConsole, env: dict[str, str], work: Path, out: Path
) -> None:
    """Candidates captured by a real hook run from an invented session, on the Review page."""
    from tests.intake.conftest import line

    transcript = work / "projects" / "library" / "session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(
        "".join(
            line(role, text, f"2026-12-03T1{i}:05:00Z") for i, (role, text) in enumerate(SESSION)
        )
    )
    event = json.dumps({"session_id": "s-1", "transcript_path": str(transcript)})
    hook = [sys.executable, "-m", "affidavit", "hook", "run", "claude-code"]
    subprocess.run(hook, input=event, env=env, text=True, check=True, capture_output=True)
    page.goto(f"{console.root}/memory/review")
    page.wait_for_selector("#candidates li.candidate")
    first = page.locator("#candidates li.candidate").first
    first.locator("textarea[name=text]").fill("The workshop key is kept in the blue box.")
    first.locator("input[name=namespace]").fill("library")
    page.screenshot(path=str(out / "memory-review.png"), full_page=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "console")
    parser.add_argument(
        "--only", choices=("packs", "proxy", "memory"), help="only this section's pages"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO / "benchmarks"))
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        console = RunningConsole(["--audit-log", str(home / "audit.jsonl")], _env(home))
        try:
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                page = browser.new_page(viewport={"width": 1360, "height": 900})
                open_console(page, console)
                page.screenshot(path=str(args.out / "home.png"))
                if args.only in (None, "packs"):
                    pack_pages(page, console, work, args.out)
                if args.only in (None, "proxy"):
                    proxy_page(page, console, work, home, args.out)
                if args.only in (None, "memory"):
                    memory_pages(page, work, args.out)
                browser.close()
        finally:
            console.stop()
    for png in sorted(args.out.glob("*.png")):
        print(png.relative_to(REPO))


if __name__ == "__main__":
    main()
