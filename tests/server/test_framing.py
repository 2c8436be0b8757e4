"""Frames in and out of file descriptors: the same bytes frame alike however they are read,
and a writer whose reader stopped gives up instead of hanging."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.stdio.framing import (
    OVERSIZED,
    FrameWriteError,
    FrameWriter,
    Oversized,
    read_frames,
)

pytestmark = pytest.mark.interpreter  # reads and writes raw descriptors

LIMIT = 8
# Payloads at and around the limit, with `\r` runs before, inside and after them.
STREAM = b"".join(
    [
        b"12345678\n",  # exactly the limit
        b"123456789\n",  # one over
        b"12345678\r\r\r\r\r\r\r\r\r\r\r\n",  # the limit, then more `\r`s than the limit
        b"1234567\r\r\r\r\r\r\rx\n",  # `\r`s that are content, once something follows
        b"\r\r\r\n",  # nothing but `\r`s: a blank line
        b"\n",
        b"12\r34\r\n",  # a `\r` inside a payload is content
        b"x" * 40 + b"\n",  # far over
        b"\r" * 30 + b"x\n",  # over, by content after a long run of `\r`s
        b"last\r\r",  # a final line without a newline
    ]
)


def expected_frames(data: bytes, limit: int) -> list[bytes | Oversized]:
    """The framing rule, stated plainly: split after each newline, strip trailing `\\r`s."""
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    payloads = [line.rstrip(b"\r") for line in lines]
    return [OVERSIZED if len(payload) > limit else payload for payload in payloads]


def frames_of(path: Path, chunk_size: int) -> list[bytes | Oversized]:
    # A regular file: every read returns exactly `chunk_size` bytes until the end.
    fd = os.open(path, os.O_RDONLY)
    try:
        return list(read_frames(fd, limit=LIMIT, chunk_size=chunk_size))
    finally:
        os.close(fd)


def test_the_same_bytes_give_the_same_frames_however_the_reads_split_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stream"
    path.write_bytes(STREAM)
    expected = expected_frames(STREAM, LIMIT)
    assert expected.count(OVERSIZED) == 4

    for chunk_size in range(1, len(STREAM) + 2):
        assert frames_of(path, chunk_size) == expected, f"reads of {chunk_size} bytes"


def test_a_writer_whose_reader_stopped_gives_up_after_its_stall_timeout() -> None:
    read_end, write_end = os.pipe()
    try:
        writer = FrameWriter(write_end, stall_timeout=0.2)
        with pytest.raises(FrameWriteError) as stalled:
            writer.write(b"x" * (1024 * 1024))  # far more than a pipe holds
    finally:
        os.close(read_end)
        os.close(write_end)

    assert str(stalled.value) == "cannot write to stdout: no progress for 0.2 s"


def test_a_frame_is_written_whole_without_a_copy_of_its_payload() -> None:
    # Answers wait for the writer, up to 32 at once; each once carried a second copy of
    # itself (`payload + b"\n"`): 55 MB more for a window of a 4 MiB page of control
    # characters. Measured here by what Python allocates while one frame is written.
    payload = b"x" * (16 * 1024 * 1024)
    read_end, write_end = os.pipe()
    received: dict[str, int | bytes] = {"bytes": 0, "last": b""}  # counted, nothing held

    def drain() -> None:
        count = 0
        while chunk := os.read(read_end, 64 * 1024):
            count += len(chunk)
            received.update(bytes=count, last=chunk[-1:])

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        tracemalloc.start()
        try:
            FrameWriter(write_end).write(payload)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        os.close(write_end)
        reader.join(timeout=30)
        os.close(read_end)

    assert received == {"bytes": len(payload) + 1, "last": b"\n"}
    assert peak < 1024 * 1024, f"{peak} bytes allocated to write a frame of {len(payload)}"
