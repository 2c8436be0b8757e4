"""How a request's reads are counted: the route's protocol on a real socket, its reads
handed to it one by one, since over TCP the kernel joins a client's small writes as it
likes and no client can make the server read them one at a time. A chunked body's chunks
count as reads do, and a body the answer did not wait for is not read at all."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import uvicorn
from uvicorn.server import ServerState

from kinetis_mcp_docs.server.http.uvicorn.bounds import MAX_HEAD_BYTES
from kinetis_mcp_docs.server.http.uvicorn.connection import BoundedHttpToolsProtocol
from kinetis_mcp_docs.server.http.uvicorn.connections import (
    FREE_READS,
    HEAD_FREE_READS,
    LINGER_BYTES,
    MIN_PIECE_BYTES,
)
from tests.support.http import TIMEOUT, request_head, status_of

pytestmark = pytest.mark.interpreter  # httptools, a C extension built per interpreter

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
T = TypeVar("T")
Bounded = type[BoundedHttpToolsProtocol]


async def _ok(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def _refuse_at_once(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An application that answers before reading the body, as the route answers a request
    it refuses (401, 405, 413, 429)."""
    assert scope["type"] == "http"
    headers = [(b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 405, "headers": headers})
    await send({"type": "http.response.body", "body": b"no"})


def _chunked(body: bytes, size: int) -> bytes:
    """`body` in chunks of `size` bytes, and the last chunk."""
    chunks = [body[start : start + size] for start in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"


@dataclass
class _Connection:
    """The route's protocol on one end of a socket pair, and what it wrote to the other."""

    transport: asyncio.Transport
    protocol: Any
    theirs: socket.socket
    written: bytes = b""

    async def read_until(self, done: Callable[[bytes], bool]) -> bytes:
        """What the protocol wrote, read until `done` says so or it closes its side."""
        loop = asyncio.get_running_loop()
        while not done(self.written):
            read = await loop.sock_recv(self.theirs, 65536)
            if not read:
                break
            self.written += read
        return self.written


@contextlib.asynccontextmanager
async def _connected(protocol_class: Bounded, app: Any = _ok) -> AsyncIterator[_Connection]:
    config = uvicorn.Config(app, log_config=None, lifespan="off")
    config.load()
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_accepted_socket(
        lambda: protocol_class(config, ServerState(), {}), ours
    )
    assert isinstance(protocol, protocol_class)
    try:
        yield _Connection(transport, protocol, theirs)
    finally:
        transport.close()
        theirs.close()


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def _answer_to_reads(protocol_class: Bounded, reads: list[bytes], app: Any = _ok) -> bytes:
    """What the protocol answers to a connection whose data arrives in `reads`."""

    async def run() -> bytes:
        async with _connected(protocol_class, app) as connection:
            for read in reads:
                connection.protocol.data_received(read)
            # Each answer here is written at once.
            return await connection.read_until(lambda written: b"\r\n\r\n" in written)

    return _run(run())


def test_a_head_sent_a_byte_at_a_time_is_400_once_past_its_free_reads() -> None:
    head = request_head(length=len(PING))
    answer = _answer_to_reads(BoundedHttpToolsProtocol, [bytes([byte]) for byte in head])
    assert status_of(answer) == 400
    assert answer.endswith(b'{"error":"Request headers sent in too many pieces"}')
    assert len(head) > FREE_READS  # the bound was reached before the head was done


def test_a_head_in_as_many_reads_as_it_is_free_to_take_is_read() -> None:
    lines = [f"X-Line-{n}: {'a' * 20}" for n in range(20)]
    head = request_head(*lines, length=len(PING))
    cut = len(head) // HEAD_FREE_READS
    reads = [head[n * cut : (n + 1) * cut] for n in range(HEAD_FREE_READS - 1)]
    reads.append(head[(HEAD_FREE_READS - 1) * cut :] + PING)
    assert status_of(_answer_to_reads(BoundedHttpToolsProtocol, reads)) == 200


def test_the_largest_head_in_the_most_reads_it_may_take_is_read() -> None:
    head = request_head("X-Junk: " + "a" * (MAX_HEAD_BYTES - 200), length=len(PING))
    free = [head[n : n + 1] for n in range(HEAD_FREE_READS - 1)]
    rest = head[HEAD_FREE_READS - 1 :]
    pieces = [
        rest[start : start + MIN_PIECE_BYTES] for start in range(0, len(rest), MIN_PIECE_BYTES)
    ]
    assert len(free) + len(pieces) > 10
    assert status_of(_answer_to_reads(BoundedHttpToolsProtocol, [*free, *pieces, PING])) == 200


def test_a_large_head_in_pieces_of_a_line_each_is_400_once_past_its_free_reads() -> None:
    # Each read costs the same whatever it holds, and most when it comes on its own: a head
    # of 31 KiB in 244 reads of 130 bytes cost 22 times a ping on a new connection.
    head = request_head("X-Junk: " + "a" * 20_000, length=len(PING))
    pieces = [head[start : start + 130] for start in range(0, len(head), 130)]
    answer = _answer_to_reads(BoundedHttpToolsProtocol, [*pieces, PING])
    assert status_of(answer) == 400
    assert answer.endswith(b'{"error":"Request headers sent in too many pieces"}')


def test_a_body_sent_a_byte_at_a_time_is_400_once_past_its_free_reads() -> None:
    body = b" " * 1000 + PING
    reads = [request_head(length=len(body)), *[bytes([byte]) for byte in body]]
    answer = _answer_to_reads(BoundedHttpToolsProtocol, reads)
    assert status_of(answer) == 400
    assert answer.endswith(b'{"error":"Request body sent in too many pieces"}')


def test_a_body_in_pieces_of_one_segment_is_read() -> None:
    body = b" " * 200_000 + PING
    pieces = [body[start : start + 1400] for start in range(0, len(body), 1400)]
    assert (
        status_of(
            _answer_to_reads(BoundedHttpToolsProtocol, [request_head(length=len(body)), *pieces])
        )
        == 200
    )


def test_a_chunked_body_in_one_byte_chunks_is_400_though_it_comes_in_one_read() -> None:
    # Each chunk costs the parser a call into Python, as each read does: a megabyte of
    # one-byte chunks in a few reads cost a worker a second before chunks were counted.
    head = request_head("Transfer-Encoding: chunked")
    answer = _answer_to_reads(BoundedHttpToolsProtocol, [head + _chunked(b" " * 1000 + PING, 1)])
    assert status_of(answer) == 400
    assert answer.endswith(b'{"error":"Request body sent in too many pieces"}')


def test_a_chunked_body_in_chunks_of_one_segment_is_read() -> None:
    head = request_head("Transfer-Encoding: chunked")
    body = _chunked(b" " * 200_000 + PING, 1400)
    reads = [head, *[body[start : start + 65536] for start in range(0, len(body), 65536)]]
    assert status_of(_answer_to_reads(BoundedHttpToolsProtocol, reads)) == 200


_FIRST_CHUNK = b"%x\r\n%s\r\n" % (len(PING), PING)
_ENDLESS_FRAMING = {
    # What follows a body's first chunk, and what repeats after it for as long as the
    # client likes: none of it is the body's data.
    "one trailer field": (_FIRST_CHUNK + b"0\r\nX-Pad: ", b"a" * 65536),
    "many trailer fields": (_FIRST_CHUNK + b"0\r\n", b"X-Pad: aaaaaaaaaaaaaaaa\r\n" * 2048),
    "a chunk extension": (_FIRST_CHUNK + b"1;x=", b"a" * 65536),
}


@pytest.mark.parametrize("framing", list(_ENDLESS_FRAMING), ids=list(_ENDLESS_FRAMING))
def test_a_chunked_body_whose_framing_outgrows_its_data_is_413_as_it_arrives(framing: str) -> None:
    # Trailer fields and chunk extensions once counted toward neither the head's bound nor
    # the body's: a 120 MiB trailer field cost 13 s of CPU, many small ones 1.8 GB.
    start, more = _ENDLESS_FRAMING[framing]
    head = request_head("Transfer-Encoding: chunked")

    async def run() -> tuple[bytes, int]:
        async with _connected(BoundedHttpToolsProtocol) as connection:
            connection.protocol.data_received(head + start)
            sent = 0
            while sent < 16 * 1024 * 1024 and not connection.transport.is_closing():
                connection.protocol.data_received(more)
                sent += len(more)
            assert connection.transport.is_closing(), f"read {sent} bytes of framing"
            return await connection.read_until(lambda written: b"\r\n\r\n" in written), sent

    answer, sent = _run(run())
    assert status_of(answer) == 413, answer[:200]
    assert answer.endswith(b'{"error":"Request body too large"}')
    # Refused within a head's worth of framing, then at most `LINGER_BYTES` dropped.
    assert sent <= MAX_HEAD_BYTES + LINGER_BYTES + 2 * len(more)


async def _headers_seen(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with the names of the request's headers, as the application sees them once
    it has read the body."""
    assert scope["type"] == "http"
    while (await receive()).get("more_body"):
        pass
    names = b",".join(name for name, _ in scope["headers"])
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": names})


def test_a_body_begun_in_the_read_that_ends_the_one_before_it_is_measured_on_its_own() -> None:
    # The framing bound once measured the read's bytes of the first body against the
    # second body's data, and refused the second 413.
    first = request_head("Transfer-Encoding: chunked") + _chunked(b" " * 200_000 + PING, 65536)
    second_body = b" " * 100_000 + PING
    second = request_head("Connection: close", length=len(second_body)) + second_body
    reads = [first[:1000], first[1000:] + second[:50_000], second[50_000:]]
    answers = _answers_until_closed(BoundedHttpToolsProtocol, reads)
    assert answers.count(b"HTTP/1.1 200 ") == 2, answers[:300]


def test_the_data_of_the_read_that_ends_the_head_earns_no_framing() -> None:
    # That read's data once counted toward the allowance while its bytes did not: a first
    # chunk of 200 KB let 100 KB of trailer field through.
    head = request_head("Transfer-Encoding: chunked")
    first = head + b"%x\r\n%s\r\n0\r\nX-Pad: " % (200_000, b" " * 200_000)
    answer = _answer_to_reads(BoundedHttpToolsProtocol, [first, *[b"a" * 16384] * 7, b"\r\n\r\n"])
    assert status_of(answer) == 413, answer[:200]


def test_a_request_pipelined_behind_a_body_answered_early_is_measured_on_its_own() -> None:
    # Under h11 the framing bound once measured the rest of the first body against the
    # second's data, and refused the second 413.
    first_body = b" " * 100_000
    second_body = b" " * 1000 + PING
    second = request_head(length=len(second_body)) + second_body

    async def run() -> bytes:
        async with _connected(BoundedHttpToolsProtocol, _refuse_at_once) as connection:
            bounded = connection.protocol
            bounded.data_received(request_head(length=len(first_body)) + first_body[:1000])
            await connection.read_until(lambda written: written.count(b"no") == 1)
            bounded.data_received(first_body[1000:] + second[:-500])
            bounded.data_received(second[-500:])
            return await connection.read_until(lambda written: written.count(b"no") == 2)

    answers = _run(run())
    assert answers.count(b"405 Method Not Allowed") == 2, answers[:600]


def test_trailer_fields_never_reach_the_application_as_headers() -> None:
    # A proxy in front sets or strips headers in the head; a trailer field once came back
    # among them, after the application had read them.
    head = request_head("Transfer-Encoding: chunked")
    trailer = b"0\r\nX-Forwarded-For: 203.0.113.9\r\nAuthorization: Bearer guess\r\n\r\n"
    answer = _answer_to_reads(
        BoundedHttpToolsProtocol, [head + _FIRST_CHUNK, trailer], _headers_seen
    )
    assert status_of(answer) == 200, answer[:200]
    names = answer.partition(b"\r\n\r\n")[2]
    assert b"transfer-encoding" in names
    assert b"x-forwarded-for" not in names
    assert b"authorization" not in names


def test_a_body_in_the_smallest_chunks_admitted_with_a_trailer_is_read() -> None:
    # Framing of 7 bytes for each 512 of data, and a trailer field of a kilobyte: what the
    # framing bound leaves room for.
    head = request_head("Transfer-Encoding: chunked")
    body = _chunked(b" " * (1024 * 1024) + PING, 512)[:-2] + b"X-Note: " + b"a" * 1024 + b"\r\n\r\n"
    reads = [head, *[body[start : start + 65536] for start in range(0, len(body), 65536)]]
    assert status_of(_answer_to_reads(BoundedHttpToolsProtocol, reads)) == 200


@pytest.mark.parametrize("chunk", [1, 65536], ids=["crumbs", "whole chunks"])
def test_of_a_body_the_answer_did_not_wait_for_at_most_linger_bytes_more_are_read(
    chunk: int,
) -> None:
    head = request_head("Transfer-Encoding: chunked")
    rest = _chunked(b"a" * max(LINGER_BYTES // 8, 64 * chunk), chunk)[:-5]  # never finished

    async def run() -> tuple[bytes, int]:
        async with _connected(BoundedHttpToolsProtocol, _refuse_at_once) as connection:
            connection.protocol.data_received(head + _chunked(b"a" * 1000, 1000)[:-5])
            answer = await connection.read_until(lambda written: written.endswith(b"no"))
            sent = 0
            while sent <= 8 * LINGER_BYTES and not connection.transport.is_closing():
                connection.protocol.data_received(rest)
                sent += len(rest)
            return answer, sent

    answer, sent = _run(run())
    assert status_of(answer) == 405
    # It once read on for as long as the body timeout allowed.
    assert sent <= LINGER_BYTES + len(rest)


def test_a_body_the_answer_did_not_wait_for_that_ends_leaves_the_connection_open() -> None:
    body = b" " * 100_000

    async def run() -> bytes:
        async with _connected(BoundedHttpToolsProtocol, _refuse_at_once) as connection:
            bounded = connection.protocol
            bounded.data_received(request_head(length=len(body)) + body[:1000])
            await connection.read_until(lambda written: written.count(b"no") == 1)
            bounded.data_received(body[1000:])  # the body's end, after its answer
            bounded.data_received(request_head(length=len(PING)) + PING)  # the next request
            return await connection.read_until(lambda written: written.count(b"no") == 2)

    answers = _run(run())
    assert answers.count(b"405 Method Not Allowed") == 2


def _answers_until_closed(protocol_class: Bounded, reads: list[bytes]) -> bytes:
    """Everything the protocol writes to a connection whose data arrives in `reads`, until
    it closes its writing side."""

    async def run() -> bytes:
        async with _connected(protocol_class) as connection:
            for read in reads:
                connection.protocol.data_received(read)
            return await connection.read_until(lambda _written: False)

    return _run(run())


@pytest.mark.parametrize(("size", "before"), [(40_000, 1), (120_000, 1), (40_000, 3)])
def test_a_head_pipelined_behind_requests_is_held_to_32_kib_and_refused_after_their_answers(
    size: int, before: int
) -> None:
    # Only the first head of a read was measured: one pipelined behind it went to the
    # parser whole, and was served at 120 KB.
    ordinary = request_head(length=len(PING)) + PING
    large = request_head("X-Junk: " + "a" * size, length=len(PING)) + PING
    answers = _answers_until_closed(BoundedHttpToolsProtocol, [ordinary * before + large])
    assert answers.count(b"HTTP/1.1 ") == before + 1
    assert answers.count(b"HTTP/1.1 200 ") == before
    assert answers.endswith(b'{"error":"Request headers too large"}')
    last = answers.rindex(b"HTTP/1.1 ")
    assert answers[last:].startswith(b"HTTP/1.1 431 ")


def test_a_head_begun_at_the_end_of_a_read_is_measured_whole() -> None:
    first = request_head(length=len(PING)) + PING
    second = request_head("X-Junk: " + "a" * 40_000, length=len(PING)) + PING
    answers = _answers_until_closed(
        BoundedHttpToolsProtocol, [first + second[:20_000], second[20_000:]]
    )
    assert answers.startswith(b"HTTP/1.1 200 ")
    assert answers.endswith(b'{"error":"Request headers too large"}')


def test_pipelined_requests_under_the_bound_are_all_answered_in_order() -> None:
    requests = [request_head(f"X-N: {n}", length=len(PING)) + PING for n in range(5)]
    closing = request_head("Connection: close", length=len(PING)) + PING
    answers = _answers_until_closed(BoundedHttpToolsProtocol, [b"".join(requests) + closing])
    assert answers.count(b"HTTP/1.1 200 ") == 6
