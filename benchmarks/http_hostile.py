"""The HTTP route under hostile requests: what the worst `limit`, request head and `url`
shapes cost against an ordinary request, and what a count of the rate limit costs with
100,000 other clients live against 10.

Every cost is the server's own CPU time (the scheduler's count for its threads, to the
nanosecond), per request, over real sockets to a real `kinetis-docs serve --http`; each
shape is measured in alternation with its baseline, in rounds, so the load of a shared
machine falls on both alike. A shape is compared with an ordinary request of its own
kind: a `search_docs` call, a `fetch_page` call, or a request on a new connection; a
shape of megabytes also with an ordinary request of the same size (the same call with the
bytes in an argument the tool ignores), since reading 2 MiB is a cost of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.http import (
    TIMEOUT,
    HttpServer,
    answer_until_closed,
    clean_environ,
    request_head,
    serve_http_argv,
    status_of,
)
from tests.support.processes import children_of, cpu_seconds, running_since

from benchmarks.http_load import load, request_bytes
from benchmarks.report import Row, X, summary, times
from benchmarks.stage import PROJECT_ROOT
from benchmarks.wire import BenchError
from kinetis_mcp_docs.server.http.app import MAX_BODY_BYTES
from kinetis_mcp_docs.server.http.limits.body_budget import DEFAULT_BODY_MEMORY_MIB
from kinetis_mcp_docs.server.http.limits.counter import SlidingWindowCounter
from kinetis_mcp_docs.server.http.uvicorn.connections import HEAD_FREE_READS, MIN_PIECE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from benchmarks.bench import Bench

SHAPE_TARGET = 3.0
# A head or a body in the smallest pieces the route reads: each read costs some 10 µs.
PIECES_TARGET = 10.0
KEYS_TARGET = 1.2
LIVE_KEYS = 100_000
FEW_KEYS = 10
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _server(*options: str) -> HttpServer:
    """A route over this repository's own pages, without the limit getting in the way."""
    docs = os.fspath(PROJECT_ROOT / "docs")
    argv = serve_http_argv("--docs-dir", docs, "--rate-limit", "1000000000", "--no-access-log")
    return HttpServer([*argv, *options], clean_environ())


def _call(name: str, arguments: dict[str, object], *, literal: str = "") -> bytes:
    """A `tools/call` body; `literal`: JSON text put in as the `limit` as it is."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        },
        separators=(",", ":"),
    )
    if literal:
        body = body.replace('"limit":"LITERAL"', f'"limit":{literal}')
    return body.encode("ascii")


def _search(limit: object, pad: int = 0, pad_text: str = "") -> bytes:
    # No query: the limit is read, then the call answers at once, so that what is measured
    # is reading the limit, not a search of this repository's pages (a few ms).
    arguments: dict[str, object] = {"query": "", "limit": limit}
    if pad or pad_text:
        arguments["ignored"] = pad_text or "a" * pad
    return _call("search_docs", arguments)


def _fetch(url: str, pad: int = 0) -> bytes:
    arguments: dict[str, object] = {"url": url}
    if pad:
        arguments["ignored"] = "a" * pad
    return _call("fetch_page", arguments)


Send = Callable[[HttpServer], None]


def _posting(body: bytes) -> Send:
    def send(server: HttpServer) -> None:
        response = server.post(body)
        if response.status_code not in (200, 400):
            raise BenchError(f"HTTP {response.status_code}: {response.text[:200]}")

    return send


# Between two writes meant to arrive as reads of their own: far longer than the route
# takes to read one on loopback, so that the kernel joins nothing.
APART_SECONDS = 0.002


def _raw(pieces: list[bytes], *statuses: int, apart: float = 0.0) -> Send:
    """One request on a new connection, written in `pieces`; its answer must be one of
    `statuses` (which the kernel's joining of small writes may decide). `apart`: seconds
    between two writes, so that each arrives as a read of its own, as a client on a slow
    link, or one sending so on purpose, makes them arrive."""

    def send(server: HttpServer) -> None:
        with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def write() -> None:
                try:
                    for piece in pieces:
                        sock.sendall(piece)
                        if apart:
                            time.sleep(apart)
                except OSError:
                    pass  # answered (431) and closed before all of it was sent

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            answer = answer_until_closed(sock)
            writer.join(TIMEOUT)
        if status_of(answer) not in statuses:
            raise BenchError(f"expected {statuses}, got {answer[:200]!r}")

    return send


@dataclass(frozen=True)
class Shape:
    label: str
    send: Send
    count: int
    baseline: str = ""  # the ordinary request it is held against (a baseline's label)
    small: str = ""  # for a baseline of megabytes: the ordinary request of a few bytes
    target: float = SHAPE_TARGET


SEARCH = '`search_docs`, `limit` "10", no query'
SEARCH_BIG = "`search_docs`, no query, 2 MB in an ignored argument"
SPACES_BIG = "the same, those 2 MB in an ignored argument"
UPLOAD = "a 2 MB body in one write, on a new connection"
FETCH = "`fetch_page` of a page"
FETCH_BIG = "`fetch_page` with 2 MB in an ignored argument"
HEAD = "`ping` on a new connection"


def _limit(literal: str) -> bytes:
    return _call("search_docs", {"query": "", "limit": "LITERAL"}, literal=literal)


def _ignoring(literal: str) -> bytes:
    """A `search_docs` call (no query) whose ignored argument is the JSON text `literal`."""
    body = _call("search_docs", {"query": "", "limit": "10", "ignored": "LITERAL"})
    return body.replace(b'"LITERAL"', literal.encode("ascii"))


def _in_writes(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def _costliest_head(head: bytes) -> list[bytes]:
    """`head` in the most reads the route admits: its free reads a byte each, then pieces
    of the smallest average size admitted."""
    free = [head[n : n + 1] for n in range(HEAD_FREE_READS - 1)]
    return [*free, *_in_writes(head[HEAD_FREE_READS - 1 :], MIN_PIECE_BYTES)]


def _raw_body(body: bytes, piece: int) -> list[bytes]:
    """A POST of `body` on a new connection, the body written `piece` bytes at a time."""
    head = request_head("Connection: close", length=len(body))
    return [head, *_in_writes(body, piece)]


def _chunked_body(body: bytes, chunk: int) -> list[bytes]:
    """A POST of `body` on a new connection in chunks of `chunk` bytes, 64 KiB a write."""
    head = request_head("Connection: close", "Transfer-Encoding: chunked")
    chunks = _in_writes(body, chunk)
    wire = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in chunks) + b"0\r\n\r\n"
    return [head, *_in_writes(wire, 64 * 1024)]


def _shapes(quick: bool) -> tuple[dict[str, Shape], list[Shape]]:
    big = 2_000_000  # within the 2 MiB body cap with the rest of the request
    few = 3 if quick else 10
    ordinary_head = [request_head("Connection: close", length=len(PING)) + PING]
    spaces = "\u3000" + " " * big + "7"
    upload = _search("10", big)
    baselines = {
        SEARCH: Shape(SEARCH, _posting(_search("10")), 200),
        SEARCH_BIG: Shape(SEARCH_BIG, _posting(_search("10", big)), few, small=SEARCH),
        SPACES_BIG: Shape(SPACES_BIG, _posting(_search("10", pad_text=spaces)), few, small=SEARCH),
        FETCH: Shape(FETCH, _posting(_fetch("/http")), 200),
        FETCH_BIG: Shape(FETCH_BIG, _posting(_fetch("/http", big)), few, small=FETCH),
        HEAD: Shape(HEAD, _raw(ordinary_head, 200), 200),
        UPLOAD: Shape(UPLOAD, _raw([*_raw_body(upload, len(upload))], 200), few, small=HEAD),
    }
    huge_head = [request_head("X-Junk: a")[:-4], *[b"a" * 16 * 1024] * 256]
    admitted = request_head("X-Junk: " + "a" * 31 * 1024, "Connection: close", length=4)
    pinged = request_head("X-Junk: " + "a" * 31 * 1024, "Connection: close", length=len(PING))
    many = request_head(
        *[f"X-Junk-{n}: {'a' * 90}" for n in range(300)], "Connection: close", length=4
    )
    crumbs = [bytes([byte]) for byte in request_head("Connection: close", length=4) + b"ping"]
    trailer = request_head("Connection: close", "Transfer-Encoding: chunked")
    trailer += b"%x\r\n%s\r\n0\r\nX-Pad: " % (len(PING), PING)
    huge_trailer = [trailer, *[b"a" * 16 * 1024] * 512]
    shapes = [
        Shape(
            f'`limit` "1"{X}16,000 + "x" (the audit\'s)',
            _posting(_search("1" * 16_000 + "x")),
            50,
            SEARCH,
        ),
        Shape(f'`limit` "1"{X}40,000 + "x"', _posting(_search("1" * 40_000 + "x")), 50, SEARCH),
        Shape(
            f'`limit` "1." + "1"{X}40,000 + "e"',
            _posting(_search("1." + "1" * 40_000 + "e")),
            50,
            SEARCH,
        ),
        Shape(
            "`limit` 10^309, an integer past every float",
            _posting(_limit("1" + "0" * 309)),
            50,
            SEARCH,
        ),
        Shape("`limit` an integer of 100,000 digits", _posting(_limit("9" * 100_000)), 50, SEARCH),
        Shape(
            f'`limit` "1"{X}2,000,000 + "x"', _posting(_search("1" * big + "x")), few, SEARCH_BIG
        ),
        Shape(
            f'`limit` "\\u3000" + " "{X}2,000,000 + "7"', _posting(_search(spaces)), few, SPACES_BIG
        ),
        Shape("a request head of 4 MiB in 16 KiB writes (431)", _raw(huge_head, 431), 10, HEAD),
        Shape(
            "a request head of 31 KiB in 130-byte writes, each a read (400 past its reads)",
            _raw([*_in_writes(admitted, 130), b"ping"], 400, apart=APART_SECONDS),
            10,
            HEAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "the costliest head admitted: 31 KiB in the most reads, each a read of its own",
            _raw([*_costliest_head(pinged), PING], 200, apart=APART_SECONDS),
            10,
            HEAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "a request head of 300 headers, 30 KiB (read)", _raw([many + b"ping"], 400), 50, HEAD
        ),
        Shape(
            "a request head a byte a write (400 past its free reads)", _raw(crumbs, 400), 20, HEAD
        ),
        Shape(
            "a 2 MB body in 1 KiB writes",
            _raw(_raw_body(upload, 1024), 200),
            few,
            UPLOAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "a 2 MB body in 16-byte writes (400 past its reads, or read)",
            _raw(_raw_body(upload, 16), 200, 400),
            few,
            UPLOAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "a 2 MB body in 1 KiB chunks (read)",
            _raw(_chunked_body(upload, 1024), 200),
            few,
            UPLOAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "a 2 MB body in one-byte chunks, 64 KiB a write (400 past its pieces)",
            _raw(_chunked_body(upload, 1), 400),
            few,
            UPLOAD,
            target=PIECES_TARGET,
        ),
        Shape(
            "a trailer field of 8 MiB in 16 KiB writes (413)",
            _raw(huge_trailer, 413),
            10,
            HEAD,
        ),
        Shape(
            "2 MB of nested arrays (-32600 before it is parsed)",
            _posting(_ignoring("[" + ",".join(["[" * 10 + "]" * 10] * (big // 21)) + "]")),
            few,
            SEARCH_BIG,
        ),
        Shape(
            "2 MB holding the most structure admitted (4,900 arrays and a string)",
            _posting(_ignoring("[" + ",".join(["[]"] * 4_900) + f',"{"a" * big}"]')),
            few,
            SEARCH_BIG,
        ),
        Shape(
            "`url` at the raw bound (49,152 characters, 4,096 decoded)",
            _posting(_fetch("%F0%9F%98%80" * 4096)),
            50,
            FETCH,
        ),
        Shape(
            "`url` of 2 MB (refused before it is decoded)",
            _posting(_fetch("%61" * 666_000)),
            few,
            FETCH_BIG,
        ),
    ]
    return baselines, shapes


def _cpu_per_request(server: HttpServer, shape: Shape) -> float:
    pid = server.process.pid
    before = cpu_seconds(pid)
    for _ in range(shape.count):
        shape.send(server)
    return (cpu_seconds(pid) - before) / shape.count


def hostile_shapes(bench: Bench) -> list[Row]:
    """Server CPU per request of the worst shapes, each against an ordinary request."""
    quick = bench.settings.repeats < 15
    rounds = 2 if quick else 5
    baselines, shapes = _shapes(quick)
    every = (*baselines.values(), *shapes)
    server = _server()
    costs: dict[str, list[float]] = {}
    try:
        for shape in every:  # warm: threads, the index, caches
            shape.send(server)
        for _ in range(rounds):
            for shape in every:
                costs.setdefault(shape.label, []).append(_cpu_per_request(server, shape))
    finally:
        server.stop()
    cost = {label: statistics.median(values) for label, values in costs.items()}
    rows = []
    for shape in shapes:
        baseline = baselines[shape.baseline]
        ratio = cost[shape.label] / cost[baseline.label]
        note = ""
        if baseline.small:
            small = cost[baseline.small]
            note = f"{times(cost[shape.label] / small)} a {baseline.small} ({_us(small)})"
        rows.append(
            Row(
                f"HTTP hostile: {shape.label}",
                _us(cost[shape.label]),
                f"{_us(cost[baseline.label])}: {baseline.label}",
                times(ratio),
                f"≤ {shape.target:g}{X}",
                ratio <= shape.target,
                data={
                    "ours_cpu_s": summary(costs[shape.label]),
                    "baseline": baseline.label,
                    "baseline_cpu_s": summary(costs[baseline.label]),
                },
                note=note,
            )
        )
    rows[0].note = (
        "server CPU per request (its threads' scheduler time), median of "
        f"{rounds} rounds, each shape in turn with every baseline, over real sockets to "
        "`serve --http --docs-dir docs`; the peer column is the ordinary request the shape "
        "is held against. The `limit` shapes come without a query, as does their baseline: "
        "the limit is read and the call answers at once, so the figure is the limit's cost, "
        "not a search's. Before issue 14 the audit's `limit` took 5-17 s with the process "
        "stopped, a 32 MiB head in pieces 2 s (and was served), a 2 MB `url` 0.3-0.6 s, a "
        "`url` at the raw bound 11 ms."
    )
    return rows


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds < 0.01 else f"{seconds * 1000:,.1f} ms"


# --- the rate limit's cost with many live keys ---------------------------------------------


def _forwarded_ping(port: int, address: str) -> bytes:
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    return request_bytes(port, "/api/mcp", PING, headers)


def _address(n: int) -> str:
    return f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


async def _fill(port: int, count: int, connections: int = 32) -> None:
    """One request from each of `count` addresses (through loopback, a trusted proxy)."""

    async def client(first: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for n in range(first, count, connections):
                writer.write(_forwarded_ping(port, _address(n)))
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    raise BenchError(f"filling the limit's keys: {head[:100]!r}")
                start = head.lower().find(b"content-length:")
                await reader.readexactly(int(head[start + 15 : head.find(b"\r\n", start)]))
        finally:
            writer.close()
            await writer.wait_closed()

    await asyncio.gather(*(client(first) for first in range(connections)))


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise BenchError(f"no VmRSS for process {pid}")


def _counter_us(keys: int, hits: int) -> float:
    """One count of the memory counter itself, with `keys` live, in µs (best of 5)."""
    counter = SlidingWindowCounter(1_000_000_000)
    names = [f"address:{_address(n)}" for n in range(keys)]
    for name in names:
        counter.hit(name)
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        for n in range(hits):
            counter.hit(names[n * 7919 % keys])
        best = min(best, (time.perf_counter() - began) / hits)
    return best * 1e6


def rate_limit_keys(bench: Bench) -> list[Row]:
    """Server CPU per request with 10 and with 100,000 live keys in the in-memory limit."""
    quick = bench.settings.repeats < 15
    live = 10_000 if quick else LIVE_KEYS
    rounds = 2 if quick else 5
    servers = {"few": _server(), "many": _server()}
    cpu: dict[str, list[float]] = {"few": [], "many": []}
    try:
        rss_before = _rss_mib(servers["many"].process.pid)
        began = time.monotonic()
        asyncio.run(_fill(servers["few"].port, FEW_KEYS))
        asyncio.run(_fill(servers["many"].port, live))
        filled_s = time.monotonic() - began
        rss_growth = _rss_mib(servers["many"].process.pid) - rss_before
        for _ in range(rounds):
            for name, server in servers.items():
                request = _forwarded_ping(server.port, "198.51.100.1")
                load(server.port, request, connections=32, per_connection=5)  # warm
                before = cpu_seconds(server.process.pid)
                done = load(server.port, request, connections=32, per_connection=100)
                cpu[name].append((cpu_seconds(server.process.pid) - before) / done.requests)
        measured_s = time.monotonic() - began
    finally:
        for server in servers.values():
            server.stop()
    if measured_s > 110:
        raise BenchError(f"keys may have expired: measured {measured_s:.0f} s after the first")
    few, many = statistics.median(cpu["few"]), statistics.median(cpu["many"])
    ratio = many / few
    counter_few, counter_many = _counter_us(FEW_KEYS, 100_000), _counter_us(live, 100_000)
    return [
        Row(
            f"HTTP rate limit in memory: CPU per request at {live:,} live keys",
            _us(many),
            f"{_us(few)} at {FEW_KEYS} keys",
            times(ratio),
            f"≤ {KEYS_TARGET:g}{X}",
            ratio <= KEYS_TARGET,
            data={
                "cpu_s_per_request": {name: summary(values) for name, values in cpu.items()},
                "live_keys": live,
                "fill_s": filled_s,
                "rss_growth_mib": rss_growth,
                "counter_us": {"few": counter_few, "many": counter_many},
            },
            note=(
                f"`ping` with one X-Forwarded-For address at 32 connections, on a route whose "
                f"limit holds {live:,} other live keys (one request from each, made "
                f"{filled_s:.0f} s before) against one holding {FEW_KEYS}; server CPU per "
                f"request, median of {rounds} alternating rounds. The keys took "
                f"+{rss_growth:.1f} MiB of RSS. The count itself: {counter_few:.2f} µs at "
                f"{FEW_KEYS} keys, {counter_many:.2f} µs at {live:,} (cache misses of a "
                "larger table). With `limits`' memory storage a request cost 4-5 ms at "
                "20,000 keys, 15-20x its cost at a few."
            ),
        )
    ]


# --- what many processes and stalled clients leave behind ------------------------------------

STALLED_UPLOADS = 200
STALLED_SHORT = 197_000  # each upload stops this many bytes short of what it declared
STALLED_TARGET = 1.25  # the worker's growth, against its budget for bodies
SUPERVISOR_TARGET_SECONDS = 5.0


def _stalled_upload(port: int, declared: int, held: list[socket.socket]) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    held.append(sock)
    with contextlib.suppress(OSError):  # refused (503) and closed before all was sent
        sock.sendall(request_head(length=declared) + b" " * (declared - STALLED_SHORT))


def _settled_rss(pid: int) -> float:
    """The process's RSS once it has stopped growing for a second (at most 60 s)."""
    deadline = time.monotonic() + 60
    last = _rss_mib(pid)
    while time.monotonic() < deadline:
        time.sleep(1)
        now = _rss_mib(pid)
        if now <= last + 0.5:
            return max(now, last)
        last = now
    raise BenchError("the server's memory did not settle within 60 s")


def stalled_bodies(bench: Bench) -> list[Row]:  # noqa: ARG001 - same signature as every figure
    """A worker's resident memory with 200 uploads stalled short of their declared 2 MiB,
    each from a connection of its own, against its budget for bodies held at once."""
    declared = MAX_BODY_BYTES
    server = _server()
    held: list[socket.socket] = []
    try:
        pid = server.process.pid
        server.rpc("ping")
        before = _settled_rss(pid)
        senders = [
            threading.Thread(target=_stalled_upload, args=(server.port, declared, held))
            for _ in range(STALLED_UPLOADS)
        ]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(TIMEOUT * 4)
        after = _settled_rss(pid)
        ping_ms = _ping_ms(server)
    finally:
        for sock in held:
            sock.close()
        server.stop()
    budget = DEFAULT_BODY_MEMORY_MIB
    ratio = (after - before) / budget
    return [
        Row(
            f"HTTP stalled bodies: a worker's growth with {STALLED_UPLOADS} uploads stalled",
            f"+{after - before:.0f} MiB",
            f"{budget} MiB budget",
            times(ratio),
            f"≤ {STALLED_TARGET:g}{X} the budget",
            ratio <= STALLED_TARGET,
            data={"rss_before_mib": before, "rss_after_mib": after, "ping_ms": ping_ms},
            note=(
                f"{STALLED_UPLOADS} connections, each declaring {declared:,} bytes and "
                f"sending all but {STALLED_SHORT:,}, then waiting; the worker's RSS once it "
                f"stopped growing, {before:.0f} MiB before. Those past the budget are 503 "
                f"before their body is read. A ping meanwhile: {ping_ms:.1f} ms. Without "
                f"the budget, the same took a worker from 48 to 412 MiB."
            ),
        )
    ]


def _ping_ms(server: HttpServer) -> float:
    began = time.perf_counter()
    if server.rpc("ping").status_code != 200:
        raise BenchError("a ping was not answered beside the stalled uploads")
    return (time.perf_counter() - began) * 1000


def _gone(pids: dict[int, str | None]) -> bool:
    return all(running_since(pid) != began for pid, began in pids.items())


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def supervisor_killed(bench: Bench) -> list[Row]:
    """Seconds from a SIGKILL of `serve --http --workers 2` to its last child gone and its
    port free to bind again."""
    rounds = 2 if bench.settings.repeats < 15 else 5
    seconds = []
    for _ in range(rounds):
        docs = os.fspath(PROJECT_ROOT / "docs")
        server = HttpServer(
            [*serve_http_argv("--docs-dir", docs, "--workers", "2")], clean_environ(), workers=2
        )
        children = {pid: running_since(pid) for pid in children_of(server.process.pid)}
        server.process.kill()
        began = time.monotonic()
        while not (_gone(children) and _port_free(server.port)):
            if time.monotonic() - began > 60:
                for pid in children:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                raise BenchError("the workers outlived their supervisor by 60 s")
            time.sleep(0.01)
        seconds.append(time.monotonic() - began)
        server.stop()
    worst = max(seconds)
    return [
        Row(
            "HTTP workers: their supervisor SIGKILLed, to the last child gone and the port free",
            f"{worst:.2f} s",
            "—",
            "—",
            f"≤ {SUPERVISOR_TARGET_SECONDS:g} s",
            worst <= SUPERVISOR_TARGET_SECONDS,
            data={"seconds": seconds},
            note=f"the worst of {rounds} runs of `serve --http --workers 2`, idle when killed",
        )
    ]
