"""The three standard descriptors, made safe before the process writes anything.

A client, or a shell's `2>&-`, may start the server with a standard descriptor closed.
Python then sets that stream to None, and `print(..., file=sys.stderr)` quietly writes to
stdout instead; worse, the next file the process opens takes the free number, so the
frame stream's private copy of stdout could become descriptor 2, where every log line
would land between frames. So both entries — the stdio server and the spawn entry that
runs before it — start here:

- a closed stdin or stderr is opened on the null device: a closed stdin reads as end of
  input, and what is said on a closed stderr is lost, as it was meant to be;
- `sys.stderr` becomes a `StderrLog` on descriptor 2 (once: a second call keeps it), so no
  message of the process ever blocks on a stderr that nobody reads;
- a closed stdout is refused (`StdoutClosed`): no answer could reach the client.

Imported on every client spawn, so it needs nothing but `os`, `sys` and `StderrLog`.
"""

from __future__ import annotations

import os
import sys

from .stderr_log import StderrLog

# The descriptors opened on the null device when closed, and how.
_REOPENED = ((0, os.O_RDONLY), (2, os.O_WRONLY))


class StdoutClosed(Exception):
    """Descriptor 1 is closed: the server has nowhere to write its answers."""

    def __init__(self) -> None:
        super().__init__("stdout is closed, so no answer could reach the client")


def open_standard_streams() -> StderrLog:
    """Make descriptors 0 and 2 usable and `sys.stderr` a `StderrLog` on 2; return it.

    Raises `StdoutClosed` when descriptor 1 is closed, once `sys.stderr` is ready to say so.
    """
    for fd, flags in _REOPENED:
        if _closed(fd):
            _open_null_device(fd, flags)
    log = sys.stderr if isinstance(sys.stderr, StderrLog) else StderrLog(2)
    sys.stderr = log
    if _closed(1):
        raise StdoutClosed
    return log


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _open_null_device(fd: int, flags: int) -> None:
    """Open the null device as descriptor `fd`, inheritable like any standard stream."""
    opened = os.open(os.devnull, flags)
    if opened != fd:
        # A lower descriptor was free too: `fd` itself is then filled by copying.
        os.dup2(opened, fd)
        os.close(opened)
    os.set_inheritable(fd, True)  # noqa: FBT003 - the function takes no keywords
