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

(The memory dashboard's search round trip is measured here once the dashboard exists.)
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
from pathlib import Path

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
            status, _ = _get(console.origin + "/", cookie)
            assert status == 200
            samples.append(time.perf_counter() - started)
        finally:
            console.stop()
    return samples


def verdict_visible(home: Path, work: Path, calls: int) -> tuple[list[float], dict[str, int]]:
    """Seconds from a proxied call's reply to its row in the open proxy page."""
    from playwright.sync_api import sync_playwright

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
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page()
            page.goto(console.url)
            page.wait_for_url(console.origin + "/")
            page.goto(console.origin + "/proxy/")
            page.wait_for_selector("#calls-table")
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
            browser.close()
    finally:
        proxy.close()
        console.stop()
    return samples, verdicts


def _line(label: str, samples: list[float], target: float) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    verdict = "ok" if ordered[-1] <= target else "OVER"
    return (
        f"| {label} | {len(samples)} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | "
        f"{ordered[-1] * 1000:.0f} ms | <= {target * 1000:.0f} ms | {verdict} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7, help="cold starts to time")
    parser.add_argument("--calls", type=int, default=20, help="proxied calls to time")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        sys.exit(f"Chromium is not installed at {CHROMIUM}; the verdict benchmark needs it")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        starts = start_to_first_page(home, args.starts)
        visible, verdicts = verdict_visible(home, work, args.calls)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print("| measure | n | p50 | p95 | max | target | |")
    print("|---|---|---|---|---|---|---|")
    print(_line("console start to first page", starts, 1.0))
    print(_line("proxy verdict visible after the reply", visible, 1.0))
    print(f"verdicts seen in the page: {dict(sorted(verdicts.items()))}")


if __name__ == "__main__":
    main()
