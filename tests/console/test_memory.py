"""The memory section in a real browser, on a real vault that the CLI wrote.

Memories are stored with ``affidavit store`` (a real process); the console is a real
``affidavit console`` process; Chromium is Debian's, driven by Playwright. What the page says
is compared with what the CLI says about the same vault afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.console.pages import TIMEOUT, open_console
from tests.console.test_guard import request, sign_in
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, vault_env

FACTS = [
    ("The staging database listens on port 6543", ["infra", "db"]),
    ("Deploys to production happen on Tuesday mornings", ["infra", "release"]),
    ("Mira prefers green tea over coffee", ["people"]),
]


@pytest.fixture
def vault_env_of(tmp_path: Path) -> dict[str, str]:
    """A test vault with three memories stored through the CLI; its environment."""
    path = tmp_path / "vault"
    create_test_vault(path).close()
    return vault_env(path, tmp_path / "run")


def store(home: Path, env: dict[str, str], text: str, tags: list[str], *extra: str) -> str:
    args = ["store", text, "--source", "test chat", *[f"--tag={t}" for t in tags], *extra]
    done = run_cli([*args, "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def search_cli(home: Path, env: dict[str, str], query: str) -> list[dict[str, Any]]:
    done = run_cli(["search", query, "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["results"])


@pytest.fixture
def stored(home: Path, vault_env_of: dict[str, str]) -> dict[str, str]:
    """The texts of FACTS mapped to the ids the CLI gave them."""
    return {text: store(home, vault_env_of, text, tags) for text, tags in FACTS}


def search_in_page(page: Any, query: str, **filters: str) -> str:
    page.fill("input[name=q]", query)
    for name, value in filters.items():
        page.fill(f"input[name={name}]", value)
    page.click("#search-form button[type=submit]")
    page.wait_for_selector(f"#results[data-query='{query}']", timeout=TIMEOUT)
    return str(page.inner_text("#results"))


def test_a_search_in_the_page_finds_what_the_cli_stored_and_says_why(
    start_console, page, home, vault_env_of, stored
):
    console = start_console(env=vault_env_of)
    open_console(page, console, "/memory/")
    shown = search_in_page(page, "which port does the staging database use")
    assert "The staging database listens on port 6543" in shown
    first = page.locator("#results li.hit").first
    assert first.get_attribute("data-id") == stored["The staging database listens on port 6543"]
    why = first.locator(".why").inner_text()
    assert "literal" in why and "prior" in why  # the channel that found it and the score parts
    assert "#infra" in first.inner_text() and "test chat" in first.inner_text()
    # the same ranking as `affidavit search`: same ids, same order, same scores
    cli = search_cli(home, vault_env_of, "which port does the staging database use")
    page_ids = [h.get_attribute("data-id") for h in page.locator("#results li.hit").all()]
    assert page_ids == [hit["id"] for hit in cli]
    scores = [float(h.get_attribute("data-score")) for h in page.locator("#results li.hit").all()]
    assert scores == pytest.approx([hit["score"] for hit in cli], abs=1e-4)
    # a filter that excludes it: the page refuses to show it
    search_in_page(page, "staging database port", tag="people")
    assert page.locator("#results li.hit").count() == 0
    assert "q=staging+database+port" in page.url and "tag=people" in page.url


def test_a_correction_from_the_page_supersedes_the_old_memory(
    start_console, page, home, vault_env_of, stored
):
    old = stored["Deploys to production happen on Tuesday mornings"]
    console = start_console(env=vault_env_of)
    open_console(page, console, f"/memory/m/{old}")
    page.fill(
        "#correct-form textarea[name=text]", "Deploys to production happen on Thursday mornings"
    )
    page.click("#correct-form button[type=submit]")
    page.wait_for_selector("#confirm", timeout=TIMEOUT)
    assert "Thursday" in page.inner_text("#confirm")
    page.click("#confirm-form button[type=submit]")
    page.wait_for_selector("#history", timeout=TIMEOUT)
    new = page.url.rsplit("/", 1)[1]
    assert new != old
    assert "Tuesday" in page.inner_text("#supersedes")  # the new page names what it corrects
    got = run_cli(["get", old, "--json"], home, env=vault_env_of)
    assert json.loads(got.stdout)["memory"]["superseded_by"] == new
    found = search_cli(home, vault_env_of, "when do production deploys happen")
    assert [hit["id"] for hit in found][:1] == [new]
    assert old not in [hit["id"] for hit in found]
    page.goto(f"{console.root}/memory/m/{old}")
    assert new in page.inner_text("#superseded-notice")
    assert "marked superseded" in page.inner_text("#events")


def test_forget_needs_the_confirmation(start_console, page, home, vault_env_of, stored):
    target = stored["Mira prefers green tea over coffee"]
    console = start_console(env=vault_env_of)
    open_console(page, console, f"/memory/m/{target}")
    page.click("#forget-form button")
    page.wait_for_selector("#confirm", timeout=TIMEOUT)
    # only asked: the memory is still there
    assert run_cli(["get", target], home, env=vault_env_of).returncode == 0
    page.click("#confirm a:has-text('Cancel')")
    page.wait_for_selector("#history", timeout=TIMEOUT)
    assert run_cli(["get", target], home, env=vault_env_of).returncode == 0
    page.click("#forget-form button")
    page.click("#confirm-form button[type=submit]")
    page.wait_for_selector(".notice.ok", timeout=TIMEOUT)
    assert "was forgotten" in page.inner_text(".notice.ok")
    gone = run_cli(["get", target], home, env=vault_env_of)
    assert gone.returncode != 0


def test_a_locked_vault_is_unlocked_in_the_page_and_the_passphrase_goes_nowhere(
    start_console, page, home, vault_env_of, stored
):
    locked = {k: v for k, v in vault_env_of.items() if k != "AFFIDAVIT_PASSPHRASE"}
    console = start_console(env=locked)
    open_console(page, console, "/memory/")
    page.wait_for_selector("#locked", timeout=TIMEOUT)
    assert "locked" in page.inner_text("#locked") and "format" in page.inner_text("#locked")
    page.fill("input[name=passphrase]", "not the passphrase")
    page.click("#unlock-form button")
    page.wait_for_selector("#locked .notice.error", timeout=TIMEOUT)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.fill("input[name=passphrase]", TEST_PASSPHRASE)
    page.click("#unlock-form button")
    page.wait_for_selector("#search-form", timeout=TIMEOUT)
    assert "Mira prefers green tea" in page.inner_text("#results")  # the newest memories
    assert "passphrase" not in page.url and "correct" not in page.url
    assert not any("correct" in url or "passphrase" in url for url in requests)
    assert console.stop() == 0
    output = "".join(console.output)
    assert TEST_PASSPHRASE not in output and "not the passphrase" not in output


def test_the_graph_overview_and_import_pages(
    start_console, page, home, vault_env_of, stored, tmp_path
):
    src = stored["Mira prefers green tea over coffee"]
    link = ["link", "Mira", "drinks", "green tea", "--src", src, "--valid-from", "2026-01-01"]
    assert run_cli(link, home, env=vault_env_of).returncode == 0
    assert run_cli(["link", "Mira", "works_with", "Ravi"], home, env=vault_env_of).returncode == 0
    console = start_console(env=vault_env_of)
    open_console(page, console, "/memory/graph")
    page.wait_for_selector("#graph[data-drawn='3']", timeout=TIMEOUT)
    assert page.locator("#graph .node").count() == 3
    assert "2026-01-01" in page.inner_text("#graph")
    page.locator("#graph .edge.linked").first.click()
    page.wait_for_url(f"**/memory/m/{src}", timeout=TIMEOUT)
    page.goto(f"{console.root}/memory/graph")
    page.locator("#graph .node[data-entity='Ravi']").click()
    page.wait_for_url("**entity=Ravi", timeout=TIMEOUT)
    page.wait_for_selector("#graph[data-drawn='2']", timeout=TIMEOUT)

    page.goto(f"{console.root}/memory/overview")
    assert page.locator("#tags-chart [data-name=infra]").count() == 1
    assert page.locator("#growth-chart rect").count() >= 1
    assert "Chain intact" in page.inner_text("#audit")
    assert page.locator("#audit-entries tbody tr").count() >= 5

    export = tmp_path / "export.jsonl"
    with export.open("w") as out:
        for i in range(300):
            row = {
                "id": f"imp{i:05d}",
                "kind": "memory",
                "namespace": "notes",
                "data": {"text": f"Imported note number {i} about gardening", "source": "old"},
            }
            out.write(json.dumps(row) + "\n")
    page.goto(f"{console.root}/memory/import")
    page.fill("input[name=path]", str(export))
    page.click("#import-form button")
    page.wait_for_selector("#import[data-finished]", timeout=TIMEOUT)
    assert "imported 300 records" in page.inner_text("#import-outcome")
    assert page.locator("#import-bar").get_attribute("value") == "300"
    assert run_cli(["get", "imp00042"], home, env=vault_env_of).returncode == 0

    # locked from the page: the passphrase in the environment no longer opens it, the page does
    page.goto(f"{console.root}/memory/overview")
    page.click("#lock-form button")
    page.wait_for_selector("#locked", timeout=TIMEOUT)
    page.goto(f"{console.root}/memory/m/{src}")
    page.wait_for_selector("#locked", timeout=TIMEOUT)
    page.fill("input[name=passphrase]", TEST_PASSPHRASE)
    page.click("#unlock-form button")
    page.wait_for_selector("#search-form", timeout=TIMEOUT)


def test_the_memory_routes_refuse_requests_without_the_token(start_console, vault_env_of, stored):
    console = start_console(env=vault_env_of)
    target = next(iter(stored.values()))
    paths = [
        "/memory/",
        "/memory/results?q=port",
        f"/memory/m/{target}",
        "/memory/graph",
        "/memory/graph.json",
        "/memory/overview",
        "/memory/import",
    ]
    for path in paths:
        status, _, body = request(console, path=path)
        assert status == 401 and "port 6543" not in body, path
    posts = [
        f"/memory/m/{target}/forget",
        f"/memory/m/{target}/correct",
        "/memory/unlock",
        "/memory/import",
        "/memory/lock",
    ]
    form = {"Origin": console.origin, "Content-Type": "application/x-www-form-urlencoded"}
    for path in posts:
        status, _, _ = request(console, "POST", path, form, "confirm=yes")
        assert status == 401, path
    cookie = sign_in(console)
    # with the cookie but without the console's Origin (another page's form): refused too
    status, _, body = request(
        console,
        "POST",
        f"/memory/m/{target}/forget",
        {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
        "confirm=yes",
    )
    assert status == 403
    status, _, body = request(
        console,
        "POST",
        f"/memory/m/{target}/forget",
        {**form, "Cookie": cookie, "Origin": "http://evil.example"},
        "confirm=yes",
    )
    assert status == 403
    status, _, body = request(
        console, path="/memory/results?q=staging+port", headers={"Cookie": cookie}
    )
    assert status == 200 and "port 6543" in body  # the memory is still there


def test_memory_content_is_shown_as_text_never_run(start_console, page, home, vault_env_of):
    hostile = (
        '<img src=x onerror="document.title=1"> Staging notes <script>document.title=2</script>'
    )
    store(home, vault_env_of, hostile, ["<b>tag</b>"])
    link = ["link", "<svg onload=alert(1)>", "owns", "staging notes"]
    assert run_cli(link, home, env=vault_env_of).returncode == 0
    console = start_console(env=vault_env_of)
    open_console(page, console, "/memory/")
    search_in_page(page, "staging notes")
    hit = page.locator("#results li.hit").first
    assert "<img src=x" in hit.inner_text() and "#<b>tag</b>" in hit.inner_text()
    page.goto(f"{console.root}/memory/graph")
    page.wait_for_selector("#graph[data-drawn='2']", timeout=TIMEOUT)
    assert page.locator("main img, main script, #graph svg svg").count() == 0
    assert "<svg onload=alert(1)>" in page.inner_text("#graph")
    assert page.title().endswith("affidavit console")


def test_bad_input_gets_one_clear_line_and_changes_nothing(
    start_console, home, vault_env_of, stored
):
    console = start_console(env=vault_env_of)
    cookie = sign_in(console)
    target = stored["Mira prefers green tea over coffee"]
    form = {
        "Cookie": cookie,
        "Origin": console.origin,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    status, _, body = request(console, "POST", f"/memory/m/{target}/correct", form, "text=")
    assert status == 400 and "write the corrected memory" in body
    status, _, body = request(console, "POST", "/memory/import", form, "path=export.jsonl")
    assert status == 400 and "is not an absolute path" in body
    status, _, body = request(console, "POST", "/memory/m/nosuchid/forget", form, "confirm=yes")
    assert status == 400 and "nosuchid" in body and "Traceback" not in body
    status, _, _ = request(console, "POST", f"/memory/m/{target}/explode", form, "confirm=yes")
    assert status == 404
    assert run_cli(["get", target], home, env=vault_env_of).returncode == 0
    assert "Traceback" not in "".join(console.output)


def test_a_vault_unlocked_after_the_console_started_is_picked_up(
    start_console, page, home, vault_env_of, stored
):
    locked = {k: v for k, v in vault_env_of.items() if k != "AFFIDAVIT_PASSPHRASE"}
    console = start_console(env=locked)
    open_console(page, console, "/memory/")
    page.wait_for_selector("#locked", timeout=TIMEOUT)
    assert run_cli(["unlock"], home, env=vault_env_of).returncode == 0  # a session, elsewhere
    page.reload()
    page.wait_for_selector("#search-form", timeout=TIMEOUT)
    assert run_cli(["lock"], home, env=locked).returncode == 0  # ended elsewhere: noticed
    page.reload()
    page.wait_for_selector("#locked", timeout=TIMEOUT)
