"""One HTTP/1.1 connection under bounds: uvicorn's httptools protocol, with the limits it lacks.

uvicorn (0.54) with httptools bounds neither the size of a request's headers nor the time
a client may take to send them or its body, nor the number of connections: a 32 MiB header
was answered after 2 s of CPU (httptools joins a header's pieces one read at a time,
quadratically), a connection that never finished its headers was held forever, and one
client with 1,100 idle sockets made a worker under a 1,024-descriptor limit unreachable.
This subclass adds, per `bounds`:

- **Head size.** A request head arriving in pieces is kept here until its blank line has
  arrived, then handed to the parser whole, so the parser sees each head in one piece and
  its cost is linear. One of more than `MAX_HEAD_BYTES` is `431` at once. The common
  case, a head that arrives whole in one read, costs one search of that read. A head the
  parser meets that was not measured so (pipelined behind another request in the same
  read, or begun at the end of an earlier one) is measured from what the parser made of
  it, once its headers are complete; one pipelined behind a request still being answered
  is refused after that answer, in order.
- **Reads.** A head or a body sent in crumbs (more than `HEAD_FREE_READS` reads averaging
  under `MIN_PIECE_BYTES` for a head, more than `FREE_READS` averaging under
  `MIN_BODY_PIECE_BYTES` for a body) is `400`: each read costs the same, whatever it
  holds, and most when it comes on its own (the event loop wakes for it). A chunked
  body's chunks count as its reads do, since each costs the parser a call into Python:
  2 MiB in chunks of one byte, all in a few reads, cost 0.33 s where the same body sent
  whole cost 3 ms.
- **A chunked body's framing.** What a chunked body takes on the wire beyond its data
  (chunk sizes, extensions, trailer fields) is bounded by `framing_too_large`, measured
  after each read is parsed: past it the request is `413`. Trailer fields are dropped
  rather than added to the request's headers (see `on_header`).
- **A body the answer did not wait for.** An application may answer before a request's
  body is all in (`401`, `413`, `415`, `429`, `405`, `501`, `-32022`): the connection then
  reads at most `LINGER_BYTES` more of it, and closes if the body has not ended by then,
  rather than parsing whatever the client sends for as long as the body timeout allows (a
  client streaming one-byte chunks made that a worker's whole core for 30 s). A body that does
  end within it leaves the connection open for the client's next request.
- **Timeouts.** Idle (waiting for a request's first byte, on a new connection too: uvicorn
  arms its keep-alive timer only after a response), header (from the first byte to the
  blank line) and body (from the blank line to the body's end). A head or body cut short
  is answered `408`. No timer is armed for a request that arrives whole in one read.
- **Connections.** At most `connection_bound()` per worker. A new connection beyond it
  closes the oldest idle connection (no request in progress: a keep-alive connection, or
  one still sending its head); if none is idle, the new one is refused with `503`. An
  attacker's idle sockets are older than a client that connects now, so the client is
  served while they are shed, and the descriptors never run out. Only connections are
  tracked, never requests, so the bound adds nothing to a request's cost. A refused
  connection counts while it lingers, and is shed first; of those refused `503`, which
  never counted, only `refusal_room` linger at once (see `ConnectionTable.refuse_for_room`).

One more thing than bounds: a response's head and its body go out in one write (one
system call, one TCP segment), where uvicorn writes each as it comes; see `_OneWrite`.
And one request is read as HTTP/1.1 where llhttp would not: one asking to upgrade the
connection (`Connection: Upgrade` with an `Upgrade` header, which `curl --http2` sends).
llhttp takes its body for the new protocol's first bytes, so the route read an empty body
and answered `-32700`, and dropped whatever followed in the read. The route speaks no other
protocol, and a server may ignore an Upgrade (RFC 9110, section 7.8), as uvicorn's h11
protocol does. llhttp says so when a head is complete (`should_upgrade`), whatever the
case the client wrote the header in and wherever the head stands in a read; such a
request is then read again, its head without `Upgrade` (a hop-by-hop header, for this
server alone, which ignores it) followed by the rest of the read; see `_read_again`. A
request that does not ask costs one call of `should_upgrade`.

Every refusal here answers in a small JSON body, then closes as servers close after an
error: the writing side first, reading and dropping what the client still sends for up to
`LINGER_SECONDS` (or `LINGER_BYTES`, or as many reads as a body may take), so that the
client reads the answer instead of a reset.

Run it with
`uvicorn --http kinetis_mcp_docs.server.http.uvicorn.connection:BoundedHttpToolsProtocol`;
`kinetis-docs serve --http` does.
"""

from __future__ import annotations

from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .bounds import MAX_HEAD_BYTES
from .connections import (
    BODY_IN_CRUMBS,
    BODY_TOO_LARGE,
    FREE_READS,
    HEAD_FREE_READS,
    HEAD_IN_CRUMBS,
    HEAD_TOO_LARGE,
    LINGER_BYTES,
    LINGER_SECONDS,
    MIN_BODY_PIECE_BYTES,
    MIN_PIECE_BYTES,
    TIMED_OUT,
    connection_bounds,
    framing_too_large,
    head_bytes,
    table_for,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio

    from uvicorn.config import Config
    from uvicorn.server import ServerState

# Where a connection is: waiting for (or reading) a request's head, reading its body, or
# closing after a refusal (lingering).
_HEAD = 0
_BODY = 1
_LINGER = 2


def _head_end(data: bytes | bytearray, start: int) -> int:
    """Where the head in `data` ends (just past its blank line), searching from `start`;
    -1 when it has not ended. A blank line is LF CR LF or LF LF."""
    crlf = data.find(b"\n\r\n", start)
    lf = data.find(b"\n\n", start, crlf + 2 if crlf >= 0 else len(data))
    if lf >= 0:
        return lf + 2
    return crlf + 3 if crlf >= 0 else -1


# uvicorn's own steps, called as functions: `super()` on every request costs a lookup that
# the common path of a request does three times.
_on_header = HttpToolsProtocol.on_header
_headers_complete = HttpToolsProtocol.on_headers_complete
_message_complete = HttpToolsProtocol.on_message_complete
_on_body = HttpToolsProtocol.on_body
_response_complete = HttpToolsProtocol.on_response_complete
_send_400 = HttpToolsProtocol.send_400_response


_INVALID_REQUEST = "Invalid HTTP request received."  # uvicorn's words for a parse error


def _new_parser(protocol: HttpToolsProtocol) -> httptools.HttpRequestParser:
    """A parser for `protocol`, as uvicorn makes one."""
    parser = httptools.HttpRequestParser(protocol)
    parser.set_dangerous_leniencies(lenient_data_after_close=True)
    return parser


def _without_upgrade(
    method: bytes, target: bytes, version: str, headers: list[tuple[bytes, bytes]]
) -> bytes:
    """The head of a request as llhttp read it (`headers` by lowercase name), without its
    `Upgrade` header: with `Connection: Upgrade` alone, llhttp reads it as HTTP/1.1. The
    values are what llhttp found valid, so they frame the body as the original did."""
    lines = [method, b" ", target, b" HTTP/", version.encode("ascii"), b"\r\n"]
    for name, value in headers:
        if name != b"upgrade":
            lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


class _Refused(Exception):
    """Raised in a parser callback to stop the parser mid-read: httptools stops and raises
    its own error, which uvicorn answers through `send_400_response`, where the refusal
    the callback chose is sent instead."""


# A body this large is written on its own rather than copied behind the head.
_JOINED_BODY_BYTES = 64 * 1024


class _OneWrite:
    """One response's view of its connection's transport: the head uvicorn writes first is
    held until the body's first part comes, and both are written at once.

    uvicorn writes a response's head when the application starts the response and its body
    when the application sends it, each a system call and a TCP segment of its own; for
    this route's answers (a few hundred bytes, sent right after the head) the second write
    cost a tenth of a request. Only a response that is sure to write a body after its head
    is given one: not an answer to `HEAD`, nor to a request expecting `100 Continue`
    (whose interim answer must not wait).
    """

    __slots__ = ("_head", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head: bytes | None = None  # None: nothing written yet; b"": passed through

    def write(self, data: bytes) -> None:
        head = self._head
        if head is None:
            self._head = data
        elif head:
            self._head = b""
            if len(data) > _JOINED_BODY_BYTES:
                self._transport.write(head)
                self._transport.write(data)
            else:
                self._transport.write(head + data)
        else:
            self._transport.write(data)

    def close(self) -> None:
        if self._head:
            self._transport.write(self._head)
            self._head = b""
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a bounded head, timeouts and a connection bound."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        bounds = connection_bounds()
        self._bounds = bounds
        self._table = table_for(server_state, bounds)
        if bounds.idle_timeout is not None:
            # Seconds, as uvicorn hands them to call_later; its annotation says int.
            self.timeout_keep_alive = bounds.idle_timeout  # type: ignore[assignment]
        self._phase = _HEAD
        # Head bytes not yet given to the parser, after `_fed` bytes it already has (the
        # end of an earlier read, when a pipelined head began there).
        self._pending = bytearray()
        self._fed = 0
        self._reads = 0  # the reads the pending head came in, or the body so far
        self._body_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None  # header, body or linger
        self._discarded = 0  # bytes dropped while lingering
        # The body's pieces as the parser hands them over (a read's worth, or a chunk) and
        # their bytes; the answer a parser callback stopped the parser to send.
        self._pieces = 0
        self._decoded = 0
        # The body's data the parser had handed over when the body's reads began to be
        # counted (`_body_bytes`): the read that ended the head is counted in neither.
        self._data_before = 0
        self._refusal: bytes | None = None
        # Whether the next head the parser completes was measured whole before it was fed;
        # a refusal that waits for an earlier request's answer.
        self._measured = False
        self._after_answer: bytes | None = None
        # What the connection still reads of a body its answer did not wait for.
        self._unread: int | None = None
        # The head of a request asking to upgrade, without its `Upgrade`, to be read again.
        self._again: bytes | None = None
        self._refused_for_room = False  # counted in the table's `refusing` until it closes

    # Connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        table = self._table
        if len(table.connections) >= table.bound and not table.make_room():
            self._refused_for_room = table.refuse_for_room(self.transport, self._refuse)
            return
        table.connections[self] = None
        # uvicorn arms its keep-alive timer only after a response: a new connection that
        # sent nothing was held forever.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    @property
    def idle(self) -> bool:
        """No request in progress: none yet, the last one answered, or refused (lingering,
        unless its refusal waits for an earlier request's answer)."""
        if self._phase == _LINGER:
            return self._after_answer is None
        return self.cycle is None or self.cycle.response_complete

    def uncount(self) -> None:
        """This connection no longer counts toward the bound (it is closing)."""
        self._table.connections.pop(self, None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self.uncount()
        if self._refused_for_room:
            self._table.refusing -= 1
        super().connection_lost(exc)

    # Reading

    def data_received(self, data: bytes) -> None:
        phase = self._phase
        if phase == _HEAD and not self._pending:
            # The common case, a whole head in one read, costs a search of it and no more.
            crlf = data.find(b"\n\r\n")
            lf = data.find(b"\n\n", 0, crlf + 2 if crlf >= 0 else len(data))
            end = lf + 2 if lf >= 0 else (crlf + 3 if crlf >= 0 else -1)
            if 0 <= end <= MAX_HEAD_BYTES:
                self._measured = True
                self._parse(data)
                cycle = self.cycle
                if self._phase == _BODY or cycle is None or self.scope is not cycle.scope:
                    self._fed_in_part(data)
            else:
                self._head_begins(data, end)
        elif phase == _BODY:
            self._body_continues(data)
        elif phase == _HEAD:
            self._head_continues(data)
        else:  # lingering
            self._reads += 1
            self._discarded += len(data)
            # Fewer free reads than a request has: what a refused client still sends in
            # crumbs costs as much to drop as to read.
            too_many = self._reads > HEAD_FREE_READS + self._discarded // MIN_BODY_PIECE_BYTES
            if self._discarded > LINGER_BYTES or too_many:
                self.transport.close()

    def _body_continues(self, data: bytes) -> None:
        if self._unread is not None:
            self._unread -= len(data)
            if self._unread < 0:
                self.transport.close()
                return
        self._reads += 1
        self._body_bytes += len(data)
        if self._reads > FREE_READS + self._body_bytes // MIN_BODY_PIECE_BYTES:
            self._refuse_body(BODY_IN_CRUMBS)
            return
        earlier = self.cycle
        self._parse(data)
        cycle = self.cycle
        if self._phase == _BODY:
            if cycle is not earlier:
                self._fed_in_part(data)  # the body ended, and the next request's body began
            elif framing_too_large(self._body_bytes, self._decoded - self._data_before):
                # Measured once parsed: a read may begin a chunk whose data it also holds.
                self._refuse_body(BODY_TOO_LARGE)
        elif self._phase == _HEAD:
            if cycle is None or self.scope is not cycle.scope:
                self._fed_in_part(data)  # the body ended, and a pipelined head began
            elif cycle.response_complete:
                self._idle_again()  # the body of a request answered before it ended

    def _parse(self, data: bytes) -> None:
        """uvicorn's `data_received`: `data` to the parser, a parse error answered `400`;
        but a request asking to upgrade is read as HTTP/1.1 (see `_read_again`)."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._parse_error()
        except httptools.HttpParserUpgrade as upgrade:
            self._read_again(data, upgrade.args[0])

    def _read_again(self, data: bytes | memoryview, end: int) -> None:
        """llhttp stopped at `end` in `data`, the end of a head asking to upgrade, having
        skipped its body (see `on_headers_complete`): the request is read again, its head
        without `Upgrade`, then the rest of `data`; and so for each such head in it."""
        while True:
            again, self._again = self._again, None
            if again is None:
                self._unsupported_upgrade_warning()  # CONNECT, which uvicorn answers itself
                return
            # A parser of its own: llhttp, having ended the request, would drop what
            # follows one that does not keep the connection (HTTP/1.0).
            self.parser = _new_parser(self)
            self._measured = True  # it was, before it was put off
            rest = memoryview(data)[end:]  # not copied: a read may hold thousands of heads
            try:
                self.parser.feed_data(again)
                self.parser.feed_data(rest)
            except httptools.HttpParserError:
                self._parse_error()
            except httptools.HttpParserUpgrade as upgrade:
                data, end = rest, upgrade.args[0]  # `again` has no Upgrade: `rest` stopped
                continue
            return

    def _parse_error(self) -> None:
        self._again = None
        self.logger.warning(_INVALID_REQUEST)
        self.send_400_response(_INVALID_REQUEST)

    def _idle_again(self) -> None:
        """Arm the idle timeout, as uvicorn does once a request is answered, for one answered
        before its body ended: each read of the rest disarmed it (uvicorn's `data_received`
        does), and the connection was held for ever once the body ended."""
        if self.timeout_keep_alive_task is None and not self.transport.is_closing():
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def _head_begins(self, data: bytes, end: int) -> None:
        """The first read of a head that has not ended in it (or is too large)."""
        if end >= 0 or len(data) > MAX_HEAD_BYTES:
            self._refuse(HEAD_TOO_LARGE)
            return
        self._unset_keepalive_if_required()
        self._pending += data
        self._reads = 1
        self._deadline = self.loop.call_later(self._bounds.header_timeout, self._head_timed_out)

    def _head_continues(self, data: bytes) -> None:
        pending = self._pending
        start = max(0, len(pending) - 2)  # a blank line may begin in the last read
        pending += data
        self._reads += 1
        end = _head_end(pending, start)
        size = len(pending) if end < 0 else end
        if size > MAX_HEAD_BYTES:
            self._refuse(HEAD_TOO_LARGE)
        elif self._reads > HEAD_FREE_READS + size // MIN_PIECE_BYTES:
            self._refuse(HEAD_IN_CRUMBS)
        elif end >= 0:
            whole = bytes(pending[self._fed :])
            self._measured = self._fed == 0  # else part of it went to the parser before
            self._pending = bytearray()
            self._fed = self._reads = 0
            self._parse(whole)
            cycle = self.cycle
            if self._phase == _BODY or cycle is None or self.scope is not cycle.scope:
                self._fed_in_part(whole)

    def _fed_in_part(self, data: bytes) -> None:
        """After a read that left a request unfinished: its body still to come, or a head
        begun (pipelined behind another request) and not ended. uvicorn makes a request's
        scope when it begins and its cycle when its head ends."""
        if self.transport.is_closing():
            return
        if self._phase == _BODY:
            self._reads = self._body_bytes = 0
            self._data_before = self._decoded
            self._deadline = self.loop.call_later(self._bounds.body_timeout, self._body_timed_out)
        elif self.scope is not None:
            # The rest of the head is kept until it is whole, as any head is, its blank
            # line looked for from the end of this read.
            self._pending = bytearray(data[-2:])
            self._fed = len(self._pending)
            self._reads = 1
            self._deadline = self.loop.call_later(self._bounds.header_timeout, self._head_timed_out)

    # Parser callbacks: where the connection is.

    def on_header(self, name: bytes, value: bytes) -> None:
        # Once the head is complete, a field is a chunked body's trailer field: dropped, as
        # a recipient may (RFC 9112, section 7.1.2), rather than added to the request's
        # headers after the application has read them, where a header a proxy in front
        # set or removed could come back.
        if self._phase == _HEAD:
            _on_header(self, name, value)

    def on_headers_complete(self) -> None:
        if self._measured:
            self._measured = False
        elif head_bytes(self.url, self.headers) > MAX_HEAD_BYTES:
            self._refusal = HEAD_TOO_LARGE
            raise _Refused
        if self.parser.should_upgrade() and self.parser.get_method() != b"CONNECT":
            # llhttp will skip the body and stop here: the request is read again as HTTP/1.1,
            # from a head without `Upgrade` (see `_parse`), and nothing is made of it now.
            self._again = _without_upgrade(
                self.parser.get_method(), self.url, self.parser.get_http_version(), self.headers
            )
            return
        self._phase = _BODY
        self._pieces = self._decoded = 0
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        earlier = self.cycle
        _headers_complete(self)
        cycle = self.cycle
        # The cycle is made here and its task started, but not yet run: its transport can
        # still be swapped for one that writes its answer at once.
        if cycle is not earlier and not self.expect_100_continue and self.scope["method"] != "HEAD":
            cycle.transport = _OneWrite(self.transport)  # type: ignore[assignment]

    def on_body(self, body: bytes) -> None:
        self._pieces += 1
        self._decoded += len(body)
        if self._pieces > FREE_READS + self._decoded // MIN_BODY_PIECE_BYTES:
            self._refusal = BODY_IN_CRUMBS
            raise _Refused
        _on_body(self, body)

    def on_message_complete(self) -> None:
        if self._again is not None:
            return  # the end llhttp gives a request asking to upgrade: it is read again
        self._phase = _HEAD
        self._unread = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        _message_complete(self)

    def on_response_complete(self) -> None:
        _response_complete(self)  # which starts the next pipelined request, if any
        cycle = self.cycle
        answered = cycle is None or cycle.response_complete  # the latest request's answer
        refusal = self._after_answer
        if refusal is not None:
            if answered and not self.transport.is_closing():
                self._after_answer = None
                self._refuse(refusal)
            return
        # Answered before its body was all in: only so much more of it is read.
        if self._phase == _BODY and answered:
            self._unread = LINGER_BYTES

    def send_400_response(self, msg: str) -> None:
        refusal, self._refusal = self._refusal, None
        if refusal is None:
            _send_400(self, msg)
        elif refusal is BODY_IN_CRUMBS:
            self._refuse_body(refusal)
        else:
            self._refuse_in_turn(refusal)

    def _refuse_in_turn(self, answer: bytes) -> None:
        """Refuse a request pipelined behind others once their answers have gone out."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self._refuse(answer)
            return
        self._after_answer = answer
        self._phase = _LINGER  # nothing more is parsed
        self.flow.pause_reading()

    # Deadlines and refusals

    def _head_timed_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self._refuse(TIMED_OUT)

    def _body_timed_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self._refuse_body(TIMED_OUT)

    def _refuse_body(self, answer: bytes) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_started:
            self.transport.close()  # answered already (without reading it all): just close
            return
        # The application waits for the rest of the body: it is told the client left (and
        # lets go of what it buffered), and whatever it answers now is dropped.
        cycle.disconnected = True
        cycle.message_event.set()
        self._refuse(answer)

    def _refuse(self, answer: bytes) -> None:
        self.transport.write(answer)
        self._linger()

    def _linger(self) -> None:
        """Close after an answer: the writing side now, the rest once the client has had
        time to read the answer, dropping what it still sends meanwhile."""
        if self._deadline is not None:
            self._deadline.cancel()
        self._unset_keepalive_if_required()
        # Still counted while it lingers: a flood of refused connections once held
        # descriptors beyond the bound, each for `LINGER_SECONDS`.
        self._table.lingering(self)
        self._pending = bytearray()
        self._phase = _LINGER
        self._discarded = self._reads = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.flow.resume_reading()
        self._deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)
