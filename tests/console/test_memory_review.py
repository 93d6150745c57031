"""The memory section's Review page in a real browser, on candidates a real hook run captured.

``affidavit hook run claude-code`` (a real process, the hook's JSON on stdin) reads a synthetic
Claude Code transcript into the vault; the console is a real ``affidavit console`` process and
Chromium is Debian's. What the page did is checked with ``affidavit review`` and ``affidavit
search`` afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.console.pages import TIMEOUT, open_console
from tests.console.test_guard import request, sign_in
from tests.intake.conftest import line
from tests.support import run_cli
from tests.vault.conftest import create_test_vault, vault_env

SAID = "No, the staging database is db-2. We decided to ship on Fridays. Thanks!"
HOSTILE = (
    'Alice owns <img src=x onerror="document.title=1"> billing <script>document.title=2</script>.'
)
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A test vault's environment (passphrase set: the console opens it)."""
    create_test_vault(tmp_path / "vault").close()
    return vault_env(tmp_path / "vault", tmp_path / "run")


def capture(home: Path, env: dict[str, str], tmp_path: Path, text: str) -> list[dict[str, Any]]:
    """Run the hook on a transcript where the user said ``text``; the candidates waiting."""
    transcript = tmp_path / "projects" / "demo" / "s-1.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    with transcript.open("a", encoding="utf-8") as out:
        out.write(line("user", text))
    event = json.dumps({"session_id": "s-1", "transcript_path": str(transcript)})
    done = run_cli(["hook", "run", "claude-code"], home, env=env, input=event)
    assert done.returncode == 0 and "candidate memories captured" in done.stdout, done.stdout
    return waiting(home, env)


def waiting(home: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = run_cli(["review", "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["candidates"])


def search(home: Path, env: dict[str, str], query: str, *extra: str) -> list[str]:
    done = run_cli(["search", query, "--json", *extra], home, env=env)
    assert done.returncode == 0, done.stderr
    return [hit["text"] for hit in json.loads(done.stdout)["results"]]


def test_accept_with_an_edit_stores_a_memory_and_drop_forgets(
    start_console, page, home, env, tmp_path
):
    first, second = capture(home, env, tmp_path, SAID)
    assert first["text"] == "No, the staging database is db-2."
    console = start_console(env=env)
    open_console(page, console, "/memory/overview")
    link = page.locator("#review-link")
    assert (
        link.get_attribute("data-waiting") == "2" and "2 captured candidates" in link.inner_text()
    )
    link.click()
    page.wait_for_selector("#candidates li.candidate", timeout=TIMEOUT)
    items = page.locator("#candidates li.candidate")
    assert [i.get_attribute("data-id") for i in items.all()] == [first["id"], second["id"]]
    shown = items.first.inner_text()
    assert first["text"] in shown and "s-1.jsonl" in shown and first["captured_at"] in shown

    # accept, reworded, into another namespace: asked first, nothing done yet
    item = page.locator(f"li.candidate[data-id='{first['id']}']")
    item.locator("textarea[name=text]").fill("The staging database runs on db-2.")
    item.locator("input[name=namespace]").fill("ops")
    item.locator("button.accept").click()
    page.wait_for_selector("#confirm", timeout=TIMEOUT)
    asked = page.inner_text("#confirm")
    assert "runs on db-2" in asked and first["text"] in asked and "ops" in asked
    assert len(waiting(home, env)) == 2
    page.click("#confirm-form button[type=submit]")
    page.wait_for_selector(".notice.ok", timeout=TIMEOUT)
    assert "Accepted (stored)" in page.inner_text(".notice.ok")
    assert [c["id"] for c in waiting(home, env)] == [second["id"]]
    assert search(home, env, "staging database", "--namespace", "ops") == [
        "The staging database runs on db-2."
    ]
    assert page.locator("#candidates li.candidate").count() == 1

    # drop: asked, then forgotten, never stored
    page.locator(f"li.candidate[data-id='{second['id']}'] button.drop").click()
    page.wait_for_selector("#confirm", timeout=TIMEOUT)
    assert len(waiting(home, env)) == 1
    page.click("#confirm-form button[type=submit]")
    page.wait_for_selector(".notice.ok", timeout=TIMEOUT)
    assert waiting(home, env) == []
    assert "No candidates waiting" in page.inner_text("#review")
    assert search(home, env, "ship on Fridays") == []
    page.goto(f"{console.root}/memory/overview")
    assert page.locator("#review-link").get_attribute("data-waiting") == "0"


def test_hostile_candidate_text_is_shown_escaped(start_console, page, home, env, tmp_path):
    (hostile,) = capture(home, env, tmp_path, HOSTILE)
    console = start_console(env=env)
    open_console(page, console, "/memory/review")
    item = page.locator("li.candidate").first
    item.wait_for(timeout=TIMEOUT)
    assert "<img src=x" in item.locator("blockquote").inner_text()
    assert "<script>" in item.locator("textarea").input_value()  # the edit box holds it as text
    item.locator("button.accept").click()
    page.wait_for_selector("#confirm", timeout=TIMEOUT)
    assert "<img src=x" in page.inner_text("#confirm")
    assert page.locator("main img, main script").count() == 0
    assert page.title().endswith("affidavit console")
    page.click("#confirm-form button[type=submit]")
    page.wait_for_selector(".notice.ok", timeout=TIMEOUT)
    assert search(home, env, "Alice owns billing") == [hostile["text"]]  # stored word for word
    assert page.locator("main img, main script").count() == 0


def test_review_requests_without_the_token_or_origin_are_refused(
    start_console, home, env, tmp_path
):
    (candidate,) = capture(home, env, tmp_path, "Alice owns billing.")
    console = start_console(env=env)
    status, _, body = request(console, path="/memory/review")
    assert status == 401 and "Alice" not in body
    accept, drop = (f"/memory/review/{candidate['id']}/{a}" for a in ("accept", "drop"))
    for path in (accept, drop):
        status, _, _ = request(
            console, "POST", path, {"Origin": console.origin, "Content-Type": FORM}, "confirm=yes"
        )
        assert status == 401, path
    cookie = sign_in(console)
    for headers in ({"Cookie": cookie}, {"Cookie": cookie, "Origin": "http://evil.example"}):
        status, _, _ = request(
            console, "POST", drop, {**headers, "Content-Type": FORM}, "confirm=yes"
        )
        assert status == 403
    assert [c["id"] for c in waiting(home, env)] == [candidate["id"]]
    status, _, body = request(console, path="/memory/review", headers={"Cookie": cookie})
    assert status == 200 and "Alice owns billing." in body


def test_bad_review_input_gets_one_clear_line_and_changes_nothing(
    start_console, home, env, tmp_path
):
    (candidate,) = capture(home, env, tmp_path, "Alice owns billing.")
    console = start_console(env=env)
    headers = {"Cookie": sign_in(console), "Origin": console.origin, "Content-Type": FORM}
    base = f"/memory/review/{candidate['id']}"
    status, _, body = request(console, "POST", f"{base}/accept", headers, "text=&confirm=yes")
    assert status == 400 and "the text to store is empty" in body
    status, _, body = request(
        console, "POST", "/memory/review/nosuchid/drop", headers, "confirm=yes"
    )
    assert status == 400 and "no candidate memory nosuchid" in body and "Traceback" not in body
    status, _, _ = request(console, "POST", f"{base}/explode", headers, "confirm=yes")
    assert status == 404
    too_long = "Alice owns billing and " + "x" * 300 + "."
    status, _, body = request(
        console, "POST", f"{base}/accept", headers, f"text={too_long}&confirm=yes"
    )
    assert status == 400 and 'id="candidates"' in body  # refused; the list is shown again
    assert [c["id"] for c in waiting(home, env)] == [candidate["id"]]
    assert "Traceback" not in "".join(console.output)


def test_a_locked_vault_shows_the_unlock_card_on_the_review_page(
    start_console, page, home, env, tmp_path
):
    capture(home, env, tmp_path, "Alice owns billing.")
    locked = {k: v for k, v in env.items() if k != "AFFIDAVIT_PASSPHRASE"}
    console = start_console(env=locked)
    open_console(page, console, "/memory/review")
    page.wait_for_selector("#locked", timeout=TIMEOUT)
    assert "Alice" not in page.content()


def test_the_digest_shows_what_auto_store_put_in_unreviewed(
    start_console, page, home, env, tmp_path
):
    turned_on = run_cli(["settings", "auto_store", "on"], home, env=env)
    assert turned_on.returncode == 0, turned_on.stderr
    said = "The staging host is db-2. Bob owns <img src=x onerror=document.title=1> billing."
    left = capture(home, env, tmp_path, said + " I think the cache is Redis 7.")
    assert [c["text"] for c in left] == ["I think the cache is Redis 7."]  # hedged: waits
    console = start_console(env=env)
    open_console(page, console, "/memory/review")
    page.wait_for_selector("#digest .digest-day", timeout=TIMEOUT)
    stored = page.locator("#digest li.digest-memory")
    assert sorted(i.inner_text().split(" ")[0] for i in stored.all()) == ["Bob", "The"]
    assert "Bob owns <img src=x" in page.inner_text("#digest")  # shown as text, not as markup
    assert page.locator("main img, main script").count() == 0
    assert page.title().endswith("affidavit console")
    staging = page.locator("#digest a", has_text="The staging host is db-2.")
    staging.click()
    page.wait_for_url("**/memory/m/*", timeout=TIMEOUT)
    assert "stated by you (stored without review)" in page.inner_text("main")
