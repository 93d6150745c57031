"""Console benchmark: how fast the console starts, and how soon a proxy verdict shows in it.

Run: ``python benchmarks/console.py [--starts N] [--calls N]``. Everything is a real process:
``affidavit console`` started cold (a new Python each time, as a user starts it), Debian's
Chromium driven by Playwright, and the real proxy in front of the lying backend of the proxy
tests, driven over raw JSON-RPC lines (no SDK between the clock and the pipes).

- start to first page: from spawning ``affidavit console --no-browser`` to the home page
  served to a signed-in client (token exchanged for the cookie, then ``GET /``);
  target <= 1.0 s;
- verdict visible: from the moment the proxy's reply to a ``tools/call`` reaches the host to
  the moment that call's row, with its verdict, is in the open proxy page; target <= 1 s.
  Calls alternate a lie (``git_commit`` claiming a commit that does not exist: CONTRADICTED)
  and an honest write (VERIFIED).

- search round trip in the page: on a vault of 10k memories, from the search form's submit to
  the ranked results in the page (measured in the page with ``performance.now()``: the fetch
  to ``/memory/results``, recall's search, the rendering and the swap into the page);
  target p50 <= 50 ms. The vault is made with ``Memory.import_rows`` (embedded by the real
  model) from generated sentences; the first searches (the model and the index loading) are
  reported apart and not counted.

``--only start|proxy|search`` runs one of them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from _rpc import LineClient  # benchmarks/ is on sys.path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.console.browser import (  # noqa: E402 - the repo root must be importable first
    CHROMIUM,
    RunningConsole,
    launch_chromium,
)
from tests.proxy._verifier_fixtures import LYING_BACKEND, init_repo  # noqa: E402
from tests.support import cli_env  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Page


def _env(home: Path) -> dict[str, str]:
    env = cli_env(home)
    env["PYTHONPATH"] = str(REPO)
    return env


def _get(url: str, cookie: str | None = None) -> tuple[int, str | None]:
    headers = {"Cookie": cookie} if cookie else {}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback http
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        set_cookie = response.headers.get("Set-Cookie")
        response.read()
        return response.status, set_cookie.split(";")[0] if set_cookie else None


def start_to_first_page(home: Path, runs: int) -> list[float]:
    """Seconds from spawning the console to the signed-in home page, ``runs`` times."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        console = RunningConsole([], _env(home))
        try:
            status, cookie = _get(console.url)
            assert status == 200 and cookie, "the token was not exchanged for a cookie"
            status, _ = _get(console.root + "/", cookie)
            assert status == 200
            samples.append(time.perf_counter() - started)
        finally:
            console.stop()
    return samples


@contextmanager
def _console_page(console: RunningConsole, section: str, ready: str) -> Iterator[Page]:
    """A browser page signed in to ``console`` (its start address carries the login) and
    open at ``section`` once ``ready`` is in it; the browser closes after a run that ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page()
        page.goto(console.url)
        page.wait_for_url(console.root + "/")
        page.goto(console.root + section)
        page.wait_for_selector(ready)
        yield page
        browser.close()


def verdict_visible(home: Path, work: Path, calls: int) -> tuple[list[float], dict[str, int]]:
    """Seconds from a proxied call's reply to its row in the open proxy page."""
    repo = init_repo(work / "repo")
    plan = work / "plan.json"
    plan.write_text(json.dumps({"git_commit": "fabricated"}))
    log = work / "audit.jsonl"
    backend = [sys.executable, str(LYING_BACKEND), "--repo-path", str(repo), "--plan", str(plan)]
    proxy_argv = [sys.executable, "-m", "affidavit", "proxy", "--audit-log", str(log)]
    proxy_argv += ["--root", str(repo), "--", *backend]
    console = RunningConsole(["--audit-log", str(log)], _env(home))
    proxy = LineClient(proxy_argv, _env(home), cwd=REPO)
    samples: list[float] = []
    verdicts: dict[str, int] = {}
    try:
        proxy.initialize()
        with _console_page(console, "/proxy/", "#calls-table") as page:
            for index in range(calls):
                if index % 2:
                    name, arguments = "git_commit", {"message": f"commit {index}"}
                else:
                    name, arguments = (
                        "write_file",
                        {"path": f"f{index}.txt", "content": f"{index}\n"},
                    )
                reply = proxy.request("tools/call", {"name": name, "arguments": arguments})
                returned = time.perf_counter()
                assert "result" in reply, reply
                row = page.wait_for_selector(f"#calls tr[data-index='{index + 1}']", timeout=60_000)
                samples.append(time.perf_counter() - returned)
                verdict = str(row.get_attribute("data-verdict"))
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
    finally:
        proxy.close()
        console.stop()
    return samples, verdicts


_FIRST = ["Ada", "Bela", "Cyrus", "Dana", "Emil", "Fern", "Goran", "Hana", "Ivo", "Juno"]
_LAST = ["Okafor", "Lind", "Moreau", "Sato", "Varga", "Quist", "Ruiz", "Tamm", "Weiss", "Yilmaz"]
_ORGS = ["the tool library", "the repair café", "the food bank", "the bike co-op", "the archive"]
_CITIES = ["Lisbon", "Tartu", "Oslo", "Kyoto", "Porto", "Quito", "Graz", "Leeds"]
_THINGS = ["tea", "bicycle", "editor", "font", "river", "board game", "bread", "camera"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def memory_texts(count: int) -> list[str]:
    """``count`` generated one-claim memories about invented people, places and habits."""
    import random

    rng = random.Random(7)
    people = [f"{first} {last}" for first in _FIRST for last in _LAST]
    templates = [
        lambda p: f"{p} volunteers at {rng.choice(_ORGS)} every {rng.choice(_DAYS)}",
        lambda p: f"{p} moved to {rng.choice(_CITIES)} in {rng.randint(2001, 2026)}",
        lambda p: f"{p}'s favourite {rng.choice(_THINGS)} is number {rng.randint(1, 999)}",
        lambda p: f"{p} keeps the spare key for {rng.choice(_ORGS)} in drawer {rng.randint(1, 60)}",
        lambda p: f"{p} runs the {rng.choice(_DAYS)} shift with {rng.choice(people)}",
    ]
    return [rng.choice(templates)(rng.choice(people)) + f" (note {i})" for i in range(count)]


def search_round_trip(
    home: Path, work: Path, memories: int, searches: int
) -> tuple[list[float], list[float], list[float]]:
    """Seconds from submitting the search form to the results in the page: (warm-up, timed,
    and of the timed ones the part recall's search took in the console)."""
    from tests.vault.conftest import create_test_vault, vault_env

    from affidavit.recall import Memory

    vault_path = work / "vault"
    vault = create_test_vault(vault_path)
    texts = memory_texts(memories)
    Memory(vault).import_rows([{"text": t, "id": f"m{i:06d}"} for i, t in enumerate(texts)])
    vault.close()
    env = {**_env(home), **vault_env(vault_path, work / "run")}
    console = RunningConsole([], env)
    people = [f"{first} {last}" for first in _FIRST for last in _LAST]
    questions = [
        f"where does {people[i % len(people)]} volunteer"
        if i % 2
        else f"which drawer holds the spare key of {people[i % len(people)]}"
        for i in range(searches + 3)
    ]
    timed: list[float] = []
    warm: list[float] = []
    inside: list[float] = []  # recall's own search, as the console reports it
    try:
        with _console_page(console, "/memory/", "#search-form") as page:
            for index, question in enumerate(questions):
                took = page.evaluate(_SEARCH_IN_PAGE, question)
                assert took["hits"] > 0, f"no results for {question!r}"
                (warm if index < 3 else timed).append(took["ms"] / 1000)
                if index >= 3:
                    inside.append(took["recall"] / 1000)
    finally:
        console.stop()
    return warm, timed, inside


#: Submit the search form and resolve when its results are in the page (ms, hits).
_SEARCH_IN_PAGE = """
(question) => new Promise((resolve) => {
  const form = document.getElementById("search-form");
  form.elements.q.value = question;
  const observer = new MutationObserver(() => {
    const results = document.getElementById("results");
    if (results && results.dataset.query === question) {
      observer.disconnect();
      const fetched = performance.getEntriesByType("resource")
        .filter((e) => e.name.includes("/memory/results")).pop();
      const recall = fetched.serverTiming.find((t) => t.name === "recall");
      resolve({
        ms: performance.now() - started,
        recall: recall ? recall.duration : null,
        hits: results.querySelectorAll("li.hit").length,
      });
    }
  });
  observer.observe(document.body, {childList: true, subtree: true});
  const started = performance.now();
  form.requestSubmit();
})
"""


def _line(label: str, samples: list[float], target: float, *, p50_only: bool = False) -> str:
    """One table row; the target bounds the max, or (``p50_only``) the median."""
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    judged = p50 if p50_only else ordered[-1]
    verdict = "ok" if judged <= target else "OVER"
    bound = "p50 <= " if p50_only else "<= "
    return (
        f"| {label} | {len(samples)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | "
        f"{ordered[-1] * 1000:.0f} ms | {bound}{target * 1000:.0f} ms | {verdict} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7, help="cold starts to time")
    parser.add_argument("--calls", type=int, default=20, help="proxied calls to time")
    parser.add_argument("--memories", type=int, default=10_000, help="vault size for search")
    parser.add_argument("--searches", type=int, default=30, help="searches to time")
    parser.add_argument("--only", choices=("start", "proxy", "search"), help="one measure only")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        sys.exit(f"Chromium is not installed at {CHROMIUM}; the browser benchmarks need it")
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        if args.only in (None, "start"):
            starts = start_to_first_page(home, args.starts)
            lines.append(_line("console start to first page", starts, 1.0))
        if args.only in (None, "proxy"):
            visible, verdicts = verdict_visible(home, work, args.calls)
            lines.append(_line("proxy verdict visible after the reply", visible, 1.0))
            lines.append(f"verdicts seen in the page: {dict(sorted(verdicts.items()))}")
        if args.only in (None, "search"):
            warm, timed, inside = search_round_trip(home, work, args.memories, args.searches)
            label = f"search round trip in the page ({args.memories} memories)"
            lines.append(_line(label, timed, 0.05, p50_only=True))
            lines.append(
                _line("of which recall's own search (Server-Timing)", inside, 0.05, p50_only=True)
            )
            first = ", ".join(f"{s * 1000:.0f} ms" for s in warm)
            lines.append(f"first searches (model and index loading, not counted): {first}")
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print("| measure | n | p50 | p95 | max | target | |")
    print("|---|---|---|---|---|---|---|")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
