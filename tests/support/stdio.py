"""Drive a real server subprocess over its stdin and stdout pipes."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TIMEOUT = 20.0

INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "tests", "version": "0"},
}


def serve_argv() -> list[str]:
    """`kinetis-docs serve`, the console script of the environment running the tests."""
    script = Path(sys.executable).with_name("kinetis-docs")
    return [os.fspath(script), "serve"]


def module_argv() -> list[str]:
    """`python -m kinetis_mcp_docs.server`, the hand-off target of the updater."""
    return [sys.executable, "-m", "kinetis_mcp_docs.server"]


class ServerProcess:
    """One server subprocess; every line it prints on stdout is kept for inspection.

    Both streams are read as they come, unless `read_stdout` or `read_stderr` is False:
    then nothing reads that one (until `start_reading_stderr()`), as with a client that
    stops reading it.
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        read_stdout: bool = True,
        read_stderr: bool = True,
    ) -> None:
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
        )
        self.lines: list[bytes] = []
        self._frames: queue.Queue[bytes | None] = queue.Queue()
        self._stderr = bytearray()
        self._next_id = 1000
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        if read_stdout:
            self._readers[0].start()
        if read_stderr:
            self.start_reading_stderr()

    def start_reading_stderr(self) -> None:
        self._readers[1].start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            self._frames.put(line)
        self._frames.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        stderr = self.process.stderr
        while chunk := stderr.read1(65536):  # type: ignore[attr-defined]
            self._stderr += chunk

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: object) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next frame; fails the test if none arrives in time or stdout closed."""
        frame = json.loads(self.receive_line(timeout))
        assert isinstance(frame, dict)
        return frame

    def receive_line(self, timeout: float = TIMEOUT) -> bytes:
        """The next frame as the bytes of its line, newline included."""
        try:
            line = self._frames.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no frame within {timeout} s; stderr: {self.stderr}") from None
        if line is None:
            raise AssertionError(f"stdout closed; stderr: {self.stderr}")
        return line

    def request(self, method: str, params: object = None, *, timeout: float = TIMEOUT) -> Any:
        """Send one request and return the whole response frame (result or error)."""
        self._next_id += 1
        message: dict[str, object] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        response = self.receive(timeout)
        assert response.get("id") == self._next_id, response
        return response

    def call_tool(self, name: str, arguments: object) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Close stdin and wait for the process to exit; returns its exit code."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.close_stdin()
        return self.wait_for_exit(timeout)

    def wait_for_exit(self, timeout: float = TIMEOUT) -> int:
        """Wait for the process to exit, stdin left as it is; returns its exit code."""
        code = self.process.wait(timeout=timeout)
        for reader in self._started_readers():
            reader.join(timeout=timeout)
        self._close_streams()
        return code

    def remaining_frames(self) -> list[dict[str, Any]]:
        """Every frame still unread; call after `finish`."""
        frames = []
        while not self._frames.empty():
            line = self._frames.get_nowait()
            if line is None:
                break
            frames.append(json.loads(line))
        return frames

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        for reader in self._started_readers():
            reader.join(timeout=TIMEOUT)
        self._close_streams()

    def _started_readers(self) -> list[threading.Thread]:
        return [reader for reader in self._readers if reader.ident is not None]

    def _close_streams(self) -> None:
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                # A server that is gone leaves nothing to flush to it.
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


def assert_only_frames(lines: Sequence[bytes]) -> None:
    """Every line is one JSON-RPC 2.0 object: nothing else ever reached stdout."""
    for line in lines:
        assert line.endswith(b"\n"), line[:200]
        frame = json.loads(line)
        assert isinstance(frame, dict), line[:200]
        assert frame.get("jsonrpc") == "2.0", line[:200]
