"""A descriptor that Python's signal handler writes to, so a blocked read of stdin wakes.

Ctrl-C on a server started by hand must end it at once. But the kernel hands SIGINT to
any thread of the process, and a helper thread may take it (the stderr writer, a request's
worker); or the main thread takes it just before it enters read(2). Either way CPython's
handler only leaves a note for the main thread, which sits in read(2) until the next input
comes: the server ignored Ctrl-C (10 of 150 tries on a loaded machine). With
`set_wakeup_fd` the handler also writes a byte to a pipe, from whichever thread it runs
on, and the reads wait on stdin and that pipe together (`framing.read_frames`), so a signal
that came at any moment is seen at once. `_signal`, not `signal`: it is loaded before any
of our code, while `signal` would bring `enum` into every client start.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found, unused-ignore]
import os


class SignalWakeup:
    """The pipe, installed as the wakeup descriptor from `open()` until `close()`.

    `read_fd` is None where none could be installed (not the main thread, no descriptor
    to spare): reads then block as they always did.
    """

    def __init__(self) -> None:
        self.read_fd: int | None = None
        self._write_fd: int | None = None
        self._previous = -1

    def open(self) -> None:
        try:
            read_fd, write_fd = os.pipe()
        except OSError:
            return
        for fd in (read_fd, write_fd):
            os.set_blocking(fd, False)  # the handler must never block; reads drain it
        try:
            self._previous = _signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        except ValueError:  # only the main thread may set it
            os.close(read_fd)
            os.close(write_fd)
            return
        self.read_fd, self._write_fd = read_fd, write_fd

    def close(self) -> None:
        if self.read_fd is None or self._write_fd is None:
            return
        _signal.set_wakeup_fd(self._previous)
        os.close(self.read_fd)
        os.close(self._write_fd)
        self.read_fd = self._write_fd = None
