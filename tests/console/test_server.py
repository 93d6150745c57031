"""The console's listening socket: loopback only, and Nagle off for every connection."""

from __future__ import annotations

import socket

from affidavit.console.server import HOST, bind


def test_the_socket_is_loopback_tcp_so_asyncio_turns_nagle_off() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and an accepted
    # socket copies the listener's; with proto 0 every response waited ~40 ms for an ACK
    sock = bind(None)
    try:
        assert sock.getsockname()[0] == HOST
        assert sock.proto == socket.IPPROTO_TCP
        client = socket.create_connection(sock.getsockname())
        accepted, _ = sock.accept()
        assert accepted.proto == socket.IPPROTO_TCP
        accepted.close()
        client.close()
    finally:
        sock.close()
