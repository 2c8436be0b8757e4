"""What a connection may cost: the size of a request's head, the time it may take to send its
head and its body or to sit idle, and how many connections there may be, end to end over
real sockets to a real `kinetis-docs serve --http`.

Each deadline a test waits out is set short through its option, and every wait is bounded
by the harness's timeout: a connection the server never closes fails the test.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import (
    TIMEOUT,
    HttpServer,
    answer_until_closed,
    clean_environ,
    request_head,
    serve_http_argv,
    status_of,
    with_descriptor_limit,
)
from tests.support.processes import cpu_seconds

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _connect(server: HttpServer) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _send_in_background(
    connection: socket.socket, pieces: list[bytes], pause: float = 0
) -> threading.Thread:
    """Send `pieces` one write each, `pause` seconds apart (so that the server reads each
    on its own), on a thread: the server may answer, and close, before they are all sent,
    which is then no error of the test's."""

    def send() -> None:
        with contextlib.suppress(OSError):
            for at, piece in enumerate(pieces):
                if at and pause:
                    time.sleep(pause)
                connection.sendall(piece)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    return sender


def _exchange(server: HttpServer, pieces: list[bytes]) -> bytes:
    with _connect(server) as connection:
        sender = _send_in_background(connection, pieces)
        answer = answer_until_closed(connection)
        sender.join(TIMEOUT)
    return answer


def _json_error(answer: bytes) -> str:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower(), answer
    error = json.loads(body)["error"]
    assert isinstance(error, str)
    return error


def _ping_status(server: HttpServer) -> int:
    return server.rpc("ping").status_code


# Head size


@pytest.mark.parametrize(
    "pieces",
    [
        [request_head("X-Junk: " + "a" * 256 * 1024, length=len(PING)) + PING],
        [request_head(*[f"X-Junk-{n}: {'a' * 100}" for n in range(400)])],
        # The audit's shape: one header in many writes, which the parser once joined one
        # piece at a time, quadratically (in pieces each as large as a head's reads must
        # average, so that however the kernel splits them, the head is refused for its size).
        [request_head("X-Junk: a")[:-4], *[b"a" * 16 * 1024] * 16],
    ],
    ids=["one large header", "many headers", "in small pieces"],
)
def test_a_request_head_over_32_kib_is_431_and_the_next_request_is_answered(
    tree_server: HttpServer, pieces: list[bytes]
) -> None:
    answer = _exchange(tree_server, pieces)
    assert status_of(answer) == 431, answer[:200]
    assert _json_error(answer) == "Request headers too large"
    assert _ping_status(tree_server) == 200


def test_a_request_head_under_32_kib_is_served(tree_server: HttpServer) -> None:
    head = request_head("X-Junk: " + "a" * 30 * 1024, "Connection: close", length=len(PING))
    pieces = [head[:100], head[100:20_000], head[20_000:] + PING]
    assert status_of(_exchange(tree_server, pieces)) == 200


def _cpu_per_exchange(server: HttpServer, pieces: list[bytes], count: int) -> float:
    before = cpu_seconds(server.process.pid)
    for _ in range(count):
        _exchange(server, pieces)
    return (cpu_seconds(server.process.pid) - before) / count


def test_a_head_of_megabytes_costs_a_small_multiple_of_an_ordinary_request(
    tree_server: HttpServer,
) -> None:
    ordinary = [request_head("Connection: close", length=len(PING)) + PING]
    # Once answered 200 after CPU quadratic in its size: 2 s for 32 MiB, 8.6 s for 64 MiB.
    huge = [request_head("X-Junk: a")[:-4], *[b"a" * 16 * 1024] * 256]  # 4 MiB, in pieces
    _cpu_per_exchange(tree_server, ordinary, 5)  # warm
    ordinary_cpu = _cpu_per_exchange(tree_server, ordinary, 50)
    huge_cpu = _cpu_per_exchange(tree_server, huge, 5)
    assert huge_cpu < 20 * ordinary_cpu, (huge_cpu, ordinary_cpu)


def test_a_body_of_nested_arrays_costs_what_a_body_of_its_size_costs(
    tree_server: HttpServer,
) -> None:
    # Once parsed: a worker's event loop spent 1.2 s on 2 MiB of nested arrays, where the
    # same size in one string cost 13 ms.
    envelope = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"ignored":%s}}'
    nested = envelope % (b"[" + b",".join([b"[" * 10 + b"]" * 10] * 90_000) + b"]")
    string = envelope % (b'"' + b"a" * (len(nested) - len(envelope) - 2) + b'"')
    assert len(string) == len(nested) - 2

    def posting(body: bytes) -> list[bytes]:
        return [request_head("Connection: close", length=len(body)) + body]

    _cpu_per_exchange(tree_server, posting(string), 2)  # warm
    string_cpu = _cpu_per_exchange(tree_server, posting(string), 10)
    nested_cpu = _cpu_per_exchange(tree_server, posting(nested), 10)
    assert nested_cpu < 5 * string_cpu, (nested_cpu, string_cpu)


def _one_byte_chunks(body: bytes) -> bytes:
    return b"".join(b"1\r\n%s\r\n" % body[at : at + 1] for at in range(len(body))) + b"0\r\n\r\n"


def test_a_body_in_one_byte_chunks_costs_a_small_multiple_of_an_ordinary_request(
    tree_server: HttpServer,
) -> None:
    ordinary = [request_head("Connection: close", length=len(PING)) + PING]
    # Once read whole, 2 MiB in one-byte chunks (12 MB sent) cost the worker 0.33 s.
    body = _one_byte_chunks(PING.ljust(2 * 1024 * 1024 - 1))
    crumbs = [body[at : at + 65536] for at in range(0, len(body), 65536)]
    huge = [request_head("Transfer-Encoding: chunked", "Connection: close"), *crumbs]
    _cpu_per_exchange(tree_server, ordinary, 5)  # warm
    ordinary_cpu = _cpu_per_exchange(tree_server, ordinary, 50)
    huge_cpu = _cpu_per_exchange(tree_server, huge, 5)
    assert huge_cpu < 20 * ordinary_cpu, (huge_cpu, ordinary_cpu)
    answer = _exchange(tree_server, huge)
    assert status_of(answer) == 400
    assert _json_error(answer) == "Request body sent in too many pieces"


def test_a_trailer_field_of_megabytes_is_413_at_a_small_multiple_of_an_ordinary_request(
    tree_server: HttpServer,
) -> None:
    ordinary = [request_head("Connection: close", length=len(PING)) + PING]
    # Counted toward no bound, a 120 MiB trailer field once cost 13 s of CPU (its pieces
    # joined one read at a time), while a ping on another connection waited 4.75 s.
    first = request_head("Transfer-Encoding: chunked", "Connection: close")
    first += b"%x\r\n%s\r\n0\r\nX-Pad: " % (len(PING), PING)
    huge = [first, *[b"a" * 16 * 1024] * 512]  # 8 MiB, in pieces
    _cpu_per_exchange(tree_server, ordinary, 5)  # warm
    ordinary_cpu = _cpu_per_exchange(tree_server, ordinary, 50)
    huge_cpu = _cpu_per_exchange(tree_server, huge, 5)
    assert huge_cpu < 20 * ordinary_cpu, (huge_cpu, ordinary_cpu)
    answer = _exchange(tree_server, huge)
    assert status_of(answer) == 413, answer[:200]
    assert _json_error(answer) == "Request body too large"
    assert _ping_status(tree_server) == 200


def test_the_rest_of_a_body_the_answer_did_not_wait_for_is_not_read(
    tree_server: HttpServer,
) -> None:
    # A probe answers a POST 405 without reading its body; the connection once went on
    # parsing whatever followed, one-byte chunks at a core's worth of CPU, until the body
    # timeout. Now it closes as after a refusal, having dropped at most a megabyte or so.
    head = b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    crumbs = b"1\r\na\r\n" * 10_000
    with _connect(tree_server) as connection:
        connection.sendall(head + b"1\r\na\r\n")
        answer = b""
        while not answer.endswith(b"}"):  # the whole answer, its JSON body last
            read = connection.recv(65536)
            assert read, answer
            answer += read
        sent = 0
        with contextlib.suppress(OSError):  # the server's reset, once it stops listening
            while sent < 64 * 1024 * 1024:
                connection.sendall(crumbs)
                sent += len(crumbs)
    assert status_of(answer) == 405, answer[:200]
    assert sent < 64 * 1024 * 1024
    assert _ping_status(tree_server) == 200


# Timeouts


def test_a_head_not_finished_within_the_header_timeout_is_408(start_http: StartHttp) -> None:
    server = start_http("--header-timeout", "1", "--idle-timeout", "600", *UNLIMITED)
    with _connect(server) as connection:
        connection.sendall(request_head(length=len(PING))[:-2])  # all but the blank line
        answer = answer_until_closed(connection)
    assert status_of(answer) == 408, answer
    assert _json_error(answer) == "Request timeout"
    assert _ping_status(server) == 200


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_timeout(
    start_http: StartHttp,
) -> None:
    server = start_http("--idle-timeout", "1", "--header-timeout", "600", *UNLIMITED)
    with _connect(server) as fresh:
        assert answer_until_closed(fresh) == b""  # closed, nothing said: no request to answer
    with _connect(server) as kept:
        kept.sendall(request_head(length=len(PING)) + PING)  # keep-alive: HTTP/1.1's default
        answer = answer_until_closed(kept)
    assert status_of(answer) == 200
    assert answer.endswith(b'"result":{}}')


def test_a_body_not_finished_within_the_body_timeout_is_408_and_lets_go_of_it(
    start_http: StartHttp,
) -> None:
    server = start_http("--body-timeout", "1", "--header-timeout", "600", *UNLIMITED)
    uploads = []
    try:
        for _ in range(20):  # stalled uploads of 2 MiB but a byte, each buffered whole
            upload = _connect(server)
            uploads.append(upload)
            upload.sendall(request_head(length=2 * 1024 * 1024) + b" " * (2 * 1024 * 1024 - 1))
        for upload in uploads:
            answer = answer_until_closed(upload)
            assert status_of(answer) == 408, answer[:200]
            assert _json_error(answer) == "Request timeout"
    finally:
        for upload in uploads:
            upload.close()
    assert _ping_status(server) == 200
    assert "Traceback" not in server.output


def test_a_body_begun_in_the_read_that_ends_the_one_before_it_is_held_to_the_body_timeout(
    start_http: StartHttp,
) -> None:
    # A request pipelined so that its body began in the read ending the previous body was
    # once given no body timeout at all: its client could hold the connection for ever.
    server = start_http("--body-timeout", "1", *UNLIMITED)
    first = PING.ljust(2000)
    with _connect(server) as connection:
        connection.sendall(request_head("Expect: 100-continue", length=len(first)) + first[:1000])
        # Asked for once the route reads it: the head and the body's start have been read.
        assert connection.recv(65536).startswith(b"HTTP/1.1 100 Continue")
        connection.sendall(first[1000:] + request_head(length=len(PING) + 1000) + b" " * 10)
        answer = answer_until_closed(connection)
    assert status_of(answer) == 200, answer[:300]
    assert b"HTTP/1.1 408 Request Timeout" in answer, answer[:600]
    assert answer.endswith(b'{"error":"Request timeout"}')


# The connection bound


def test_at_the_connection_bound_the_oldest_idle_connection_makes_room(
    start_http: StartHttp,
) -> None:
    bounds = ("--max-connections", "8", "--idle-timeout", "600", "--header-timeout", "600")
    server = start_http(*bounds, *UNLIMITED)
    idle = [_connect(server) for _ in range(20)]
    try:
        idle[-1].sendall(b"P")  # the newest has begun a head: still idle, and kept
        assert _ping_status(server) == 200
        # 21 connections under a bound of 8: the 13 oldest were closed to make room.
        for connection in idle[:13]:
            assert answer_until_closed(connection) == b""
        idle[-1].sendall(request_head(length=len(PING))[1:] + PING)
        idle[-1].settimeout(TIMEOUT)
        assert status_of(idle[-1].recv(65536)) == 200
    finally:
        for connection in idle:
            connection.close()


def test_at_the_connection_bound_with_every_connection_busy_a_new_one_is_503(
    start_http: StartHttp,
) -> None:
    server = start_http("--max-connections", "3", "--body-timeout", "600", *UNLIMITED)
    ping = [request_head("Connection: close", length=len(PING)) + PING]
    busy = [_connect(server) for _ in range(3)]
    try:
        for connection in busy:  # each in the middle of its request's body
            connection.sendall(request_head("Expect: 100-continue", length=1000))
            # The route asks for the body once it reads it: the request is under way.
            assert connection.recv(65536).startswith(b"HTTP/1.1 100 Continue"), connection
            connection.sendall(b" " * 10)
        answer = _exchange(server, ping)
        assert status_of(answer) == 503, answer
        assert _json_error(answer) == "Too many connections"
        busy.pop().close()
        # Room is made once the server has seen that close; until then the answer is 503.
        for _ in range(1000):
            if status_of(answer := _exchange(server, ping)) != 503:
                break
        assert status_of(answer) == 200, answer
    finally:
        for connection in busy:
            connection.close()


# The close of the connection shed or refused last may still wait its turn in the
# server's event loop when its successor's answer has already arrived.
CLOSING = 1


def _connections(server: HttpServer) -> int:
    """The TCP connections to its port the server's process holds open (descriptors it
    has not closed), from the kernel's tables."""
    inodes = {_readlink(fd) for fd in Path(f"/proc/{server.process.pid}/fd").iterdir()}
    port = f":{server.port:04X}"
    held = 0
    for table in ("tcp", "tcp6"):
        lines = Path(f"/proc/{server.process.pid}/net/{table}").read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            listening = state == "0A"
            held += local.endswith(port) and not listening and f"socket:[{inode}]" in inodes
    return held


def _readlink(fd: Path) -> str:
    try:
        return str(fd.readlink())
    except FileNotFoundError:  # closed while listed
        return ""


def _refused_and_held(server: HttpServer, pieces: list[bytes], held: list[socket.socket]) -> bytes:
    """Send `pieces` on a new connection and read the answer, keeping the connection open
    (in `held`): a client that does not hang up after a refusal."""
    connection = _connect(server)
    held.append(connection)
    with contextlib.suppress(OSError):
        connection.sendall(b"".join(pieces))
    answer = b""
    with contextlib.suppress(ConnectionResetError):
        while not answer.endswith(b"}"):
            read = connection.recv(65536)
            if not read:
                break
            answer += read
    return answer


@pytest.fixture
def held() -> Iterator[list[socket.socket]]:
    """Connections a test keeps open, closed after it."""
    connections: list[socket.socket] = []
    yield connections
    for connection in connections:
        connection.close()


def test_connections_lingering_after_a_refusal_count_toward_the_bound(
    start_http: StartHttp, held: list[socket.socket]
) -> None:
    # A refused connection lingers, reading what the client still sends so that it reads
    # the answer; uncounted meanwhile, a flood of refused connections held descriptors
    # beyond the bound.
    server = start_http("--max-connections", "4", *UNLIMITED)
    large = [request_head("X-Junk: " + "a" * 40_000, length=len(PING)) + PING]
    answers = [_refused_and_held(server, large, held) for _ in range(30)]
    assert [status_of(answer) for answer in answers] == [431] * 30
    assert _connections(server) <= 4 + CLOSING
    assert _ping_status(server) == 200


def test_connections_refused_for_want_of_room_hold_few_descriptors(
    start_http: StartHttp, held: list[socket.socket]
) -> None:
    server = start_http("--max-connections", "4", "--body-timeout", "600", *UNLIMITED)
    for _ in range(4):  # every connection in the middle of its request's body
        connection = _connect(server)
        held.append(connection)
        connection.sendall(request_head("Expect: 100-continue", length=1000))
        assert connection.recv(65536).startswith(b"HTTP/1.1 100 Continue")
    ping = [request_head(length=len(PING)) + PING]
    answers = [_refused_and_held(server, ping, held) for _ in range(30)]
    # The first lingers so that its client reads the 503; past a few, each is closed at
    # once (its client may then read the 503, or only the close).
    assert status_of(answers[0]) == 503
    assert {status_of(answer) for answer in answers if answer} == {503}
    assert _connections(server) <= 4 + 1 + CLOSING


@pytest.fixture
def limited_server(tmp_path: Path) -> Iterator[HttpServer]:
    """A route run with at most 1,024 descriptors, whose idle and header timeouts are too
    long to help: only the connection bound can."""
    argv = serve_http_argv(
        "--docs-dir", str(tmp_path), "--idle-timeout", "600", "--header-timeout", "600"
    )
    server = HttpServer(with_descriptor_limit(1024, [*argv, *UNLIMITED]), clean_environ())
    yield server
    server.stop()


def test_1100_idle_sockets_under_a_1024_descriptor_limit_leave_the_route_reachable(
    limited_server: HttpServer,
) -> None:
    idle: list[socket.socket] = []
    try:
        idle.extend(_connect(limited_server) for _ in range(1100))
        assert _ping_status(limited_server) == 200
    finally:
        for connection in idle:
            connection.close()
    assert "Traceback" not in limited_server.output


PROTOCOL = "kinetis_mcp_docs.server.http.uvicorn.connection:BoundedHttpToolsProtocol"


def _plain_uvicorn(settings: dict[str, str]) -> HttpServer:
    argv = [
        *(sys.executable, "-m", "uvicorn", "--factory", "kinetis_mcp_docs.server.http:create_app"),
        *("--http", PROTOCOL, "--ws", "none", "--port", "0"),
    ]
    return HttpServer(argv, {**clean_environ(), **settings})


def _ping(request_id: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % request_id


def _posting(request_id: int, *lines: str, version: str = "1.1") -> tuple[bytes, bytes]:
    """The head and the body of a ping numbered `request_id`."""
    body = _ping(request_id)
    head = request_head(*lines, length=len(body))
    return head.replace(b" HTTP/1.1\r\n", f" HTTP/{version}\r\n".encode(), 1), body


def _upgrading(request_id: int, spelling: str = "Upgrade", *, version: str = "1.1") -> bytes:
    """A ping asking to upgrade to h2c as `curl --http2` does, `spelling` the case of the
    word in `Connection` and of the `Upgrade` header's name."""
    head, body = _posting(
        request_id,
        f"Connection: {spelling}, HTTP2-Settings",
        f"{spelling}: h2c",
        "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA",
        version=version,
    )
    return head + body


def _last(request_id: int) -> bytes:
    head, body = _posting(request_id, "Connection: close")
    return head + body


def _upgrade_cases() -> dict[str, tuple[list[bytes], list[int]]]:
    """What a client sends, read by read, and the ids of the answers it must get, in order."""
    cases: dict[str, tuple[list[bytes], list[int]]] = {}
    for spelling in ("Upgrade", "UPGRADE", "upgrade", "uPgRaDe"):
        whole = _upgrading(1, spelling) + _last(2)
        cases[f"{spelling}, whole"] = [whole], [1, 2]
        half = whole.index(b"\r\n\r\n") // 2
        cases[f"{spelling}, in two reads"] = [whole[:half], whole[half:]], [1, 2]
    upgrading = _upgrading(2, "uPgRaDe")
    head, body = _posting(1)
    cases["pipelined behind a request, in its read"] = (
        [head + body + upgrading + _last(3)],
        [1, 2, 3],
    )
    after_upgrade = upgrading.index(b"HTTP2-Settings: ")  # the Upgrade line in the first read
    cases["pipelined, its head cut after its Upgrade"] = (
        [head + body + upgrading[:after_upgrade], upgrading[after_upgrade:] + _last(3)],
        [1, 2, 3],
    )
    cases["pipelined behind a body ending in a later read"] = (
        [head + body[:10], body[10:] + upgrading + _last(3)],
        [1, 2, 3],
    )
    cases["HTTP/1.0"] = [_upgrading(1, "upgrade", version="1.0")], [1]
    chunked = request_head("Connection: upgrade", "Upgrade: h2c", "Transfer-Encoding: chunked")
    ping = _ping(1)
    cases["a chunked body"] = (
        [chunked + b"%x\r\n%s\r\n0\r\n\r\n" % (len(ping), ping) + _last(2)],
        [1, 2],
    )
    return cases


def test_a_request_asking_to_upgrade_the_connection_is_answered_as_http_1_1(tmp_path: Path) -> None:
    # `curl --http2` asks so; httptools once read the body as the new protocol's first
    # bytes, and the route answered -32700 to a valid request. The head was then mended
    # where the client spelled `Upgrade` as curl does and the head came first in its read:
    # `uPgRaDe`, or an upgrading request pipelined behind another, was still answered
    # -32700 and what followed it in the read dropped, the connection left hanging.
    server = _plain_uvicorn(
        {"KINETIS_DOCS_PAGES_DIR": str(tmp_path), "KINETIS_DOCS_RATE_LIMIT": "1000"}
    )
    wrong = {}
    try:
        for case, (pieces, ids) in _upgrade_cases().items():
            with _connect(server) as connection:
                sender = _send_in_background(connection, pieces, pause=0.05)
                try:
                    answers = answer_until_closed(connection, timeout=5)
                except AssertionError as hung:
                    answers = str(hung).encode()
                sender.join(TIMEOUT)
            answered = [int(n) for n in re.findall(rb'"id":(\d+),"result":\{\}', answers)]
            if answers.count(b"HTTP/1.1 200 OK") != len(ids) or answered != ids:
                wrong[case] = answers[-300:]
    finally:
        server.stop()
    assert not wrong, "\n".join(f"{case}: {answer!r}" for case, answer in wrong.items())
    assert "upgrade" not in server.output.lower()


@pytest.mark.parametrize(
    ("head", "body"),
    [
        (b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", b" " * 100),
        (
            request_head("Transfer-Encoding: chunked")
            + b"".join(b"10000\r\n" + b" " * 65536 + b"\r\n" for _ in range(33)),
            b"0\r\n\r\n",
        ),
    ],
    ids=["405", "413 chunked"],
)
def test_a_connection_answered_before_its_body_ended_is_closed_idle_after_it_ends(
    tmp_path: Path, head: bytes, body: bytes
) -> None:
    # A request answered before its body was read (a POST to a probe, a body over 2 MiB
    # sent chunked) whose body then ended within what is still read of it kept its
    # connection, as it should, but with no idle timeout: reading the rest of the body
    # disarmed it and nothing armed it again, so the connection was held for ever.
    settings = {
        "KINETIS_DOCS_PAGES_DIR": str(tmp_path),
        "KINETIS_DOCS_RATE_LIMIT": "1000",
        "KINETIS_DOCS_IDLE_TIMEOUT": "1",
    }
    server = _plain_uvicorn(settings)
    try:
        with _connect(server) as connection:
            connection.sendall(head)
            answer = b""
            while not answer.endswith(b"}"):  # the whole answer, its JSON body last
                read = connection.recv(65536)
                assert read, answer
                answer += read
            connection.sendall(body)
            began = time.monotonic()
            assert answer_until_closed(connection, timeout=10) == b""
            assert time.monotonic() - began > 0.5  # kept, then closed idle: not at once
    finally:
        server.stop()
    assert status_of(answer) in (405, 413), answer


def test_a_request_pipelined_behind_one_being_answered_is_held_to_the_body_timeout(
    tmp_path: Path,
) -> None:
    # h11 reads such a request only once the one before is answered, where no deadline
    # was armed: a body never finished held the connection for ever.
    settings = {
        "KINETIS_DOCS_PAGES_DIR": str(tmp_path),
        "KINETIS_DOCS_RATE_LIMIT": "1000000",
        "KINETIS_DOCS_BODY_TIMEOUT": "1",
        "KINETIS_DOCS_IDLE_TIMEOUT": "600",
    }
    server = _plain_uvicorn(settings)
    try:
        with _connect(server) as connection:
            first = request_head(length=len(PING)) + PING
            connection.sendall(first + request_head(length=len(PING) + 1000) + b" " * 10)
            answer = answer_until_closed(connection)
    finally:
        server.stop()
    assert status_of(answer) == 200, answer[:300]
    assert answer.endswith(b'{"error":"Request timeout"}'), answer[-300:]


def test_plain_uvicorn_given_a_protocol_of_the_route_holds_the_same_bounds(tmp_path: Path) -> None:
    # As the http page tells an operator who runs the factory under uvicorn directly.
    settings = {
        "KINETIS_DOCS_PAGES_DIR": str(tmp_path),
        "KINETIS_DOCS_RATE_LIMIT": "1000000",
        "KINETIS_DOCS_HEADER_TIMEOUT": "1",
        "KINETIS_DOCS_BODY_TIMEOUT": "1",
        "KINETIS_DOCS_IDLE_TIMEOUT": "1",
        "KINETIS_DOCS_MAX_CONNECTIONS": "6",
    }
    server = _plain_uvicorn(settings)
    try:
        big = _exchange(server, [request_head("X-Junk: " + "a" * 64 * 1024)])
        assert status_of(big) == 431, big[:200]
        with _connect(server) as connection:
            connection.sendall(request_head()[:-2])
            assert status_of(answer_until_closed(connection)) == 408
        with _connect(server) as connection:
            connection.sendall(request_head(length=1000) + b" " * 10)
            assert status_of(answer_until_closed(connection)) == 408
        with _connect(server) as connection:
            assert answer_until_closed(connection) == b""  # idle: closed, nothing said
        with _connect(server) as connection:
            connection.sendall(request_head(length=len(PING) + 1) + b" " + PING[:-1])
            connection.sendall(PING[-1:])  # a body in two reads, as it may come
            assert status_of(connection.recv(65536)) == 200
        idle = [_connect(server) for _ in range(10)]
        try:
            assert _ping_status(server) == 200
            for connection in idle[:5]:  # 11 under a bound of 6: the oldest made room
                assert answer_until_closed(connection) == b""
        finally:
            for connection in idle:
                connection.close()
        held: list[socket.socket] = []
        try:
            large = [request_head("X-Junk: " + "a" * 40_000)]
            answers = [_refused_and_held(server, large, held) for _ in range(20)]
            assert [status_of(answer) for answer in answers] == [431] * 20
            assert _connections(server) <= 6 + CLOSING  # lingering, and counted
        finally:
            for connection in held:
                connection.close()
    finally:
        server.stop()
