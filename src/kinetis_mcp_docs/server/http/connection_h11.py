"""One HTTP/1.1 connection under bounds, read by h11: the twin of `connection` where httptools
is missing (it has no wheel for PyPy, where uvicorn falls back to h11).

The same bounds as `connection` (a chunked body's chunks counted as its reads are, its
framing bounded by `framing_too_large`, and at most `LINGER_BYTES` more read of a body the
answer did not wait for; uvicorn drops h11's trailer fields itself). h11 bounds a request's
head itself while it has not ended, linearly (it looks for the blank line from where it
last looked); a head that arrived whole is measured here. Either way one over
`MAX_HEAD_BYTES` is the route's `431`. Where the connection is, h11 says (`their_state`),
looked at after each read; a request that arrives whole in one read arms no timer.

Run it with `uvicorn --http kinetis_mcp_docs.server.http.connection_h11:BoundedH11Protocol`;
`kinetis-docs serve --http` does where httptools cannot be imported.
"""

from __future__ import annotations

from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .bounds import MAX_HEAD_BYTES
from .connections import (
    BODY_IN_CRUMBS,
    BODY_TOO_LARGE,
    FREE_READS,
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

# What the one deadline of a connection is for.
_NONE = 0
_HEAD = 1
_BODY = 2


class _CountedConnection(h11.Connection):
    """h11's connection, counting the pieces a request's body comes in (a read's worth, or
    a chunk: each costs h11 a parse in Python) and stopping at too many, and measuring each
    head it reads whole (h11 bounds only a head that has not ended yet).

    Past `FREE_READS` pieces averaging under `MIN_BODY_PIECE_BYTES`, or past a head of
    `MAX_HEAD_BYTES`, the next event is a protocol error, which uvicorn answers through
    `send_400_response`: `refusal` is then the route's answer to send instead.
    """

    def __init__(self) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.pieces = 0
        self.decoded = 0
        self.requests = 0  # heads read: a request's number
        self.refusal: bytes | None = None

    def next_event(self) -> Any:
        state = self.their_state
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as error:
            # h11's own bound on an event not yet ended: a head, or in a body a chunk's
            # size line or its trailer fields.
            if error.error_status_hint == 431:
                self.refusal = BODY_TOO_LARGE if state is h11.SEND_BODY else HEAD_TOO_LARGE
            raise
        if type(event) is h11.Data:
            self.pieces += 1
            self.decoded += len(event.data)
            if self.pieces > FREE_READS + self.decoded // MIN_BODY_PIECE_BYTES:
                self.refusal = BODY_IN_CRUMBS
                raise h11.RemoteProtocolError("Request body sent in too many pieces")
        elif type(event) is h11.Request:
            self.requests += 1
            self.pieces = self.decoded = 0
            if head_bytes(event.target, event.headers) > MAX_HEAD_BYTES:
                self.refusal = HEAD_TOO_LARGE
                raise h11.RemoteProtocolError("Request headers too large")
        return event


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with a bounded head, timeouts and a connection bound."""

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
        self.conn = self._counted = _CountedConnection()
        self._deadline: asyncio.TimerHandle | None = None
        self._kind = _NONE
        self._reads = 0
        self._bytes = 0
        self._lingering = False
        self._unread: int | None = None  # what is still read of a body answered early
        # The request the deadline is for, and its data when its reads began to be counted.
        self._request = 0
        self._data_before = 0
        self._refused_for_room = False  # counted in the table's `refusing` until it closes

    def _unsupported_upgrade_warning(self) -> None:
        # h11 reads a request asking to upgrade the connection as HTTP/1.1, as a server may
        # (RFC 9110, section 7.8), and the route answers it so: uvicorn's two warnings, one
        # advising a WebSocket library the route turns off on purpose, would mislead.
        return

    # Connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        table = self._table
        if len(table.connections) >= table.bound and not table.make_room():
            self._refused_for_room = table.refuse_for_room(self.transport, self._refuse)
            return
        table.connections[self] = None
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    @property
    def idle(self) -> bool:
        """No request in progress: none yet, the last one answered, or refused."""
        return self._lingering or self.cycle is None or self.cycle.response_complete

    def uncount(self) -> None:
        """This connection no longer counts toward the bound (it is closing)."""
        self._table.connections.pop(self, None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._arm(_NONE)
        self.uncount()
        if self._refused_for_room:
            self._table.refusing -= 1
        super().connection_lost(exc)

    # Reading

    def data_received(self, data: bytes) -> None:
        if not self._admitted(data):
            return
        super().data_received(data)
        if not self.transport.is_closing():
            self._follow(len(data))

    def _follow(self, read: int) -> None:
        """Arm the deadline for where the connection is, after a read of `read` bytes was
        parsed, or a pipelined request begun from what an earlier read left."""
        state = self.conn.their_state
        counted = self._counted
        if state is h11.SEND_BODY:
            if self._kind != _BODY or self._request != counted.requests:
                self._arm(_BODY)  # a new body: one pipelined may follow an earlier one's end
            elif framing_too_large(self._bytes, counted.decoded - self._data_before):
                self._refuse_body(BODY_TOO_LARGE)
        elif state is h11.IDLE and self.conn.trailing_data[0]:
            if self._kind != _HEAD:
                self._arm(_HEAD)
                self._bytes = read
        else:
            if self._kind != _NONE:
                self._arm(_NONE)
            cycle = self.cycle
            if state is h11.IDLE and cycle is not None and cycle.response_complete:
                self._idle_again()  # the body of a request answered before it ended

    def _idle_again(self) -> None:
        """Arm the idle timeout, as uvicorn does once a request is answered, for one answered
        before its body ended: each read of the rest disarmed it (uvicorn's `data_received`
        does), and the connection was held for ever once the body ended."""
        if self.timeout_keep_alive_task is None:
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def _admitted(self, data: bytes) -> bool:
        """Whether `data` is parsed: not when lingering, nor past a bound (refused then)."""
        if self._lingering:
            self._reads += 1
            self._bytes += len(data)
            if self._bytes > LINGER_BYTES or self._crumbs(MIN_BODY_PIECE_BYTES):
                self.transport.close()
            return False
        if self._unread is not None:
            self._unread -= len(data)
            if self._unread < 0:
                self.transport.close()
                return False
        if self._kind != _NONE:  # a head or a body under way: its reads are counted
            self._reads += 1
            self._bytes += len(data)
            if self._kind == _HEAD and self._crumbs(MIN_PIECE_BYTES):
                self._refuse(HEAD_IN_CRUMBS)
                return False
            if self._kind == _BODY and self._crumbs(MIN_BODY_PIECE_BYTES):
                self._refuse_body(BODY_IN_CRUMBS)
                return False
        return True

    def _crumbs(self, piece: int) -> bool:
        return self._reads > FREE_READS + self._bytes // piece

    # Deadlines and refusals

    def _arm(self, kind: int) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._kind = kind
        self._reads = self._bytes = 0
        self._unread = None
        self._request = self._counted.requests
        self._data_before = self._counted.decoded
        if kind == _HEAD:
            self._reads = 1
            self._deadline = self.loop.call_later(self._bounds.header_timeout, self._timed_out)
        elif kind == _BODY:
            self._deadline = self.loop.call_later(self._bounds.body_timeout, self._timed_out)

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._kind == _BODY:
            self._refuse_body(TIMED_OUT)
        else:
            self._refuse(TIMED_OUT)

    def on_response_complete(self) -> None:
        request = self._counted.requests
        super().on_response_complete()  # which reads a pipelined request h11 held back
        if self.transport.is_closing():
            return
        if self._counted.requests != request:
            # Read here, not in `data_received`: its deadline is armed here, or it had none
            # (a body never finished held the connection for ever).
            self._follow(len(self.conn.trailing_data[0]))
        elif self.conn.their_state is h11.SEND_BODY:
            # Answered before the body was all in: only so much more of it is read.
            self._unread = LINGER_BYTES

    def send_400_response(self, msg: str) -> None:
        conn = self.conn
        if not isinstance(conn, _CountedConnection) or conn.refusal is None:
            super().send_400_response(msg)
            return
        refusal, conn.refusal = conn.refusal, None
        if refusal is BODY_IN_CRUMBS or refusal is BODY_TOO_LARGE:
            self._refuse_body(refusal)
        else:
            self._refuse(refusal)

    def _refuse_body(self, answer: bytes) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_started:
            self.transport.close()  # answered already (without reading it all): just close
            return
        cycle.disconnected = True  # what the application answers now is dropped
        cycle.message_event.set()  # and it hears the client left
        self._refuse(answer)

    def _refuse(self, answer: bytes) -> None:
        """Answer, then close as `connection` does: the writing side now, the rest once
        the client has had time to read the answer."""
        self.transport.write(answer)
        self._arm(_NONE)
        self._unset_keepalive_if_required()
        self._table.lingering(self)  # still counted while it lingers, but shed first
        self._lingering = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.flow.resume_reading()
        self._deadline = self.loop.call_later(LINGER_SECONDS, self.transport.close)
