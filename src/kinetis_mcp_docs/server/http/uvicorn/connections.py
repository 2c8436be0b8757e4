"""What every bounded connection of a worker shares, whichever HTTP parser reads it: the
connection bound, the answers a refusal sends, how many reads a request may take, and how
long a connection lingers after a refusal. `connection` (httptools) and `connection_h11`
(h11) are the two protocols that hold these bounds.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol

from .bounds import MAX_HEAD_BYTES, ConnectionBounds

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio

    from uvicorn.server import ServerState


class Bounded(Protocol):
    """A connection the table can count and close."""

    transport: asyncio.Transport

    @property
    def idle(self) -> bool:
        """No request in progress: none yet, the last one answered, or refused."""
        ...

    def uncount(self) -> None:
        """The connection no longer counts toward the bound (it is closing)."""
        ...


LINGER_SECONDS = 2.0
LINGER_BYTES = 1024 * 1024
# Each read costs the same whatever it holds: some 10 µs when reads come back to back, and
# several times that when each comes on its own after a pause (the event loop wakes for it,
# its caches cold): a head of 31 KiB in 244 reads so cost 22 times a ping on a new
# connection. A body must come in pieces of `MIN_BODY_PIECE_BYTES` on average beyond its
# first `FREE_READS`. A head, which a client writes whole (or a line at a time, which the
# kernel joins into a read or two before the server wakes), must come in pieces of
# `MIN_PIECE_BYTES` beyond its first `HEAD_FREE_READS`: the largest admitted takes at most
# 11 reads. A refused connection reads on, dropping what comes, for `HEAD_FREE_READS` and
# one more read per `MIN_BODY_PIECE_BYTES` dropped (see `connection`).
FREE_READS = 32
HEAD_FREE_READS = 4
MIN_PIECE_BYTES = 4096
MIN_BODY_PIECE_BYTES = 512


def framing_too_large(wire: int, data: int) -> bool:
    """Whether a body that took `wire` bytes to send `data` bytes of data carries more than
    its data may need besides: a chunked body's framing (each chunk's size line, with any
    extensions) and its trailer fields.

    A 16th of the data covers the framing of chunks of the smallest average size admitted
    (`MIN_BODY_PIECE_BYTES`: 7 bytes of framing for each 512 of data), and a head's worth
    (`MAX_HEAD_BYTES`) covers trailer fields and the framing of the first reads. Unbounded,
    one trailer field of 120 MiB cost a worker 13 s of CPU (httptools joins a field's pieces
    one read at a time, quadratically) and many small ones 1.8 GB, all within the body
    timeout: neither counted toward the head's bound or the body's."""
    return wire - data > MAX_HEAD_BYTES + data // 16


def head_bytes(target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> int:
    """About the size of a request head a parser has read whole, from what it made of it:
    its target, its headers, and the punctuation of its request line and of each header.
    For a head that was not measured as it arrived (see `connection`)."""
    return len(target) + 16 + sum(len(name) + len(value) + 4 for name, value in headers)


def _answer(status: bytes, error: bytes) -> bytes:
    """A whole HTTP answer that closes the connection, its body `{"error": ...}`."""
    body = b'{"error":"' + error + b'"}'
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\ncache-control: "
        b"no-store\r\ncontent-length: " + str(len(body)).encode("ascii") + b"\r\n"
        b"connection: close\r\n\r\n" + body
    )


HEAD_TOO_LARGE = _answer(b"431 Request Header Fields Too Large", b"Request headers too large")
HEAD_IN_CRUMBS = _answer(b"400 Bad Request", b"Request headers sent in too many pieces")
BODY_IN_CRUMBS = _answer(b"400 Bad Request", b"Request body sent in too many pieces")
BODY_TOO_LARGE = _answer(b"413 Content Too Large", b"Request body too large")
TIMED_OUT = _answer(b"408 Request Timeout", b"Request timeout")
TOO_MANY = _answer(b"503 Service Unavailable", b"Too many connections")


@functools.cache
def connection_bounds() -> ConnectionBounds:
    """This process's bounds, read from its environment once."""
    return ConnectionBounds.from_environ()


class ConnectionTable:
    """The connections of one server (one worker) that count toward its bound, oldest first.

    Only connections come and go here, never requests: a request costs the table nothing,
    and making room costs a look at the oldest connections until an idle one turns up.
    """

    __slots__ = ("bound", "connections", "refusal_room", "refusing")

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.connections: OrderedDict[Bounded, None] = OrderedDict()
        # Connections refused for want of room, lingering so that the client reads the 503:
        # they hold descriptors too, so only so many linger, and the rest are closed at once.
        self.refusal_room = bound // 16 + 1
        self.refusing = 0

    def refuse_for_room(
        self, transport: asyncio.Transport, refuse: Callable[[bytes], None]
    ) -> bool:
        """Refuse a new connection for want of room (`503`): with `refuse`, which lingers,
        while few others refused so do, else closed as soon as the answer is written, since
        each one lingering holds a descriptor the bound does not count. Whether it lingers,
        counted in `refusing` until it closes."""
        if self.refusing < self.refusal_room:
            self.refusing += 1
            refuse(TOO_MANY)
            return True
        transport.write(TOO_MANY)
        transport.close()
        return False

    def lingering(self, connection: Bounded) -> None:
        """`connection` was refused and lingers until it closes: it still holds a descriptor
        and counts, but it is the first to go when room is needed."""
        if connection in self.connections:
            self.connections.move_to_end(connection, last=False)

    def make_room(self) -> bool:
        """Close the oldest connection with no request in progress; whether there was one.

        A busy connection looked at moves to the back, so the next look starts past it:
        room is made in time amortised constant, however many connections are busy."""
        connections = self.connections
        for _ in range(len(connections)):
            oldest = next(iter(connections))
            if oldest.idle:
                oldest.uncount()
                oldest.transport.close()
                return True
            connections.move_to_end(oldest)
        return False


_TABLES: weakref.WeakKeyDictionary[ServerState, ConnectionTable] = weakref.WeakKeyDictionary()


def table_for(server_state: ServerState, bounds: ConnectionBounds) -> ConnectionTable:
    table = _TABLES.get(server_state)
    if table is None:
        table = _TABLES[server_state] = ConnectionTable(bounds.connection_bound())
    return table
