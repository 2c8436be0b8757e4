"""Newline-delimited frames over file descriptors, with a hard payload cap.

Reads are bounded: however long a line is, no more than the cap plus one read chunk is
ever held in memory. Writes are whole: a frame is written completely or the process
cannot go on (the caller decides what that means).
"""

from __future__ import annotations

import os
from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_PAYLOAD_BYTES = 2 * 1024 * 1024
READ_CHUNK_BYTES = 64 * 1024


class Oversized:
    """Stands in for a frame whose payload passed the cap; its bytes were discarded."""

    __slots__ = ()


OVERSIZED = Oversized()


def read_frames(
    fd: int, *, limit: int = MAX_PAYLOAD_BYTES, chunk_size: int = READ_CHUNK_BYTES
) -> Iterator[bytes | Oversized]:
    """Yield each line's payload (its trailing `\\r`/`\\n` removed) until end of input.

    A line longer than `limit` is skipped to its end without being buffered and
    reported once as `OVERSIZED`. A final line without a newline still counts.
    """
    buffer = bytearray()
    discarding = False
    while True:
        chunk = os.read(fd, chunk_size)
        if not chunk:
            break
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                break
            if discarding:
                discarding = False
                yield OVERSIZED
            else:
                buffer += chunk[start:newline]
                yield from _payload(buffer, limit)
                buffer.clear()
            start = newline + 1
        if not discarding:
            buffer += chunk[start:]
            # One `\r` may follow a payload of exactly `limit` bytes.
            if len(buffer) > limit + 1:
                buffer.clear()
                discarding = True
    if discarding:
        yield OVERSIZED
    elif buffer:
        yield from _payload(buffer, limit)


def _payload(line: bytearray, limit: int) -> Iterator[bytes | Oversized]:
    payload = bytes(line).rstrip(b"\r")
    yield OVERSIZED if len(payload) > limit else payload


class FrameWriteError(Exception):
    """The peer stopped taking frames: a write failed or made no progress."""


class FrameWriter:
    """Writes each frame whole, one at a time, to a file descriptor."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = allocate_lock()

    def write(self, payload: bytes) -> None:
        frame = memoryview(payload + b"\n")
        with self._lock:
            while frame:
                try:
                    written = os.write(self._fd, frame)
                except OSError as error:
                    raise FrameWriteError(f"cannot write to stdout: {error.strerror}") from error
                if written <= 0:
                    raise FrameWriteError("cannot write to stdout: no progress")
                frame = frame[written:]
