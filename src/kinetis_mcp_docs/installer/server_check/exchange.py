"""Talk to a stdio MCP server the way a client does, bounded in time.

Used by `verification`: the offline check of a freshly built environment and setup's
four-message verification. Every frame is written, the answers to the requests are
awaited, then stdin is closed and stdout read to its end, so a frame the server should not
have sent (an answer to a notification) is seen too. Nothing here interprets the answers
beyond JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import children

# The tail of the server's stderr kept for an error message: enough for a traceback.
STDERR_TAIL_BYTES = 16 * 1024


@dataclass
class Transcript:
    """What a server said: its stdout frames in order, its stderr, how it ended."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    garbage: list[str] = field(default_factory=list)  # stdout lines that are not JSON objects
    stderr: str = ""
    returncode: int | None = None
    timed_out: bool = False
    start_error: str | None = None

    def response(self, request_id: int) -> dict[str, Any] | None:
        """The frame answering `request_id`, if one arrived."""
        for frame in self.frames:
            if frame.get("id") == request_id and ("result" in frame or "error" in frame):
                return frame
        return None


def exchange(
    argv: Sequence[str],
    messages: Sequence[Mapping[str, Any]],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
) -> Transcript:
    """Send `messages` to a server started from `argv`, collect everything it says.

    Returns once stdout has reached end of file and the process has exited, or once
    `timeout` seconds have passed (the process group is then killed and `timed_out` set).
    """
    deadline = time.monotonic() + timeout
    transcript = Transcript()
    try:
        process = children.start_piped(argv, env=env, stdin=subprocess.PIPE, cwd=cwd)
    except OSError as error:
        transcript.start_error = f"{argv[0]} could not be started ({error})"
        return transcript
    stderr_chunks: list[bytes] = []
    lines: queue.Queue[bytes | None] = queue.Queue()
    readers = [
        threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True),
        threading.Thread(target=_read_tail, args=(process.stderr, stderr_chunks), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        # Stopped before its pipes are closed: a reader still blocked on a live server
        # would hold the join below.
        with children.stopped_on_leaving(process):
            _send(process, messages)
            expected = {message["id"] for message in messages if "id" in message}
            _collect(process, lines, expected, deadline, transcript)
            if not transcript.timed_out:
                try:
                    process.wait(timeout=max(deadline - time.monotonic(), 0.01))
                except subprocess.TimeoutExpired:
                    transcript.timed_out = True
    finally:
        _close_quietly(process.stdin)
        for reader, stream in zip(readers, (process.stdout, process.stderr), strict=True):
            reader.join(timeout=2)
            # A reader still blocked means a descendant outside the killed group holds
            # the pipe; closing under it would block too, so leave it to the collector.
            if not reader.is_alive():
                _close_quietly(stream)
    transcript.returncode = process.returncode
    transcript.stderr = b"".join(stderr_chunks)[-STDERR_TAIL_BYTES:].decode("utf-8", "replace")
    return transcript


def _send(process: subprocess.Popen[bytes], messages: Sequence[Mapping[str, Any]]) -> None:
    if process.stdin is None:  # pragma: no cover - stdin=PIPE guarantees it
        return
    # A server that exited early breaks the pipe; what it said is read all the same.
    with contextlib.suppress(OSError):
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()


def _collect(
    process: subprocess.Popen[bytes],
    lines: queue.Queue[bytes | None],
    expected: set[Any],
    deadline: float,
    transcript: Transcript,
) -> None:
    """Read stdout frames to end of file; close stdin once every request is answered."""
    answered: set[Any] = set()
    while True:
        if expected <= answered:
            _close_quietly(process.stdin)
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            transcript.timed_out = True
            return
        if line is None:
            return
        frame = _parse(line)
        if frame is None:
            transcript.garbage.append(line.decode("utf-8", "replace").rstrip("\r\n"))
            continue
        transcript.frames.append(frame)
        if "id" in frame:
            answered.add(frame["id"])


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_lines(stream: Any, lines: queue.Queue[bytes | None]) -> None:
    try:
        for line in iter(stream.readline, b""):
            lines.put(line)
    finally:
        lines.put(None)


def _read_tail(stream: Any, chunks: list[bytes]) -> None:
    kept = 0
    for chunk in iter(lambda: stream.read1(65536), b""):
        chunks.append(chunk)
        kept += len(chunk)
        # Keep memory bounded however much a broken server writes.
        while kept > 2 * STDERR_TAIL_BYTES and len(chunks) > 1:
            kept -= len(chunks.pop(0))


def _close_quietly(stream: Any) -> None:
    with contextlib.suppress(OSError, AttributeError):
        stream.close()
