"""Starting the console: a loopback socket, per-launch secrets, the browser, and uvicorn.

Each launch listens on an address of its own, a random one of 127.0.0.0/8 (cookies are kept
per host, so a server on 127.0.0.1 never receives this console's), and serves its pages under
a secret root path, with a one-sign-in token in the link (see :mod:`affidavit.console.guard`,
ADR 0171). Where only 127.0.0.1 works (macOS has no other loopback address configured), or
with ``--host``, the address is that one and the secret root carries the protection alone.

The token never goes into a process's argv: the browser is opened on a private launch file
(0600, in a 0700 workspace) that forwards to the link, and the file is deleted on the first
sign-in. The link is printed once, on this terminal. Uvicorn's access log is off (a token in
a query string must not reach a log), and its own messages are limited to warnings.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TextIO

from affidavit.console.settings import ConsoleSettings
from affidavit.core.atomic import SECRET_FILE_MODE
from affidavit.core.errors import ConflictError, UsageError
from affidavit.core.http_connections import ConnectionLimits, uvicorn_settings

DEFAULT_HOST = "127.0.0.1"
LAUNCH_FILE = "open-console.html"


def loopback_address(text: str) -> str:
    """``text`` if it is an IPv4 loopback address (127.x.y.z), else a UsageError."""
    import ipaddress

    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise UsageError(
            f"--host {text} is not a loopback address", "use 127.x.y.z, or leave it out"
        )
    return str(address)


def random_loopback() -> str:
    """A random address of 127.0.0.0/8 other than 127.0.0.1 (and never a .0 or .255 one)."""
    while True:
        octets = [secrets.randbelow(256), secrets.randbelow(256), 1 + secrets.randbelow(254)]
        if octets != [0, 0, 1]:
            return "127.{}.{}.{}".format(*octets)


def bind(port: int | None, host: str | None = None) -> socket.socket:
    """A listening socket on ``host`` (None: a random loopback address, or 127.0.0.1 where
    no other one can be bound) and ``port`` (None or 0: a free port)."""
    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port number", "use 1-65535, or leave it out")
    if host is None:
        try:
            return _listen(random_loopback(), port)
        except OSError as exc:
            if exc.errno not in (errno.EADDRNOTAVAIL, errno.EADDRINUSE):
                raise UsageError(f"cannot listen on a loopback address ({exc.strerror})") from None
        host = DEFAULT_HOST
    try:
        return _listen(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConflictError(
                f"port {port} on {host} is in use", "pick another --port, or leave it out"
            ) from None
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror})") from None


def _listen(host: str, port: int | None) -> socket.socket:
    # proto named: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says TCP,
    # and accepted sockets copy it from this one. With proto 0 a response sent as headers then
    # body waited for the client's delayed ACK: ~40 ms on every request (measured).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((host, port or 0))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


def write_launch_file(workspace: Path, url: str) -> Path:
    """A private page that forwards the browser to ``url`` (so the token is never in argv)."""
    path = workspace / LAUNCH_FILE
    from affidavit.console.html import document, tag

    page = document(
        "Opening",
        tag("header", tag("span", "affidavit console", class_="brand")),
        tag("p", tag("a", "Open the affidavit console", href=url)),
        refresh=url,
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, SECRET_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def _open_browser(launch: Path, out: TextIO) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(launch.as_uri())
    except Exception:
        opened = False
    if not opened:
        print("could not open a browser; open the link above", file=out, flush=True)


def _stop_when_stdin_closes(server: object) -> None:
    """Ask the server to stop once stdin reaches its end (the parent proxy has gone)."""

    def watch() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        server.should_exit = True  # type: ignore[attr-defined]

    threading.Thread(target=watch, name="affidavit-console-stdin", daemon=True).start()


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def serve(settings: ConsoleSettings, out: TextIO = sys.stdout) -> None:
    """Run the console until Ctrl-C (or, with ``stop_when_stdin_closes``, stdin's end)."""
    sock = bind(settings.port, settings.host)
    address, port = sock.getsockname()[:2]
    token, root = secrets.token_urlsafe(32), "/" + secrets.token_urlsafe(24)
    workspace = Path(tempfile.mkdtemp(prefix="affidavit-console-"))
    try:
        url = f"http://{address}:{port}{root}/?token={token}"
        launch = write_launch_file(workspace, url)

        def forget_launch_file() -> None:
            with contextlib.suppress(FileNotFoundError):
                launch.unlink()

        import uvicorn

        from affidavit.console.app import create_app
        from affidavit.console.context import Console

        console = Console(settings, workspace)
        app = create_app(
            console,
            address=address,
            port=port,
            root=root,
            token=token,
            on_login=forget_launch_file,
        )
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            server_header=False,
            timeout_graceful_shutdown=2,
            **uvicorn_settings(ConnectionLimits()),  # stalled connections closed, as serve's
        )
        server = uvicorn.Server(config)
        print(f"affidavit console: {url}", file=out, flush=True)
        print("  (the link signs in one browser, once; press Ctrl-C to stop)", file=out, flush=True)
        if settings.open_browser:
            threading.Thread(target=_open_browser, args=(launch, out), daemon=True).start()
        if settings.stop_when_stdin_closes:
            _stop_when_stdin_closes(server)
        # uvicorn re-raises the signal that stopped it; SIGTERM must end in an exception, so
        # the workspace (and the launch file with the token) is removed below
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a console is stopped
            server.run(sockets=[sock])
        print("affidavit console: stopped", file=out, flush=True)
    finally:
        sock.close()
        shutil.rmtree(workspace, ignore_errors=True)


def start_beside(audit_log: Path) -> subprocess.Popen[bytes]:
    """Start a console on ``audit_log`` in a child process (``affidavit proxy --console``).

    Its output goes to this process's stderr (a proxy's stdout is the MCP channel), and it
    stops when its stdin closes, so it goes away with the proxy however the proxy ends.
    """
    command = [sys.executable, "-m", "affidavit", "console", "--audit-log", str(audit_log)]
    return subprocess.Popen(
        [*command, "--stop-when-stdin-closes"],
        stdin=subprocess.PIPE,
        stdout=sys.stderr.fileno(),
        stderr=sys.stderr.fileno(),
    )


def stop_beside(process: subprocess.Popen[bytes]) -> None:
    """Stop a console started by :func:`start_beside` (closing its stdin is the signal)."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.wait()
