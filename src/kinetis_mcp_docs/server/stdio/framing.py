"""Newline-delimited frames over file descriptors, with a hard payload cap.

Reads are bounded: however long a line is, no more than the cap plus one read chunk is
ever held in memory. Writes are whole: a frame is written completely or the process
cannot go on (the caller decides what that means), and a peer that stops reading is
noticed after `WRITE_STALL_SECONDS` without progress rather than never.
"""

from __future__ import annotations

import os
import select
from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

from ..protocol.jsonrpc import MAX_MESSAGE_BYTES

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_PAYLOAD_BYTES = MAX_MESSAGE_BYTES
READ_CHUNK_BYTES = 64 * 1024
WRITE_STALL_SECONDS = 10.0
"""How long a frame write may go without the peer taking a single byte."""
# What one write may carry once the descriptor polls writable without blocking: a pipe
# with room takes PIPE_BUF bytes whole, a socket far more.
_WRITE_PIECE_BYTES = getattr(select, "PIPE_BUF", 512)


class Oversized:
    """Stands in for a frame whose payload passed the cap; its bytes were discarded."""

    __slots__ = ()


OVERSIZED = Oversized()


def read_frames(
    fd: int,
    *,
    limit: int = MAX_PAYLOAD_BYTES,
    chunk_size: int = READ_CHUNK_BYTES,
    wakeup: int | None = None,
) -> Iterator[bytes | Oversized]:
    """Yield each line's payload (its trailing `\\r`s and `\\n` removed) until end of input.

    A line whose payload is longer than `limit` is skipped to its end without being
    buffered and reported once as `OVERSIZED`. A final line without a newline still counts.
    The same bytes give the same frames however the reads split them. With `wakeup` (a
    signal wakeup descriptor, see `signal_wakeup`), each read waits on it beside `fd`, so
    a signal's Python handler runs even when the signal came just before the read.
    """
    line = _Line(limit)
    while True:
        if wakeup is not None:
            _await_input(fd, wakeup)
        chunk = os.read(fd, chunk_size)
        if not chunk:
            break
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                break
            line.extend(chunk, start, newline)
            yield line.take()
            start = newline + 1
        line.extend(chunk, start, len(chunk))
    if line.started:
        yield line.take()


def _await_input(fd: int, wakeup: int) -> None:
    """Return once `fd` can be read; a byte on `wakeup` means a signal came, and its
    handler (Ctrl-C's `KeyboardInterrupt`) runs as soon as this loop goes round."""
    while True:
        ready = select.select([fd, wakeup], [], [])[0]
        if wakeup in ready:
            try:  # noqa: SIM105 - `contextlib` is not loaded on a client start
                os.read(wakeup, 512)
            except BlockingIOError:
                pass
        if fd in ready:
            return


class _Line:
    """The line being read: at most `limit + 1` bytes of it are ever held.

    Trailing `\\r`s are stripped from a payload, however many there are, so a run of them
    past the limit is not kept: if the line ends after them they are stripped anyway, and
    if anything else follows, the payload is over the limit whatever their number.
    """

    __slots__ = ("_buffer", "_limit", "_oversized", "started")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._oversized = False
        self.started = False

    def extend(self, chunk: bytes, start: int, end: int) -> None:
        if start == end:
            return
        self.started = True
        if self._oversized:
            return
        piece = chunk[start:end]
        content = len(piece.rstrip(b"\r"))  # up to its last byte that is not `\r`
        if content and len(self._buffer) + content > self._limit:
            self._oversized = True  # content reaches past the limit, whatever follows
            self._buffer.clear()
            return
        self._buffer += piece
        del self._buffer[self._limit + 1 :]  # only `\r`s lie past the limit

    def take(self) -> bytes | Oversized:
        """The line's payload (or `OVERSIZED`), and a fresh line to read into."""
        payload: bytes | Oversized = (
            OVERSIZED if self._oversized else bytes(self._buffer).rstrip(b"\r")
        )
        self._buffer.clear()
        self._oversized = self.started = False
        return payload


class FrameWriteError(Exception):
    """The peer stopped taking frames: a write failed or made no progress."""


class FrameWriter:
    """Writes each frame whole, one at a time, to a file descriptor.

    A blocking write to a peer that stopped reading would never return, so each piece is
    written only once `poll` says the descriptor takes it, in pieces small enough to be
    taken whole; `stall_timeout` seconds without that is `FrameWriteError`. The descriptor
    stays blocking: `O_NONBLOCK` would change an open file description the client, or a
    terminal's shell, may share.
    """

    def __init__(self, fd: int, *, stall_timeout: float = WRITE_STALL_SECONDS) -> None:
        self._fd = fd
        self._lock = allocate_lock()
        self._stall_timeout = stall_timeout
        self._writable = select.poll()
        self._writable.register(fd, select.POLLOUT)

    def write(self, payload: bytes) -> None:
        """Write `payload` and its newline, whole, before any other frame."""
        # The newline goes with the payload's last piece rather than onto a copy of the
        # whole payload: answers wait here for the lock, up to 32 at once, and a copy
        # would double each one's bytes while it waits (a read of a 4 MiB page of control
        # characters is a 55 MB answer). A frame that fits in a piece is still one write.
        body = memoryview(payload)
        split = max(0, len(body) - _WRITE_PIECE_BYTES + 1)
        tail = bytes(body[split:]) + b"\n"  # at most one piece
        with self._lock:
            self._write_whole(body[:split])
            self._write_whole(memoryview(tail))

    def _write_whole(self, data: memoryview) -> None:
        """Write all of `data`, a piece at a time, each once the descriptor takes it."""
        while data:
            if not self._writable.poll(self._stall_timeout * 1000):
                raise FrameWriteError(
                    f"cannot write to stdout: no progress for {self._stall_timeout:g} s"
                )
            try:
                written = os.write(self._fd, data[:_WRITE_PIECE_BYTES])
            except OSError as error:
                raise FrameWriteError(f"cannot write to stdout: {error.strerror}") from error
            data = data[written:]
