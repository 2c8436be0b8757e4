"""A small HTTP/1.1 load generator: N keep-alive connections, each sending one request after
another, timing each from its first byte written to its last byte read.

The client must not be what is measured: it runs on uvloop where installed, as a bare
`asyncio.Protocol`; the request is encoded once, and responses are only split by their
`Content-Length` (their status checked), never parsed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.wire import BenchError


@dataclass(frozen=True)
class Load:
    """What a run measured."""

    requests: int
    seconds: float
    latencies: list[float]

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def request_bytes(port: int, path: str, body: bytes, headers: Mapping[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Connection(asyncio.Protocol):
    """Sends `count` requests one after another; each answer's time goes into `latencies`."""

    def __init__(self, request: bytes, count: int, latencies: list[float]) -> None:
        self.request = request
        self.left = count
        self.latencies = latencies
        self.buffer = b""
        self.began = 0.0
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: Any = None  # uvloop's transports are not asyncio.Transport subclasses

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def send(self) -> None:
        assert self.transport is not None
        self.began = time.perf_counter()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buffer[: end + 2]  # each header line ends in \r\n
        start = head.lower().find(b"content-length:")
        length = int(head[start + 15 : head.find(b"\r\n", start)]) if start >= 0 else 0
        if len(self.buffer) < end + 4 + length:
            return
        if head[9:12] != b"200":
            self._fail(BenchError(f"HTTP {head[9:12].decode()} under load: {head!r}"))
            return
        self.latencies.append(time.perf_counter() - self.began)
        self.buffer = self.buffer[end + 4 + length :]
        self.left -= 1
        if self.left:
            self.send()
        elif not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self._fail(BenchError(f"the server closed a connection: {exc}"))

    def _fail(self, error: Exception) -> None:
        if not self.done.done():
            self.done.set_exception(error)


async def _run(port: int, request: bytes, connections: int, per_connection: int) -> Load:
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    opened = []
    for _ in range(connections):  # every connection open before the clock starts
        _, protocol = await loop.create_connection(
            lambda: _Connection(request, per_connection, latencies), "127.0.0.1", port
        )
        opened.append(protocol)
    began = time.perf_counter()
    for protocol in opened:
        protocol.send()
    try:
        await asyncio.wait_for(asyncio.gather(*(p.done for p in opened)), 600)
    finally:
        for protocol in opened:
            if protocol.transport is not None:
                protocol.transport.close()
    return Load(len(latencies), time.perf_counter() - began, latencies)


def load(port: int, request: bytes, *, connections: int, per_connection: int) -> Load:
    """Send `connections * per_connection` requests over `connections` connections at once."""
    try:
        import uvloop  # noqa: PLC0415 - the faster loop, where the http extra brought it
    except ImportError:
        return asyncio.run(_run(port, request, connections, per_connection))
    return uvloop.run(_run(port, request, connections, per_connection))
