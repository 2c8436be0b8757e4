"""Strings of the server's own (a path, an operating system's message) made fit to write.

Python reads a path, an argument or an environment variable whose bytes are not UTF-8 with
each such byte held as a lone surrogate (PEP 383's `surrogateescape`: byte 0xFF becomes
U+DCFF), so that the bytes can be given back to the system unchanged. That string is not
valid Unicode: UTF-8 cannot encode it, and JSON can carry it only as a `\\udcff` escape,
which a strict client refuses (the MCP Python SDK's parser rejects "a lone leading
surrogate" and drops the whole frame, so an `initialize` naming such a directory was never
answered as far as it could tell). `readable` writes those bytes as `\\xff` instead, the way
Python's `backslashreplace` shows bytes it cannot decode. A client's own strings (an id, a
uri) are echoed as they came and never pass through here.

A line the server writes on stderr is made from such strings too, and from reasons an
operating system or a library gave: `stderr_line` keeps it to the one line, starting with
`kinetis-docs:`, that a client's log (or a person grepping it) reads.

Each line goes to stderr in one write, under one lock (`write_line`): `print` writes the
text and its newline apart, and a thread writing between the two (the HTTP route's index
build fetches pages on several) glued two messages into one line.

Imports nothing beyond `sys`, a lock and the package root's `printable`, which imports
nothing: the stdio server loads this on every client start.
"""

from __future__ import annotations

import sys
from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

from ...printable import one_line

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from typing import TextIO

# Held while a line is written: one writer at a time, whatever stream stderr is now.
_writing = allocate_lock()


def utf8_encodable(text: str) -> bool:
    """Whether UTF-8 can encode `text`: not when it holds a lone surrogate, which is how
    Python holds a byte the system gave that was not UTF-8."""
    if text.isascii():
        return True  # the common case, and no surrogate is ASCII
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def readable(text: str) -> str:
    """`text`, a string the system gave, as valid Unicode: each byte that was not UTF-8 (held
    as a lone surrogate) written `\\xNN`; any other lone surrogate written `\\udNNN`."""
    if utf8_encodable(text):
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A surrogate that stands for no byte (only U+DC80 to U+DCFF do): no byte to show.
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


PREFIX = "kinetis-docs: "
"""What every line the server writes on stderr starts with, so a client's log can be grepped."""


def stderr_line(message: str) -> str:
    """The line, without its newline, that says `message` on stderr: `kinetis-docs: ...`,
    `readable` and kept to one line (`printable.one_line`)."""
    return PREFIX + one_line(readable(message))


def write_line(stream: TextIO | None, line: str) -> None:
    """Write `line` and its newline to `stream` in one write, under the lock every line of
    this process's stderr is written under, so that no other thread's line lands inside it.
    Nothing is written without a stream (`print` would write to stdout, the frames')."""
    if stream is None:
        return
    with _writing:
        stream.write(line + "\n")
        stream.flush()


def say(message: str) -> None:
    """Write `message` to stderr as one `kinetis-docs:` line (`stderr_line`); every line the
    server writes there goes through here or through `stderr_line` and `write_line`."""
    write_line(sys.stderr, stderr_line(message))
