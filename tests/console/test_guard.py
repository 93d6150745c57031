"""The console answers only its own browser: token, cookie, Host, Origin and fetch metadata.

Driven over raw HTTP against a real ``affidavit console`` process, so every header is exactly
what an attacker's page (or another local program) could send.
"""

from __future__ import annotations

import http.client
import os
import socket
import stat
import time
from pathlib import Path

import pytest

from affidavit.core.http_connections import HEAD_LATE


def request(console, method="GET", path="/", headers=None, body=None, *, under_root=True):
    """One raw HTTP request to the console; ``path`` is a console path (``/memory/``), sent
    under this launch's secret root unless ``under_root`` is False."""
    connection = http.client.HTTPConnection(console.host, console.port, timeout=30)
    try:
        all_headers = {"Host": f"{console.host}:{console.port}", **(headers or {})}
        sent = console.prefix + path if under_root else path
        connection.request(method, sent, body=body, headers=all_headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def sign_in(console) -> str:
    """The session cookie (``name=value``) the token buys (once: the token is then spent)."""
    if console.cookie is None:
        status, headers, body = request(console, path=f"/?token={console.token}")
        assert status == 200, body
        console.cookie = headers["set-cookie"].split(";")[0]
    return console.cookie


def test_no_token_no_page(start_console):
    console = start_console()
    for path in ("/", "/pack-maker/", "/proxy/feed", "/static/console.css"):
        status, _, body = request(console, path=path)
        assert status == 401 and "Open the console from its link" in body
    status, _, _ = request(console, "POST", "/pack-maker/check", {"Origin": console.origin}, "{}")
    assert status == 401


def test_a_wrong_token_is_refused_and_the_right_one_buys_a_strict_cookie(start_console):
    console = start_console()
    status, headers, _ = request(console, path="/?token=" + "A" * len(console.token))
    assert status == 403 and "set-cookie" not in {k.lower() for k in headers}
    status, headers, body = request(console, path=f"/pack-check/?token={console.token}&x=1")
    assert status == 200
    cookie = headers["set-cookie"]
    name, value = cookie.split(";")[0].split("=", 1)
    assert name == f"affidavit_console_{console.port}" and value != console.token
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert f'content="0;url={console.prefix}/pack-check/?x=1"' in body  # without the token
    assert f"Path={console.prefix}/;" in cookie  # sent only under this launch's secret root
    status, _, body = request(console, path="/pack-check/", headers={"Cookie": f"{name}={value}"})
    assert status == 200 and "Check a pack" in body
    status, _, _ = request(console, path="/", headers={"Cookie": f"{name}={value[:-1]}x"})
    assert status == 401


def test_outside_the_secret_root_nothing_answers_and_redirects_stay_inside(start_console):
    console = start_console()
    cookie = sign_in(console)
    assert console.prefix and len(console.prefix) > 30  # a secret of each launch
    wrong_root = console.prefix[:-1] + ("A" if console.prefix[-1] != "A" else "B")
    for path in ("/", "/pack-check/", f"/?token={console.token}", f"{wrong_root}/", "/static/x"):
        status, _, body = request(console, path=path, headers={"Cookie": cookie}, under_root=False)
        assert status == 404 and "Open the console from its link" in body, path
        assert console.prefix not in body
    form = {"Cookie": cookie, "Origin": console.origin, "Content-Type": "application/json"}
    status, headers, _ = request(console, "POST", "/pack-maker/clear", form, "{}")
    assert status == 303 and headers["location"] == f"{console.prefix}/pack-maker/"
    status, _, body = request(console, path="/", headers={"Cookie": cookie})
    assert status == 200 and f'href="{console.prefix}/static/console.css"' in body
    assert f'href="{console.prefix}/memory/"' in body


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"Host": "evil.example:{port}"}, "only to its own address and port"),  # DNS rebinding
        ({"Host": "127.0.0.1:1"}, "only to its own address and port"),
        ({"Host": "127.0.0.1:{port}"}, "only to its own address and port"),  # not its address
        ({"Origin": "http://evil.example"}, "another origin"),
        ({"Origin": "http://127.0.0.1:1"}, "another origin"),  # another local web app
        ({"Origin": "null"}, "another origin"),
        ({"Sec-Fetch-Site": "cross-site"}, "another site"),
        ({"Sec-Fetch-Site": "same-site"}, "another site"),
    ],
)
def test_requests_from_elsewhere_are_refused_even_with_the_cookie(start_console, headers, why):
    console = start_console()
    cookie = sign_in(console)
    sent = {k: v.format(port=console.port) for k, v in headers.items()}
    status, _, body = request(console, path="/pack-check/", headers={"Cookie": cookie, **sent})
    assert status == 403 and why in body


def test_a_change_without_an_origin_is_refused(start_console):
    console = start_console()
    cookie = sign_in(console)
    body = '{"record": {}}'
    status, _, text = request(console, "POST", "/pack-maker/check", {"Cookie": cookie}, body)
    assert status == 403 and "must come from the console's own pages" in text
    headers = {"Cookie": cookie, "Origin": console.origin, "Content-Type": "application/json"}
    status, _, text = request(console, "POST", "/pack-maker/check", headers, body)
    assert status == 200 and '"ok":false' in text.replace(" ", "")


def test_every_page_forbids_foreign_scripts_and_framing(start_console):
    console = start_console()
    cookie = sign_in(console)
    for path in ("/", "/proxy/", "/static/console.css"):
        _, headers, _ = request(console, path=path, headers={"Cookie": cookie})
        lowered = {k.lower(): v for k, v in headers.items()}
        assert "script-src 'self'" in lowered["content-security-policy"]
        assert "frame-ancestors 'none'" in lowered["content-security-policy"]
        assert lowered["x-frame-options"] == "DENY" and lowered["cache-control"] == "no-store"


def test_the_token_is_printed_once_and_never_logged(start_console):
    console = start_console()
    cookie = sign_in(console)
    request(console, path=f"/proxy/?token={console.token}")
    request(console, path="/nowhere", headers={"Cookie": cookie})
    request(console, path="/", headers={"Host": "evil.example"})
    assert console.stop() == 0
    output = "".join(console.output)
    assert output.count(console.token) == 1, output


def test_the_browser_is_opened_on_a_private_file_not_on_the_token(start_console, tmp_path):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {opened}\n')
    browser.chmod(0o755)
    console = start_console(open_browser=True, env={"BROWSER": f"{browser} %s"})
    deadline = time.monotonic() + 60
    while not opened.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    argv = opened.read_text().split()
    assert len(argv) == 1 and argv[0].startswith("file://") and console.token not in argv[0]
    launch = Path(argv[0].removeprefix("file://"))
    assert stat.S_IMODE(launch.stat().st_mode) == 0o600
    assert stat.S_IMODE(launch.parent.stat().st_mode) == 0o700
    assert console.url in launch.read_text()
    sign_in(console)
    assert not launch.exists()  # the first sign-in removes it
    console.stop()
    assert not launch.parent.exists()  # the workspace goes with the console
    assert os.path.basename(launch) == "open-console.html"


def test_stalled_connections_to_the_console_are_closed(start_console):
    # issue 26 item 12: the console runs on the same guarded connections as serve --http
    console = start_console()
    stalled = []
    for sent in (b"", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"):
        sock = socket.create_connection((console.host, console.port), timeout=90)
        sock.sendall(sent)
        stalled.append(sock)
    for sock in stalled:
        with sock:
            received = b""
            while chunk := sock.recv(4096):  # the server closes it (a 90 s timeout fails)
                received += chunk
            assert received in (b"", HEAD_LATE)
    status, _, _ = request(console)
    assert status == 401
