"""The server's stderr: whole lines, written by a thread of their own, dropped and counted
rather than ever blocking the thread that logs them."""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
import time
from collections.abc import Iterator

import pytest

from kinetis_mcp_docs.server.stdio.stderr_log import StderrLog

pytestmark = pytest.mark.interpreter  # the logging module's handlers

PIPE_FULL = b"." * (1024 * 1024)  # more than any pipe holds


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):  # closed by the test
            os.close(fd)


def fill(fd: int) -> int:
    """Fill the pipe `fd` writes to, as a reader that stopped leaves it; how many bytes."""
    os.set_blocking(fd, False)  # this test's own pipe: nothing shares it
    try:
        return os.write(fd, PIPE_FULL)
    finally:
        os.set_blocking(fd, True)


def read_all(fd: int) -> bytes:
    received = bytearray()
    while chunk := os.read(fd, 65536):
        received += chunk
    return bytes(received)


def test_lines_are_written_whole_however_they_are_written(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    log = StderrLog(write_end)

    print("first", 1, file=log)
    log.write("sec")
    log.write("ond\nthi")
    log.write("rd")  # no newline yet: written when the log is drained

    assert log.drain(timeout=10)
    os.close(write_end)
    assert read_all(read_end) == b"first 1\nsecond\nthird\n"


_NOTICE = re.compile(
    r"kinetis-docs: (\d+) lines? (?:was|were) dropped: stderr was not being read\."
)


def test_a_stderr_nobody_reads_drops_lines_instead_of_blocking_and_says_how_many(
    pipe: tuple[int, int],
) -> None:
    read_end, write_end = pipe
    filled = fill(write_end)
    log = StderrLog(write_end, capacity=1000)
    lines = [f"failure {n:03}" for n in range(500)]

    # From another thread, so that a log that blocked would fail the test, not hang it.
    writer = threading.Thread(target=lambda: [print(line, file=log) for line in lines])
    writer.start()
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert log.drain(timeout=0.2) is False  # nobody reads: drain gives up, bounded

    drained = threading.Thread(target=lambda: log.drain(timeout=30))
    drained.start()
    # Read until the log has written all it holds (the drain is over) and the pipe is
    # empty, with a bound: a notice that never came must fail the test, not hang it.
    received = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], 0.5)
        if ready:
            received += os.read(read_end, 65536)
        elif not drained.is_alive():
            break
    drained.join(timeout=30)
    assert not drained.is_alive()

    # Lines kept come in order; each notice counts the lines dropped since the last one,
    # and is written with the next lines stderr takes. Usually one notice ends it all; a
    # writer that got a little room while the lines were printed (a pipe's last page
    # part-filled) writes one sooner and goes on, which is as right.
    said = received[filled:].decode().splitlines()
    kept = [line for line in said if not line.startswith("kinetis-docs: ")]
    notices = [_NOTICE.fullmatch(line) for line in said if line.startswith("kinetis-docs: ")]
    assert all(notices), said
    assert kept == sorted(set(kept))
    assert set(kept) <= set(lines)
    dropped = sum(int(notice.group(1)) for notice in notices if notice)
    assert dropped > 0
    assert len(kept) + dropped == 500
    assert said[-1].startswith("kinetis-docs: ") or kept[-1] == said[-1]


def test_a_closed_stderr_costs_nothing_but_the_lines(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.close(read_end)
    log = StderrLog(write_end)

    for n in range(100):
        print(f"line {n}", file=log)

    assert log.drain(timeout=10)
