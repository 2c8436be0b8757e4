"""`--access-log json`: one JSON object per request, on stderr.

    {"time": "2026-07-28T09:14:03.512Z", "request_id": "3f9c0a1b-1", "pid": 4711,
     "http_method": "POST", "path": "/api/mcp", "http_status": 200,
     "rpc_method": "tools/call", "tool": "search_docs", "duration_ms": 2.731,
     "key_hash": "9b1e55c0d7a4f2e8"}

- `request_id`: the request's `X-Request-Id` when it is 1 to 200 visible ASCII
  characters, else one made up (this worker's random prefix and a count), so that a line
  can be found from either end; the answer carries it back in `X-Request-Id`.
- `rpc_method` and `tool`: as the request named them (cut to 100 characters, a lone
  surrogate as U+FFFD), null when there was no JSON-RPC call to read, and `tool` null
  unless a `tools/call`.
- `duration_ms`: from the request's arrival at the application to its answer.
  `http_status` 499 is a client that left before its body was whole (nothing answered).
- `key_hash`: the rate-limit key (a token's digest, or an address), hashed with BLAKE2b
  under a secret, so that one client's requests can be followed without its address
  being written anywhere; null for a request no key was worked out for (a probe). The
  secret is `KINETIS_DOCS_ACCESS_LOG_SALT`; `serve --http` makes one for its run when it
  is unset, shared by its workers. The token itself never appears.

Lines are written together, within `FLUSH_SECONDS` of their request (or every
`FLUSH_LINES`): a write per request cost more than the rest of the log line. Every
worker of `serve --http --workers N` writes to the same stderr, most often a pipe (systemd,
a container runtime, `| cat`), and a write to a pipe is kept whole only up to `PIPE_BUF`
bytes (4,096 on Linux): beyond it, another worker's write can land in the middle, and 2
to 12 lines in 10,000 came out torn with two workers. So the lines are written in pieces
of at most `PIPE_BUF` bytes, each cut at a line's end, straight to the descriptor; and a
line is never longer than that: one whose request id, path, method and tool (each already
bounded) would carry it past, written as escapes, has them cut to `SHORT_NAME` characters.
A request only records what its line will say (see `batch`); the lines are formatted
together when written.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import secrets
import select
import sys
import time
from typing import Any

from ...codec import dumps
from .batch import Batch

SALT = "KINETIS_DOCS_ACCESS_LOG_SALT"
FLUSH_SECONDS = 0.1
FLUSH_LINES = 256
MAX_REQUEST_ID = 200
MAX_NAME = 100
MAX_PATH = 200
# What a pipe writes whole (POSIX guarantees at least 512).
PIPE_BUF = getattr(select, "PIPE_BUF", 512)
SHORT_NAME = 32
_VISIBLE = bytes(range(0x21, 0x7F))
_REMEMBERED_KEYS = 4096
_LINE = (
    '{"time":"%s.%03dZ","request_id":%s,"pid":%d,"http_method":%s,"path":%s,'
    '"http_status":%d,"rpc_method":%s,"tool":%s,"duration_ms":%.3f,"key_hash":%s}'
)
# What a request records for its line: (time, request id, HTTP method, path, status,
# JSON-RPC method, tool, seconds, rate-limit key).
_Row = tuple[float, bytes, str, str, int, "str | None", "str | None", float, "str | None"]


def _json_string(text: str) -> str:
    return dumps(text)


def _readable(name: str) -> str:
    """`name` with each lone surrogate (`"\\ud800"` is valid JSON) as U+FFFD: written as its
    escape, it made a line that strict JSON readers refuse."""
    return name.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


try:  # the C function `json` quotes strings with; `dumps` where there is none
    from _json import encode_basestring_ascii as _string
except ImportError:  # pragma: no cover - other Python implementations
    _string = _json_string


class Note:
    """What the route learnt of one request, for the log and the metrics."""

    __slots__ = ("key", "limited", "method", "route", "tool")

    def __init__(self) -> None:
        self.route = False  # a request to the MCP route (not a probe, nor the metrics)
        self.method: str | None = None
        self.tool: str | None = None
        self.key: str | None = None
        self.limited = False


class AccessLog:
    """One worker's JSON access log, written to `stream` (stderr)."""

    def __init__(self, salt: bytes | None = None, stream: Any = None) -> None:
        self._salt = salt or secrets.token_bytes(16)
        self._stream = stream
        self._prefix = secrets.token_hex(4).encode("ascii") + b"-"
        self._count = itertools.count(1)
        self._pid = os.getpid()
        self._hashes: dict[str, str] = {}
        self._rows: Batch[_Row] = Batch(self._write, most=FLUSH_LINES, seconds=FLUSH_SECONDS)
        self._second = -1
        self._stamp = ""

    @classmethod
    def from_environ(cls) -> AccessLog:
        salt = os.environ.get(SALT)
        # BLAKE2b takes a key of at most 64 bytes: a secret of any length is digested first.
        return cls(hashlib.sha256(salt.encode("utf-8")).digest() if salt else None)

    def request_id(self, headers: list[tuple[bytes, bytes]]) -> bytes:
        """The request's own `X-Request-Id` if it is usable, else a new one."""
        for name, value in headers:
            if name == b"x-request-id":
                if 0 < len(value) <= MAX_REQUEST_ID and not value.translate(None, _VISIBLE):
                    return value
                break
        return b"%s%x" % (self._prefix, next(self._count))

    def write(
        self, scope: dict[str, Any], request_id: bytes, note: Note, status: int, seconds: float
    ) -> None:
        # What a client named is cut now: a row is kept until its line is written.
        method, tool, path = note.method, note.tool, scope["path"]
        if method is not None and (len(method) > MAX_NAME or not method.isascii()):
            method = _readable(method[:MAX_NAME])
        if tool is not None and (len(tool) > MAX_NAME or not tool.isascii()):
            tool = _readable(tool[:MAX_NAME])
        if len(path) > MAX_PATH:
            path = path[:MAX_PATH]
        self._rows.add(
            (
                time.time(),
                request_id,
                scope["method"],
                path,
                status,
                method,
                tool,
                seconds,
                note.key,
            )
        )

    def _line(self, row: _Row) -> str:
        line = self._format(row)
        if len(line) < PIPE_BUF:
            return line
        # Rare: names a client chose, most of them escapes (`\ud83d\ude00` is twelve bytes).
        now, request_id, http_method, path, status, method, tool, seconds, key = row
        return self._format(
            (
                now,
                request_id[:SHORT_NAME],
                http_method,
                path[:SHORT_NAME],
                status,
                None if method is None else method[:SHORT_NAME],
                None if tool is None else tool[:SHORT_NAME],
                seconds,
                key,
            )
        )

    def _format(self, row: _Row) -> str:
        now, request_id, http_method, path, status, method, tool, seconds, key = row
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        # Written out rather than by dumping a dictionary (which took half the line's cost):
        # only what a client chose (its id, the path, the method and tool it named) needs
        # escaping; the rest is digits, hex and uvicorn's validated method token.
        return _LINE % (
            self._stamp,
            int((now - second) * 1000),
            _string(request_id.decode("ascii")),
            self._pid,
            _string(http_method),
            _string(path),
            status,
            "null" if method is None else _string(method),
            "null" if tool is None else _string(tool),
            seconds * 1000,
            "null" if key is None else '"' + self._hash(key) + '"',
        )

    def _hash(self, key: str) -> str:
        known = self._hashes.get(key)
        if known is None:
            known = hashlib.blake2b(key.encode("utf-8"), key=self._salt, digest_size=8).hexdigest()
            if len(self._hashes) >= _REMEMBERED_KEYS:
                self._hashes.clear()
            self._hashes[key] = known
        return known

    def flush(self) -> None:
        self._rows.flush()

    def _write(self, rows: list[_Row]) -> None:
        stream = self._stream or sys.stderr
        pieces = _pieces([self._line(row) for row in rows])
        try:
            descriptor = stream.fileno()
        except (AttributeError, OSError, ValueError):  # a stream with none (in memory)
            for piece in pieces:
                stream.write(piece.decode("ascii"))
            return
        stream.flush()  # what the stream holds of its own goes first, in order
        for piece in pieces:
            _write_whole(descriptor, piece)

    def close(self) -> None:
        self.flush()


def _pieces(lines: list[str]) -> list[bytes]:
    """`lines` (ASCII, each shorter than `PIPE_BUF`) as pieces of at most `PIPE_BUF` bytes,
    each ending at a line's end."""
    pieces: list[bytes] = []
    current: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > PIPE_BUF:
            pieces.append(("\n".join(current) + "\n").encode("ascii"))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        pieces.append(("\n".join(current) + "\n").encode("ascii"))
    return pieces


def _write_whole(descriptor: int, data: bytes) -> None:
    """`data` written in full: a pipe takes a piece of `PIPE_BUF` or less whole, but a file
    or a terminal may take part of it."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
