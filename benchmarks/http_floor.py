"""The route against the floor: requests per second from a C load generator (`wrk`).

`http_route` measures the route beside the MCP SDK's server with a Python load generator,
which at these rates measures itself as much as the servers. Here `wrk` (32 connections,
one thread) keeps one uvicorn worker busy, each pinned to a core of its own with `taskset`
where there are two, and the same uvicorn runs a bare ASGI application (`bare_asgi`) as
the floor: what any route on it costs at the least. The bare app and the route, for
`ping` and `tools/list`, with `--no-access-log` and with `--metrics --access-log json`,
are measured in turns, ten short rounds each, in the same run; each figure is the median
over the rounds of the route's req/s over the bare app's in the same round. A shared
machine's speed drifts by a fifth or more within a run: a round's two figures, taken
seconds apart, see the same machine, where the medians of each server's rounds need not.
Skipped, saying why, where `wrk` is not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.http import HttpServer, clean_environ, kinetis_docs

from benchmarks.http_figures import ENVELOPE
from benchmarks.report import Row, X, median, summary
from benchmarks.wire import BenchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from benchmarks.bench import Bench

CONNECTIONS = 32
TARGETS = {"quiet": 0.70, "observed": 0.55}
ROUTE_OPTIONS = {
    "quiet": ["--no-access-log"],
    "observed": ["--metrics", "--access-log", "json"],
}
METHODS = ("ping", "tools/list")
_RATE = re.compile(r"^Requests/sec:\s+([\d.]+)", re.MULTILINE)
_BAD = re.compile(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)")
SERVER_CORE, LOAD_CORE = "1", "0"


def _pinned(argv: list[str], core: str) -> list[str]:
    """`argv` on one core, where there are two and `taskset` to pin with."""
    taskset = shutil.which("taskset")
    if taskset is None or (os.cpu_count() or 1) < 2:
        return argv
    return [taskset, "-c", core, *argv]


def wrk_script(
    directory: Path, method: str, params: dict[str, object], name: str | None = None
) -> Path:
    """A wrk script sending one 2026-07-28 request, as `http_route` does: `method` with
    `params` (a tool's `name` and `arguments` for tools/call, with `name` in Mcp-Name)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": ENVELOPE}},
        separators=(",", ":"),
    )
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(body)}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    path = directory / f"wrk-{method.replace('/', '-')}{'-' + name if name else ''}.lua"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def pinned_server(argv: list[str]) -> list[str]:
    """`argv` on the server's core, away from wrk's (see `_pinned`)."""
    return _pinned(argv, SERVER_CORE)


def wrk_rate(wrk: str, url: str, script: Path, seconds: int) -> float:
    """Requests per second `wrk` (32 connections, one thread, on its own core) reached."""
    done = subprocess.run(
        _pinned(
            [wrk, "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "-s", str(script), url], LOAD_CORE
        ),
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=False,
    )
    found = _RATE.search(done.stdout)
    bad = _BAD.search(done.stdout)
    if done.returncode != 0 or found is None or bad is not None:
        raise BenchError(f"wrk against {url}: {done.stdout}{done.stderr}")
    return float(found.group(1))


def paired_ratio(route: list[float], bare: list[float]) -> float:
    """The median over rounds of the route's rate over the bare app's in the same round:
    each pair, taken seconds apart, sees the same machine (see above)."""
    return median([ours / floor for ours, floor in zip(route, bare, strict=True)])


def bare_server(logs: Path) -> HttpServer:
    """The bare ASGI app on uvicorn, pinned as the route is, its output to a file in
    `logs`: read through a pipe here, a busy server's log would take this process's CPU
    from wrk."""
    uvicorn = [
        sys.executable, "-m", "uvicorn", "benchmarks.bare_asgi:app", "--port", "0",
        "--no-access-log", "--http", "httptools", "--loop", "uvloop",
    ]  # fmt: skip
    return HttpServer(pinned_server(uvicorn), clean_environ(), output_file=logs / "bare.log")


def _servers(tree: Path, logs: Path) -> dict[str, HttpServer]:
    """The bare app and the route, each writing its output to a file in `logs`."""
    env = clean_environ()
    servers: dict[str, HttpServer] = {}
    try:
        servers["bare"] = bare_server(logs)
        for name, options in ROUTE_OPTIONS.items():
            argv = [
                kinetis_docs(), "serve", "--http", "--port", "0", "--docs-dir", str(tree),
                "--rate-limit", "1000000000", *options,
            ]  # fmt: skip
            servers[name] = HttpServer(pinned_server(argv), env, output_file=logs / f"{name}.log")
    except BaseException:
        for server in servers.values():
            server.stop()
        raise
    return servers


def http_floor(bench: Bench) -> list[Row]:
    wrk = shutil.which("wrk")
    if wrk is None:
        return [
            Row(
                f"http_floor {mode}",
                "skipped",
                "—",
                "—",
                f"≥ {target:.2f}{X} the bare app",
                met=None,
                note="skipped: wrk is not installed (Debian: apt-get install wrk)",
            )
            for mode, target in TARGETS.items()
        ]
    scratch = bench.stage.scratch
    tree = scratch / "floor-tree"
    tree.mkdir(exist_ok=True)
    (tree / "index.md").write_text("# Floor\n\nOne page.\n", encoding="utf-8")
    quick = bench.settings.repeats < 10
    rounds, seconds = (1, 2) if quick else (10, 3)
    servers = _servers(tree, scratch)
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        for method in METHODS:
            script = wrk_script(scratch, method, {})
            for server in servers.values():  # warm each: the first requests cost more
                wrk_rate(wrk, server.url, script, 1)
            for _ in range(rounds):
                for name, server in servers.items():
                    rate = wrk_rate(wrk, server.url, script, seconds)
                    samples.setdefault((name, method), []).append(rate)
    finally:
        for server in servers.values():
            server.stop()
    rows = []
    for mode, target in TARGETS.items():
        for method in METHODS:
            ours = summary(samples[mode, method])["median"]
            floor = summary(samples["bare", method])["median"]
            ratio = paired_ratio(samples[mode, method], samples["bare", method])
            label = " ".join(ROUTE_OPTIONS[mode])
            rows.append(
                Row(
                    f"http_floor {method} {label}",
                    f"{ours:,.0f} req/s",
                    f"{floor:,.0f} req/s bare",
                    f"{ratio:.2f}{X}",
                    f"≥ {target:.2f}{X}",
                    met=ratio >= target,
                    data={
                        "route": samples[mode, method],
                        "bare": samples["bare", method],
                        "connections": CONNECTIONS,
                        "seconds": seconds,
                    },
                )
            )
    return rows
