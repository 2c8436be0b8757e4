"""The memory a worker gives request bodies held at once: a body past it is 503 before it is
read, while ordinary requests go on being answered."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.http.limits.body_budget import SMALL_BODY_BYTES, BodyBudget
from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import TIMEOUT, HttpServer, answer_until_closed, request_head, status_of
from tests.support.processes import wait_for

MIB = 1 << 20
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
UPLOAD = 2_000_000


def test_large_bodies_leave_an_eighth_of_the_budget_to_ordinary_ones() -> None:
    budget = BodyBudget(16 * MIB)
    assert all(budget.reserve(2 * MIB) for _ in range(7))  # 14 of the 16 MiB
    assert not budget.reserve(2 * MIB)  # the last eighth is not for large bodies
    assert budget.reserve(SMALL_BODY_BYTES)  # an ordinary one still fits
    budget.release(SMALL_BODY_BYTES)
    budget.release(2 * MIB)
    assert budget.reserve(2 * MIB)  # a body let go of makes room again
    assert budget.held == 14 * MIB


def _connect(server: HttpServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)


def _unread_by_server(server: HttpServer, client: socket.socket) -> int | None:
    """The bytes the kernel holds for the server on `client`'s connection, not yet read."""
    port = client.getsockname()[1]
    for line in Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if local.endswith(f":{server.port:04X}") and remote.endswith(f":{port:04X}"):
            return int(fields[4].split(":")[1], 16)
    return None


@pytest.fixture
def small_budget(start_http: StartHttp, tmp_path: Path) -> HttpServer:
    (tmp_path / "index.md").write_text("# Home\n", encoding="utf-8")
    # 4 MiB: one upload of 2 MB fits (3.5 MiB are for large bodies), a second does not.
    return start_http("--docs-dir", str(tmp_path), "--body-memory", "4", *UNLIMITED)


def _begin_upload(server: HttpServer) -> socket.socket:
    """A connection that declared an upload of `UPLOAD` bytes, sent part of it, and stopped;
    returned once the route holds it (its reading side drained, a later request answered)."""
    upload = _connect(server)
    upload.sendall(request_head(length=UPLOAD) + b" " * 100_000)
    wait_for(lambda: _unread_by_server(server, upload) == 0, "the route to read", TIMEOUT)
    # Its request began before this one's: by the time this is answered, it holds its room.
    assert server.rpc("ping").status_code == 200
    return upload


def test_a_body_past_the_budget_is_503_before_it_is_read_and_ordinary_ones_are_answered(
    small_budget: HttpServer,
) -> None:
    first = _begin_upload(small_budget)
    try:
        with _connect(small_budget) as second:
            second.sendall(request_head(length=UPLOAD))  # the head alone: nothing more is sent
            answer = answer_until_closed(second)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert status_of(answer) == 503, answer[:300]
        assert b"\r\nretry-after: 1\r\n" in head.lower()
        assert json.loads(body) == {"error": "Too many request bodies in flight"}
        # Meanwhile an ordinary request finds room.
        assert small_budget.rpc("ping").status_code == 200

        first.sendall(b" " * (UPLOAD - 100_000 - len(PING)) + PING)
        assert status_of(first.recv(65536)) == 200
    finally:
        first.close()
    # The first body let go of, an upload fits again.
    with _connect(small_budget) as again:
        again.sendall(request_head("Connection: close", length=UPLOAD))
        again.sendall(b" " * (UPLOAD - len(PING)) + PING)
        assert status_of(answer_until_closed(again)) == 200


def test_a_chunked_body_counts_as_the_largest_a_body_may_be(small_budget: HttpServer) -> None:
    first = _begin_upload(small_budget)
    try:
        with _connect(small_budget) as chunked:
            chunked.sendall(request_head("Transfer-Encoding: chunked"))
            assert status_of(answer_until_closed(chunked)) == 503
    finally:
        first.close()
