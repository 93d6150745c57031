"""The console's session is bound to what a sibling server on 127.0.0.1 never sees.

Issue 26 item 1: cookies are scoped by host, not port, and ``SameSite=Strict`` treats every
127.0.0.1 port as one site, so after the user signed in, a page served on another local port
(any local account can serve one) received ``affidavit_console_<port>=...``, and the cookie
replayed with curl forgot a memory. Here the user is a real Chromium that signs in with the
printed link; the attacker is two real HTTP servers on other ports, one on 127.0.0.1 and one
on the console's own address, each recording every header it receives, whose pages also
navigate to themselves again (a same-site hop that a ``SameSite=Strict`` cookie would ride).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.console.pages import TIMEOUT, open_console
from tests.console.test_guard import request
from tests.console.test_memory import FACTS, store
from tests.support import run_cli
from tests.vault.conftest import create_test_vault, vault_env

FORM = "application/x-www-form-urlencoded"
_HOP = b"""<!doctype html><title>sibling</title>
<script>if (location.pathname === "/") location.replace("/again");</script>"""


class Sibling:
    """Another local web server: it answers every GET with a page and records each Cookie."""

    def __init__(self, host: str) -> None:
        self.cookies: list[str] = []
        self.paths: list[str] = []
        sibling = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                sibling.paths.append(self.path)
                sibling.cookies.extend(self.headers.get_all("Cookie") or [])
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(_HOP)))
                self.end_headers()
                self.wfile.write(_HOP)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def memory_env(tmp_path: Path, home: Path) -> Iterator[tuple[dict[str, str], str]]:
    """A test vault with one memory stored through the CLI: its environment and the id."""
    path = tmp_path / "vault"
    create_test_vault(path).close()
    env = vault_env(path, tmp_path / "run")
    text, tags = FACTS[0]
    yield env, store(home, env, text, tags)


def test_a_sibling_port_never_receives_the_session_and_the_cookie_alone_opens_nothing(
    start_console, browser, home, memory_env
):
    env, target = memory_env
    console = start_console(env=env)
    context = browser.new_context()
    page = context.new_page()
    open_console(page, console, "/memory/")  # the user signs in with the printed link
    page.wait_for_selector("#search-form", timeout=TIMEOUT)
    siblings = [Sibling("127.0.0.1"), Sibling(console.host)]
    try:
        for sibling in siblings:  # the user visits another local web app
            page.goto(sibling.url + "/")
            page.wait_for_url(sibling.url + "/again", timeout=TIMEOUT)
    finally:
        for sibling in siblings:
            sibling.close()
    for sibling in siblings:
        assert sibling.paths[:2] == ["/", "/again"], sibling.paths
        assert not [c for c in sibling.cookies if "affidavit_console" in c], sibling.cookies

    # the cookie itself, taken from the browser as a thief would, opens nothing on its own
    (session,) = [c for c in context.cookies() if c["name"].startswith("affidavit_console")]
    stolen = {"Cookie": f"{session['name']}={session['value']}"}
    for path in ("/", "/memory/", f"/memory/m/{target}"):
        status, _, body = request(console, path=path, headers=stolen, under_root=False)
        assert status in (401, 403, 404) and "port 6543" not in body, (path, status)
    forget = {**stolen, "Origin": console.origin, "Content-Type": FORM}
    status, _, _ = request(
        console, "POST", f"/memory/m/{target}/forget", forget, "confirm=yes", under_root=False
    )
    assert status in (401, 403, 404), status
    assert run_cli(["get", target], home, env=env).returncode == 0  # still there

    # and the user's own browser still works, every page of it
    for path in ("/", "/memory/", f"/memory/m/{target}", "/pack-maker/", "/proxy/"):
        page.goto(console.root + path)
        assert page.locator("main").count() == 1 and "Open the console" not in page.content()
    context.close()


def test_the_launch_token_signs_in_once(start_console, browser):
    console = start_console()
    first = browser.new_context()
    page = first.new_page()
    open_console(page, console)
    page.goto(console.url)  # the same browser may open its link again
    page.wait_for_url(f"{console.root}/", timeout=TIMEOUT)
    assert "affidavit console" in page.title()
    other = browser.new_context()  # anyone else who got the link after the user used it
    late = other.new_page()
    answer = late.goto(console.url)
    assert answer is not None and answer.status == 403
    assert "already been used" in late.content()
    assert not [c for c in other.cookies() if c["name"].startswith("affidavit_console")]
    first.close()
    other.close()
