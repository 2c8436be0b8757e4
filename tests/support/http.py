"""A real `kinetis-docs serve --http` subprocess, reached over real sockets on 127.0.0.1.

The server binds port 0 and the test reads the port it got from uvicorn's start-up line on
output, so parallel runs never race for a port. Requests go through `httpx` with
`trust_env=False`, so no proxy of the machine (or of the docs origin's environment) sits
between the test and the route.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from tests.support.processes import wait_for

TIMEOUT = 30.0
ROUTE = "/api/mcp"
_SETTINGS = ("KINETIS_DOCS_", "MCP_BEARER_TOKEN", "MCP_ENABLED")
_RUNNING = re.compile(r"Uvicorn running on http://(\S+):(\d+) ")


# The kernel's TCP sockets; a listening one has state 0A and its port in hex after the
# address (`0100007F:8F0B`).
_LISTENING_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_LISTEN = "0A"


def _listening(port: int) -> bool:
    """Whether some socket of this machine listens on TCP `port`."""
    wanted = f":{port:04X}"
    for table in _LISTENING_TABLES:
        with contextlib.suppress(OSError):
            for line in table.read_text(encoding="ascii").splitlines()[1:]:
                fields = line.split()
                if fields[1].endswith(wanted) and fields[3] == _LISTEN:
                    return True
    return False


def kinetis_docs() -> str:
    """`kinetis-docs`, the console script of the environment running the tests."""
    return os.fspath(Path(sys.executable).with_name("kinetis-docs"))


def serve_http_argv(*options: str) -> list[str]:
    return [kinetis_docs(), "serve", "--http", "--port", "0", *options]


class HttpServer:
    """One HTTP server subprocess; its output (stderr and stdout) is kept, its port read there."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        workers: int = 1,
        output_file: Path | None = None,
    ) -> None:
        """`output_file`, when given, takes the output instead of a pipe, and it is read
        only until the server has started: for a benchmark, where reading a busy server's
        log here would take CPU from the load generator."""
        self._file = output_file
        self._started = threading.Event()
        with contextlib.ExitStack() as files:
            sink = (
                subprocess.PIPE
                if output_file is None
                else files.enter_context(output_file.open("wb"))
            )
            self.process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                # One stream, in order: uvicorn logs to stderr, its access log to stdout.
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=dict(env),
            )
        self._output = bytearray()
        self._changed = threading.Condition()
        reader = self._read_output if output_file is None else self._read_file_until_started
        self._reader = threading.Thread(target=reader, daemon=True)
        self._reader.start()
        self.port = self._wait_for_port(workers)
        self._started.set()
        self.url = f"http://127.0.0.1:{self.port}{ROUTE}"
        self.client = httpx.Client(trust_env=False, timeout=TIMEOUT)

    def _read_output(self) -> None:
        assert self.process.stdout is not None
        output = self.process.stdout
        while chunk := output.read1(65536):  # type: ignore[attr-defined]
            with self._changed:
                self._output += chunk
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _read_file_until_started(self) -> None:
        assert self._file is not None
        with self._file.open("rb") as output:
            while not self._started.is_set():
                chunk = output.read()
                with self._changed:
                    self._output += chunk
                    self._changed.notify_all()
                if self.process.poll() is not None and not chunk:
                    return
                self._started.wait(0.01)

    @property
    def output(self) -> str:
        if self._file is not None and self._started.is_set():
            return self._file.read_text("utf-8", "replace")
        with self._changed:
            return self._output.decode("utf-8", "replace")

    def wait_for_output(self, text: str, timeout: float = TIMEOUT) -> None:
        """Return once the output holds `text`; fail the test if it does not in `timeout` s.

        A line the server writes before it answers can still be in the pipe when the answer
        arrives: a test that looks for it must wait for it, not read the output once.
        """
        encoded = text.encode("utf-8")
        with self._changed:
            if not self._changed.wait_for(lambda: encoded in self._output, timeout):
                shown = self._output.decode("utf-8", "replace")
                raise AssertionError(f"{text!r} not in the output within {timeout} s: {shown}")

    def _wait_for_port(self, workers: int) -> int:
        """The port, once every worker has started (a parent names it before they have)."""

        def port() -> int | None:
            text = self._output.decode("utf-8", "replace")
            found = _RUNNING.search(text)
            if found is None or text.count("Application startup complete.") < workers:
                return None
            return int(found.group(2))

        with self._changed:
            if not self._changed.wait_for(
                lambda: port() is not None or not self._reader.is_alive(), TIMEOUT
            ):
                raise AssertionError(f"the server did not start in {TIMEOUT} s: {self.output}")
            found = port()
        if found is None:
            self.stop()
            raise AssertionError(f"the server exited: {self.output}")
        # Both lines come before the socket listens: the route binds it and uvicorn logs the
        # address then, and "startup complete" ends the app's start, before uvicorn calls
        # listen(). A connection in between is refused.
        if _LISTENING_TABLES[0].exists():
            wait_for(lambda: _listening(found), f"the server to listen on port {found}", TIMEOUT)
        return found

    def post(
        self,
        message: object,
        headers: Mapping[str, str] | None = None,
        *,
        token: str | None = None,
    ) -> httpx.Response:
        """POST one JSON body (already bytes, or encoded here) to the route."""
        sent = {b"content-type": b"application/json"}
        sent.update(
            (name.lower().encode(), value.encode()) for name, value in (headers or {}).items()
        )
        if token is not None:
            sent[b"authorization"] = f"Bearer {token}".encode()  # UTF-8, as clients send it
        # ASCII JSON: a lone surrogate is sent escaped, as a client's JSON would carry it.
        body = message if isinstance(message, bytes) else json.dumps(message).encode("ascii")
        return self.client.post(self.url, content=body, headers=sent)

    def rpc(
        self,
        method: str,
        params: object = None,
        headers: Mapping[str, str] | None = None,
        *,
        token: str | None = None,
        request_id: object = 1,
    ) -> httpx.Response:
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return self.post(message, headers, token=token)

    def call_tool(
        self, name: str, arguments: object, *, token: str | None = None
    ) -> dict[str, Any]:
        """The `result` of a `tools/call` that must succeed at the JSON-RPC level."""
        response = self.rpc("tools/call", {"name": name, "arguments": arguments}, token=token)
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert isinstance(result, dict)
        return result

    def stop(self) -> int:
        """SIGINT (as Ctrl-C), then wait; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            code = self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=TIMEOUT)
        self._reader.join(timeout=TIMEOUT)
        if self.process.stdout is not None:
            self.process.stdout.close()
        with contextlib.suppress(AttributeError):
            self.client.close()
        return code


def tool_text(result: Mapping[str, Any]) -> str:
    """The one text block of a tool result."""
    (block,) = result["content"]
    assert block["type"] == "text"
    text = block["text"]
    assert isinstance(text, str)
    return text


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `files` (relative path -> content) under `root`; returns `root`."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def clean_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or `base`) without any of the route's own settings."""
    env = dict(os.environ if base is None else base)
    return {name: value for name, value in env.items() if not name.startswith(_SETTINGS)}


def raw_status(
    port: int, header_lines: Sequence[str], body: bytes, *, host: str = "127.0.0.1"
) -> int:
    """The status of one POST to the route sent byte for byte: `header_lines` as written,
    repeated names included, which HTTP client libraries merge or refuse."""
    head = [f"POST {ROUTE} HTTP/1.1", *header_lines, f"Content-Length: {len(body)}"]
    head += ["Content-Type: application/json", "Connection: close"]
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection((host, port), timeout=TIMEOUT) as connection:
        connection.sendall(request)
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def request_head(*lines: str, length: int | None = None) -> bytes:
    """The head of a POST to the route, `lines` as written, `Host: 127.0.0.1` first."""
    head = [f"POST {ROUTE} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if length is not None:
        head.append(f"Content-Length: {length}")
    return ("\r\n".join([*head, *lines]) + "\r\n\r\n").encode("latin-1")


def answer_until_closed(connection: socket.socket, timeout: float = TIMEOUT) -> bytes:
    """Everything the server sends on `connection` until it closes it; fails the test if
    the server neither closes it nor sends anything more within `timeout` seconds."""
    connection.settimeout(timeout)
    answer = b""
    while True:
        try:
            chunk = connection.recv(65536)
        except ConnectionResetError:
            return answer
        except TimeoutError:
            raise AssertionError(
                f"the server held the connection {timeout} s without closing it; "
                f"it had sent {answer[:200]!r}"
            ) from None
        if not chunk:
            return answer
        answer += chunk


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer (0 when there is none)."""
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[0].startswith(b"HTTP/") else 0


_LIMITED = (
    "import os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[1]))); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)


def with_descriptor_limit(descriptors: int, argv: Sequence[str]) -> list[str]:
    """`argv`, run with at most `descriptors` open files (`RLIMIT_NOFILE`, soft and hard)."""
    return [sys.executable, "-c", _LIMITED, str(descriptors), *argv]
