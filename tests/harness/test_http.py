"""The HTTP server harness reports a server started only once its socket listens."""

from __future__ import annotations

import socket

import pytest

from tests.support.http import _LISTENING_TABLES, _listening


@pytest.mark.skipif(not _LISTENING_TABLES[0].exists(), reason="reads /proc/net/tcp")
def test_a_bound_socket_listens_only_once_listen_is_called() -> None:
    # What the route's socket is between uvicorn's start-up lines and its listen().
    with socket.socket() as bound:
        bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        assert not _listening(port)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()

        bound.listen()

        assert _listening(port)
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@pytest.mark.skipif(not _LISTENING_TABLES[1].exists(), reason="reads /proc/net/tcp6")
def test_a_socket_listening_on_ipv6_is_seen() -> None:
    try:
        listening = socket.socket(socket.AF_INET6)
        listening.bind(("::1", 0))
    except OSError as error:
        pytest.skip(f"no IPv6 loopback here ({error})")
    with listening:
        listening.listen()
        assert _listening(listening.getsockname()[1])
