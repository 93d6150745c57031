"""The proxy console in a real browser: a proxied lie shows up as CONTRADICTED, live.

The calls go through the real proxy (`affidavit proxy`) from the official MCP client to the
lying backend of the verifier tests; the console only reads the audit log the proxy writes.
The client runs in its own thread, because Playwright's synchronous API owns this one's loop.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from affidavit.proxy.audit import AuditLog
from tests.console.pages import TIMEOUT, open_console
from tests.proxy._verifier_fixtures import LYING_BACKEND, init_repo, proxied, wire
from tests.proxy.conftest import RawProxy

CALLS = [
    ("write_file", {"path": "notes.txt", "content": "hello\n"}),
    ("git_commit", {"message": "Add notes"}),
    ("git_checkout", {"name": "main"}),
]


def call_through_proxy(
    params: Any, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Make ``calls`` with the official MCP client (in a thread); return the wire results."""
    results: list[dict[str, Any]] = []
    failure: list[BaseException] = []

    async def scenario() -> None:
        async with Client(params, read_timeout_seconds=120) as client:  # type: ignore[arg-type]
            for name, arguments in calls:
                results.append(wire(await client.call_tool(name, arguments)))

    def run() -> None:
        try:
            anyio.run(scenario)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(300)
    assert not failure, failure
    return results


def lying_repo(tmp_path: Path, plan: dict[str, str]) -> tuple[Path, list[str]]:
    repo = init_repo(tmp_path / "repo")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    return repo, [
        sys.executable,
        str(LYING_BACKEND),
        "--repo-path",
        str(repo),
        "--plan",
        str(plan_file),
    ]


def test_a_proxied_lie_appears_as_contradicted_and_can_be_filtered_and_replayed(
    start_console, page, tmp_path, home
):
    repo, backend = lying_repo(tmp_path, {"git_commit": "fabricated"})
    console = start_console("--audit-log", str(home / "audit.jsonl"))
    open_console(page, console, "/proxy/")
    page.wait_for_selector("#calls-table", timeout=TIMEOUT)

    policy = tmp_path / "policy.yaml"
    policy.write_text(
        'rules:\n  - tool: "git_checkout"\n    action: deny\n    reason: stay on main\n'
    )
    results = call_through_proxy(proxied(backend, [repo], home, "--policy", str(policy)), CALLS)
    assert results[1].get("isError") is True  # the proxy rewrote the lie into an error

    lie = page.locator("#calls tr[data-verdict=contradicted]")
    lie.wait_for(timeout=TIMEOUT)  # pushed into the open page; no reload
    row = lie.inner_text()
    assert "git_commit" in row and "CONTRADICTED" in row and "lying-backend" in row
    assert "0123456789abcdef" in row  # the evidence names the fabricated commit
    page.locator("#calls tr[data-verdict=verified]").wait_for(timeout=TIMEOUT)
    denied = page.locator("#calls tr[data-verdict=denied]")
    denied.wait_for(timeout=TIMEOUT)
    assert "git_checkout" in denied.inner_text() and "stay on main" in denied.inner_text()
    assert "Chain intact: 3 entries" in page.inner_text("#chain")

    page.select_option("select[name=verdict]", "contradicted")
    page.wait_for_url(re.compile(r"verdict=contradicted"), timeout=TIMEOUT)
    shown = [row.get_attribute("data-verdict") for row in page.locator("#calls tr").all()]
    assert shown == ["contradicted"]

    stricter = tmp_path / "stricter.yaml"
    stricter.write_text('rules:\n  - tool: "git_*"\n    action: deny\n')
    page.fill("input[name=policy]", str(stricter))
    page.click("#replay-form button")
    page.wait_for_selector("#replay .notice", timeout=TIMEOUT)
    assert "3 recorded calls; 1 would be decided differently" in page.inner_text("#replay")
    changed = page.locator("#replay-changes tbody tr").inner_text()
    assert "git_commit" in changed and "allow" in changed and "deny" in changed
    assert "rule 1" in changed


def test_proxy_console_flag_starts_the_console_beside_the_proxy(page, tmp_path, home):
    repo, backend = lying_repo(tmp_path, {"git_commit": "fabricated"})
    log = tmp_path / "audit.jsonl"
    proxy = RawProxy(
        ["--console", "--audit-log", str(log), "--root", str(repo), "--", *backend], home
    )
    try:
        assert proxy.saw("affidavit console: http://127.", timeout=120), proxy.stderr
        url = re.search(r"http://(127\.[\d.]+):(\d+)/[\w-]+/\?token=[\w-]+", proxy.stderr)
        assert url is not None
        page.goto(url.group(0))
        page.wait_for_selector("a:has-text('Proxy calls')", timeout=TIMEOUT)
        page.goto(url.group(0).split("/?")[0] + "/proxy/")
        proxy.initialize()
        proxy.call(1, "write_file", {"path": "notes.txt", "content": "hi\n"})
        reply = proxy.call(2, "git_commit", {"message": "Add notes"})
        assert reply["result"]["isError"] is True
        page.locator("#calls tr[data-verdict=contradicted]").wait_for(timeout=TIMEOUT)
    finally:
        proxy.close()
    assert _stops_listening(url.group(1), int(url.group(2))), "the console outlived its proxy"


def _stops_listening(host: str, port: int, within: float = 60) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_a_tampered_audit_log_shows_where_the_chain_breaks(start_console, page, tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl", session="s")
    for tool in ("read_file", "write_file", "git_commit"):
        log.append(
            {
                "kind": "call",
                "tool": tool,
                "backend": "b",
                "verdict": "verified",
                "outcome": "result",
            }
        )
    lines = log.path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"write_file", b"wipe_disk")
    log.path.write_bytes(b"".join(lines))
    console = start_console("--audit-log", str(log.path))
    open_console(page, console, "/proxy/")
    broken = page.locator("#chain [data-chain=broken]")
    broken.wait_for(timeout=TIMEOUT)
    assert "Chain broken at entry 2: content does not match its hash" in broken.inner_text()
