"""The offline guard: no socket except what the user configured.

:func:`install` adds a Python audit hook that aborts any ``socket.connect`` (and
``socket.getaddrinfo``) to an address outside the allowed set: Unix sockets and loopback
always; anything else only when listed. It is installed by ``--assert-offline`` or the
``AFFIDAVIT_ASSERT_OFFLINE=1`` environment variable, which the test-suite sets so every
subprocess it starts is guarded too.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterable
from typing import Any

ENV = "AFFIDAVIT_ASSERT_OFFLINE"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_allowed_hosts: set[str] = set()
_installed = False


class OfflineViolation(RuntimeError):
    """Raised inside the process that tried to reach the network."""


def _is_allowed(host: Any) -> bool:
    if not isinstance(host, str):
        return True
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES or name in _allowed_hosts:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) == getattr(socket, "AF_UNIX", None):
            return
        host = address[0] if isinstance(address, tuple) and address else address
        if not _is_allowed(host):
            raise OfflineViolation(f"offline guard: refused a connection to {host!r}")
    elif event == "socket.getaddrinfo":
        host = args[0]
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if host is not None and not _is_allowed(host):
            raise OfflineViolation(f"offline guard: refused to resolve {host!r}")


def allow(hosts: Iterable[str]) -> None:
    """Permit connections to hosts the user configured (a backend URL, an OTLP endpoint)."""
    _allowed_hosts.update(h.lower() for h in hosts if h)


def install() -> None:
    """Install the guard once for this process."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


def install_if_requested() -> None:
    """Install the guard when ``AFFIDAVIT_ASSERT_OFFLINE=1`` is in the environment."""
    if os.environ.get(ENV) == "1":
        install()
