"""The server's lines on stderr stay whole whatever threads write them at once."""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from kinetis_mcp_docs.server.core import reasons
from kinetis_mcp_docs.server.core.display import readable, say, utf8_encodable

pytestmark = pytest.mark.interpreter  # surrogate escapes and the codecs

WAIT = 30.0


class BusyStream(io.StringIO):
    """stderr on a busy machine: a thread that has written part of a line is descheduled
    there until another thread has written, as a loaded scheduler may do at any write."""

    def __init__(self) -> None:
        super().__init__()
        self._wrote = threading.Condition()
        self._writes = 0

    def write(self, text: str) -> int:
        with self._wrote:
            written = super().write(text)
            self._writes += 1
            mine = self._writes
            self._wrote.notify_all()
            if not text.endswith("\n"):
                self._wrote.wait_for(lambda: self._writes > mine, WAIT)
        return written


def _at_once(*writers: Callable[[], None]) -> None:
    threads = [threading.Thread(target=writer) for writer in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()


@contextlib.contextmanager
def busy_stderr() -> Iterator[BusyStream]:
    """`sys.stderr` a `BusyStream` for the block (set in the test itself: pytest's capture
    puts its own back between a fixture's setup and the test)."""
    stream = BusyStream()
    kept, sys.stderr = sys.stderr, stream
    try:
        yield stream
    finally:
        sys.stderr = kept


def test_two_threads_saying_at_once_write_two_whole_lines() -> None:
    with busy_stderr() as stream:
        _at_once(lambda: say("first: Name or service not known"), lambda: say("second: left"))

    assert sorted(stream.getvalue().splitlines()) == [
        "kinetis-docs: first: Name or service not known",
        "kinetis-docs: second: left",
    ]


@contextlib.contextmanager
def reasons_to_stderr() -> Iterator[logging.Logger]:
    """The reasons' logger sending to this process's stderr as it is now, as a server's is;
    as it was afterwards (another test of this process may have sent it elsewhere)."""
    logger = reasons.logger()
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    logger.handlers.clear()
    reasons.to_stderr()
    try:
        yield logger
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def test_a_reason_logged_while_the_server_says_a_line_is_a_line_of_its_own() -> None:
    with busy_stderr() as stream, reasons_to_stderr() as logger:
        _at_once(
            lambda: logger.warning("could not read the page: [Errno -2] no name"),
            lambda: say("search index: left out 13 pages"),
        )

    assert sorted(stream.getvalue().splitlines()) == [
        "kinetis-docs: could not read the page: [Errno -2] no name",
        "kinetis-docs: search index: left out 13 pages",
    ]


def test_text_utf8_can_encode_is_readable_as_it_is_and_a_byte_it_cannot_is_shown_as_one() -> None:
    for text in ["index.md", "café/ü.md", "😀"]:
        assert utf8_encodable(text)
        assert readable(text) is text
    # Byte 0xFF of a name that was not UTF-8, as Python holds it (PEP 383).
    assert not utf8_encodable("page-\udcff.md")
    assert readable("page-\udcff.md") == "page-\\xff.md"
