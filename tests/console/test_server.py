"""The console's listening socket: a random loopback address, and Nagle off for every
connection."""

from __future__ import annotations

import ipaddress
import socket

from affidavit.console.server import bind


def test_the_socket_is_loopback_tcp_so_asyncio_turns_nagle_off() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and an accepted
    # socket copies the listener's; with proto 0 every response waited ~40 ms for an ACK
    sock = bind(None)
    try:
        assert ipaddress.ip_address(sock.getsockname()[0]).is_loopback
        assert sock.proto == socket.IPPROTO_TCP
        client = socket.create_connection(sock.getsockname())
        accepted, _ = sock.accept()
        assert accepted.proto == socket.IPPROTO_TCP
        accepted.close()
        client.close()
    finally:
        sock.close()


def test_each_launch_gets_its_own_loopback_address() -> None:
    # cookies are kept per host: a server on 127.0.0.1 never gets another address's cookies
    sockets = [bind(None) for _ in range(5)]
    try:
        addresses = {sock.getsockname()[0] for sock in sockets}
        assert len(addresses) > 1 and "127.0.0.1" not in addresses
    finally:
        for sock in sockets:
            sock.close()
