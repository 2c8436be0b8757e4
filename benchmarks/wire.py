"""Drive an MCP server subprocess over stdio, with as little client cost as possible.

The client must never be what is measured: requests are encoded before the clock starts,
written in one piece, and the reader thread only splits lines and counts them; responses
are parsed after the clock stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

TIMEOUT = 60.0
"""Seconds any single wait of the benchmark may take before it fails."""

PROTOCOL_VERSION = "2025-06-18"
INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "kinetis-bench", "version": "1"},
}


class BenchError(Exception):
    """The benchmark could not measure something; the message says what and why."""


def frame(message: Mapping[str, object]) -> bytes:
    """One newline-terminated JSON-RPC frame."""
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def request(request_id: int, method: str, params: Mapping[str, object] | None = None) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return frame(message)


INITIALIZE = request(0, "initialize", INITIALIZE_PARAMS)
INITIALIZED = frame({"jsonrpc": "2.0", "method": "notifications/initialized"})


def tool_call(request_id: int, name: str, arguments: Mapping[str, object]) -> bytes:
    return request(request_id, "tools/call", {"name": name, "arguments": dict(arguments)})


class ServerProcess:
    """A server subprocess: frames in through its stdin, every stdout line kept in order."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        self.argv = list(argv)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env),
        )
        self.name = Path(self.argv[-1]).name
        self._lines: list[bytes] = []
        self._ended = False
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="bench stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for line in stdout:
            with self._arrived:
                self._lines.append(line)
                self._arrived.notify_all()
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def received(self) -> int:
        """Lines received so far."""
        with self._arrived:
            return len(self._lines)

    def send(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def wait_for(self, count: int, timeout: float = TIMEOUT) -> float:
        """Block until `count` lines have arrived in all; the `perf_counter` time they had."""
        give_up = time.monotonic() + timeout
        with self._arrived:
            while len(self._lines) < count:
                if self._ended:
                    raise BenchError(f"{self.name} closed stdout early; {self.stderr_tail()}")
                left = give_up - time.monotonic()
                if left <= 0:
                    raise BenchError(
                        f"{self.name}: {len(self._lines)} of {count} answers within "
                        f"{timeout:g} s; {self.stderr_tail()}"
                    )
                self._arrived.wait(left)
            return time.perf_counter()

    def lines(self, start: int = 0) -> list[bytes]:
        with self._arrived:
            return self._lines[start:]

    def responses(self, start: int = 0) -> list[dict[str, Any]]:
        parsed = []
        for line in self.lines(start):
            value = json.loads(line)
            if not isinstance(value, dict):
                raise BenchError(f"not a JSON object on stdout: {line[:200]!r}")
            parsed.append(value)
        return parsed

    def call(self, data: bytes, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send one request and return the next response."""
        before = self.received
        self.send(data)
        self.wait_for(before + 1, timeout)
        return self.responses(before)[0]

    def initialize(self) -> dict[str, Any]:
        response = self.call(INITIALIZE)
        self.send(INITIALIZED)
        return response

    def stderr_tail(self, limit: int = 2000) -> str:
        self._stderr.flush()
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - limit))
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return f"stderr: {text}" if text else "nothing on stderr"

    def close(self, timeout: float = 15.0) -> int | None:
        """End of input, then wait (bounded) for the exit; killed if it does not come."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()
        try:
            code: int | None = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
            code = None
        self._reader.join(timeout)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()
        return code

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def spawn_to_initialize(argv: Sequence[str], env: Mapping[str, str]) -> float:
    """Seconds from starting `argv` to reading its `initialize` response.

    The request is written at once, as a client does; the process is then given end of
    input and reaped, outside the measured time.
    """
    start = time.perf_counter()
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(env),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        line = process.stdout.readline()
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait(TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(TIMEOUT)
        process.stdout.close()
    if b'"serverInfo"' not in line:
        raise BenchError(f"{' '.join(argv)} did not answer initialize: {line[:300]!r}")
    return elapsed


def run_to_exit(argv: Sequence[str], env: Mapping[str, str], timeout: float = TIMEOUT) -> float:
    """Seconds from starting `argv` to its exit (which must be a success).

    The exit is awaited with a blocking `waitpid`: `Popen.wait(timeout)` polls with sleeps
    that double up to 50 ms, which would round a 10 ms process up to 15. A timer kills the
    process if it outlives `timeout`. Its output is kept to explain a failure.
    """
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(
            list(argv), env=dict(env), stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        try:
            code = process.wait()
        finally:
            watchdog.cancel()
        elapsed = time.perf_counter() - start
        if code != 0:
            output.seek(0)
            said = output.read().decode("utf-8", "replace").strip()[-1500:]
            raise BenchError(f"{' '.join(argv)} exited with status {code}: {said}")
    return elapsed


def check_ids(responses: Iterable[Mapping[str, Any]], expected: Iterable[int]) -> None:
    """Every expected id answered once, each with a result."""
    wanted = sorted(expected)
    got = sorted(int(response["id"]) for response in responses if "result" in response)
    if got != wanted:
        raise BenchError(f"expected {len(wanted)} results, got {len(got)}")
