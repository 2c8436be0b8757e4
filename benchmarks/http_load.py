"""A small HTTP/1.1 load generator: N keep-alive connections, each sending one request after
another, timing each from its first byte written to its last byte read.

The client must not be what is measured: the request is encoded once, responses are only
split by `Content-Length` (their status checked), and nothing is parsed as JSON.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass

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


async def _connection(  # noqa: PLR0917 - a private coroutine, one call site
    port: int,
    request: bytes,
    count: int,
    latencies: list[float],
    opened: asyncio.Queue[None],
    start: asyncio.Event,
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        opened.put_nowait(None)
        await start.wait()
        for _ in range(count):
            began = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = head[9:12]
            if status != b"200":
                raise BenchError(f"HTTP {status.decode()} from the server under load: {head!r}")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - began)
    finally:
        writer.close()
        await writer.wait_closed()


async def _run(port: int, request: bytes, connections: int, per_connection: int) -> Load:
    latencies: list[float] = []
    opened: asyncio.Queue[None] = asyncio.Queue()
    start = asyncio.Event()
    tasks = [
        asyncio.create_task(_connection(port, request, per_connection, latencies, opened, start))
        for _ in range(connections)
    ]
    for _ in range(connections):  # every connection open before the clock starts
        await asyncio.wait_for(opened.get(), 30)
    began = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return Load(len(latencies), time.perf_counter() - began, latencies)


def load(port: int, request: bytes, *, connections: int, per_connection: int) -> Load:
    """Send `connections * per_connection` requests over `connections` connections at once."""
    return asyncio.run(_run(port, request, connections, per_connection))
