"""A PEP 503 "simple" package index over a wheelhouse, on 127.0.0.1: pip reaches it as a
user's pip reaches a mirror, through `PIP_INDEX_URL`. It counts the requests for each path,
can hold the nth one until a test lets it go, and can answer a path with an error from
some point on.
"""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinetis_mcp_docs.installer.envs.metadata import canonical_name

WAIT = 60.0  # the bound on every wait for another thread or process


@dataclass
class Gate:
    """Holds one request to the index until released."""

    arrived: threading.Event
    release: threading.Event


class LocalIndex:
    """A PEP 503 index over a wheelhouse, on 127.0.0.1, counting and optionally holding."""

    def __init__(self, wheelhouse: Path) -> None:
        self._files = {wheel.name: wheel for wheel in wheelhouse.glob("*.whl")}
        self._counts: Counter[str] = Counter()
        self._gates: dict[tuple[str, int], Gate] = {}
        self._failing: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def hold(self, path: str, occurrence: int = 1) -> Gate:
        """Hold the `occurrence`-th request for `path` until the gate is released."""
        gate = Gate(threading.Event(), threading.Event())
        with self._lock:
            self._gates[(path, occurrence)] = gate
        return gate

    def fail(self, path: str, status: int) -> None:
        """Answer every request for `path` with `status` from now on."""
        with self._lock:
            self._failing[path] = status

    def count(self, path: str) -> int:
        with self._lock:
            return self._counts[path]

    def close(self) -> None:
        with self._lock:
            for gate in self._gates.values():
                gate.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=WAIT)

    def _respond(self, path: str) -> tuple[int, bytes, str]:
        with self._lock:
            self._counts[path] += 1
            gate = self._gates.get((path, self._counts[path]))
            failing = self._failing.get(path)
        if failing is not None:
            return failing, b"unavailable\n", "text/plain"
        if gate is not None:
            gate.arrived.set()
            gate.release.wait(timeout=5 * WAIT)
        if path.startswith("/simple/") and path.endswith("/"):
            project = path[len("/simple/") : -1]
            links = "".join(
                f'<a href="/files/{name}">{name}</a>\n'
                for name in sorted(self._files)
                if canonical_name(name.split("-")[0]) == project
            )
            if links:
                return 200, f"<html><body>\n{links}</body></html>\n".encode(), "text/html"
        if path.startswith("/files/") and path[len("/files/") :] in self._files:
            body = self._files[path[len("/files/") :]].read_bytes()
            return 200, body, "application/octet-stream"
        return 404, b"not found\n", "text/plain"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body, content_type = index._respond(self.path.split("?")[0])
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # pip was killed mid-request: that is what some tests do

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler
