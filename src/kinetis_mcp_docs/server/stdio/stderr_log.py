"""stderr for the server: lines that may be dropped, never a write that blocks serving.

A client that never reads the server's stderr fills its pipe after about 64 KiB; from then
on a plain `print(..., file=sys.stderr)` blocks its thread forever, and with it every
request that thread was answering. `StderrLog` stands in for `sys.stderr`: whole lines go
into a queue of at most `QUEUE_BYTES`, a thread of its own writes them to the file
descriptor, and a line that finds the queue full is dropped and counted. The count is
written as a line of its own once stderr takes lines again.

The descriptor itself is left blocking: `O_NONBLOCK` would change its open file
description, which may be the user's terminal, shared with their shell. `threading` is
imported, and the writer started, with the first line: most sessions never write one. A
writer that cannot start (the process is out of threads or memory) is tried again with the
next line; meanwhile lines wait in the queue, under the same bound.
"""

from __future__ import annotations

import io
import os
import time
from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    import threading

QUEUE_BYTES = 64 * 1024
"""Bytes of lines held for a stderr that is not taking them; a line past that is dropped."""
DRAIN_SECONDS = 1.0
"""At exit, how long queued lines may go without any being written before they are given up."""


class StderrLog(io.TextIOBase):
    """A text stream writing whole lines to `fd` from a thread of its own, dropping lines
    rather than blocking its callers. Safe to write from any thread."""

    encoding = "utf-8"
    errors = "backslashreplace"

    def __init__(self, fd: int, *, capacity: int = QUEUE_BYTES) -> None:
        super().__init__()
        self._fd = fd
        self._capacity = capacity
        self._lock = allocate_lock()
        self._starting = allocate_lock()
        self._changed: threading.Condition | None = None  # with the writer, from the first write
        self._partial = ""  # text not yet ended by a newline
        self._lines: list[bytes] = []
        self._queued = 0
        self._dropped = 0
        self._writing = False
        self._writes = 0  # batches written so far: progress, for `drain`
        self._broken = False  # the descriptor refused a write: nothing more is tried

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        """Queue every line `text` completes; returns at once, whatever stderr is doing."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._changed is None:
            self._start_writer()
        with self._lock:
            self._partial += text
            if "\n" in text:
                *lines, self._partial = self._partial.split("\n")
            elif len(self._partial) >= self._capacity:
                lines, self._partial = [self._partial], ""  # a line this long ends here
            else:
                return len(text)
            for line in lines:
                self._enqueue(line)
        return len(text)

    def flush(self) -> None:
        """Nothing to do: lines are written by the writer thread as soon as stderr takes them.

        Waiting here would block the caller on a stderr nobody reads; see `drain`.
        """

    def drain(self, timeout: float = DRAIN_SECONDS) -> bool:
        """Wait until every queued line is written, giving up after `timeout` seconds in
        which none was; whether all were. Any unfinished line is queued first."""
        with self._lock:
            if self._partial:
                self._enqueue(self._partial)
                self._partial = ""
            changed = self._changed
            if changed is None:
                return not self._lines  # no writer could start: queued lines stay unwritten
            seen, last_progress = self._writes, time.monotonic()
            while (self._lines or self._writing) and not self._broken:
                remaining = last_progress + timeout - time.monotonic()
                if remaining <= 0:
                    return False
                changed.wait(remaining)
                if self._writes != seen:
                    seen, last_progress = self._writes, time.monotonic()
            return True

    def _enqueue(self, line: str) -> None:
        """Queue `line` and its newline, or count it as dropped; the lock is held."""
        data = (line + "\n").encode("utf-8", "backslashreplace")
        if self._queued + len(data) > self._capacity:
            self._dropped += 1
            return
        self._lines.append(data)
        self._queued += len(data)
        if self._changed is not None:
            self._changed.notify_all()

    def _start_writer(self) -> None:
        """Start the writer thread, once; outside `_lock`, since it imports."""
        import atexit  # noqa: PLC0415 - see the module's docstring
        import threading  # noqa: PLC0415

        with self._starting:
            if self._changed is not None:
                return
            changed = threading.Condition(self._lock)
            writer = threading.Thread(
                target=self._write_lines, args=(changed,), name="kinetis-docs stderr", daemon=True
            )
            try:
                writer.start()
            except (RuntimeError, MemoryError):
                return  # no thread to be had now: the line is queued, the next one tries again
            self._changed = changed
        # Lines still queued when the interpreter exits normally are written then (bounded).
        atexit.register(self.drain)

    def _write_lines(self, changed: threading.Condition) -> None:
        while True:
            with changed:
                while not self._lines:
                    changed.wait()
                batch = b"".join(self._lines)
                if self._dropped:
                    batch += _dropped_notice(self._dropped)
                self._lines.clear()
                self._queued = self._dropped = 0
                self._writing = True
            broken = self._broken or not _write_all(self._fd, batch)
            with changed:
                self._writing = False
                self._broken = broken
                self._writes += 1
                changed.notify_all()


def _dropped_notice(count: int) -> bytes:
    lines = "line was" if count == 1 else "lines were"
    return f"kinetis-docs: {count} {lines} dropped: stderr was not being read.\n".encode()


def _write_all(fd: int, data: bytes) -> bool:
    """Write all of `data`, blocking as long as it takes; False if the descriptor fails."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except OSError:
            return False
        view = view[written:]
    return True
