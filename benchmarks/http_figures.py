"""The HTTP route's figures, beside the MCP SDK's own stateless HTTP server (the peer).

Both serve `search_docs` and `fetch_page` over the same tree of 1,000 pages of 20 KB
(`http_tree`), each on uvicorn with one worker, on loopback. The load generator
(`http_load`) keeps 32 connections busy; both servers receive byte-identical 2026-07-28
requests (headers and `_meta` envelope), and the two are measured in alternation.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from tests.support.http import HttpServer, clean_environ, serve_http_argv
from tests.support.processes import cpu_seconds, peak_rss_kib

from benchmarks import http_tree
from benchmarks.http_load import Load, load, request_bytes
from benchmarks.http_peer import load as peer_pages
from benchmarks.http_peer import plain_search
from benchmarks.report import Row, X, summary, times
from benchmarks.stage import PROJECT_ROOT
from benchmarks.wire import BenchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from benchmarks.bench import Bench
    from kinetis_mcp_docs.server.tools.base import Toolset

CONNECTIONS = 32
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SEARCH_QUERY_KIND = "two words"


def _tree(bench: Bench) -> tuple[Path, int]:
    root = bench.stage.scratch / "http-tree"
    if not root.is_dir():
        size = http_tree.write_tree(root)
        (bench.stage.scratch / "http-tree.size").write_text(str(size))
    return root, int((bench.stage.scratch / "http-tree.size").read_text())


def _request(port: int, method: str, params: Mapping[str, object], name: str | None) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": ENVELOPE}},
        separators=(",", ":"),
    ).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return request_bytes(port, "/api/mcp", body, headers)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchError(f"no VmRSS for process {pid}")


def _servers(root: Path) -> dict[str, HttpServer]:
    env = clean_environ()
    ours = HttpServer(
        serve_http_argv(
            "--docs-dir", os.fspath(root), "--rate-limit", "1000000000", "--no-access-log"
        ),
        env,
    )
    try:
        peer_argv = [sys.executable, os.fspath(PROJECT_ROOT / "benchmarks" / "http_peer.py")]
        peer = HttpServer([*peer_argv, os.fspath(root)], env)
    except BaseException:
        ours.stop()
        raise
    return {"ours": ours, "peer": peer}


def http_route(bench: Bench) -> list[Row]:
    """Requests per second and latency at 32 connections, and the memory the tree takes."""
    root, text_bytes = _tree(bench)
    quick = bench.settings.repeats < 15
    rounds = 1 if quick else 3
    per_connection = {"tools/list": 20 if quick else 60, "search_docs": 5 if quick else 15}
    query = http_tree.queries()[SEARCH_QUERY_KIND]
    servers = _servers(root)
    loads: dict[str, dict[str, list[Load]]] = {name: {} for name in servers}
    memory: dict[str, dict[str, float]] = {}
    cpu_per_request: dict[tuple[str, str], list[float]] = {}
    try:
        for name, server in servers.items():
            before = _rss_kib(server.process.pid)
            result = server.call_tool("search_docs", {"query": query})  # builds our index
            if result.get("isError"):
                raise BenchError(f"{name}: search_docs failed: {result}")
            memory[name] = {
                "rss_before_mib": before / 1024,
                "rss_after_mib": _rss_kib(server.process.pid) / 1024,
                "peak_mib": peak_rss_kib(server.process.pid) / 1024,
            }
        calls = {
            "tools/list": ("tools/list", {}, None),
            "search_docs": (
                "tools/call",
                {"name": "search_docs", "arguments": {"query": query}},
                "search_docs",
            ),
        }
        for figure, (method, params, tool) in calls.items():
            for _ in range(rounds):
                for name, server in servers.items():
                    request = _request(server.port, method, params, tool)
                    load(server.port, request, connections=CONNECTIONS, per_connection=2)  # warm
                    cpu = cpu_seconds(server.process.pid)
                    found = load(
                        server.port,
                        request,
                        connections=CONNECTIONS,
                        per_connection=per_connection[figure],
                    )
                    used = cpu_seconds(server.process.pid) - cpu
                    loads[name].setdefault(figure, []).append(found)
                    cpu_per_request.setdefault((name, figure), []).append(used / found.requests)
    finally:
        for server in servers.values():
            server.stop()
    rows = []
    for figure in ("tools/list", "search_docs"):
        best = {name: max(loads[name][figure], key=lambda run: run.per_second) for name in loads}
        ours, peer = best["ours"], best["peer"]
        ratio = ours.per_second / peer.per_second
        what = f"`{figure}`" if figure == "tools/list" else f"`search_docs` ({SEARCH_QUERY_KIND})"
        rows.append(
            Row(
                f"HTTP {what} at {CONNECTIONS} connections: req/s (p50 / p99)",
                f"{ours.per_second:,.0f}/s ({_ms(ours.percentile(0.5))} / "
                f"{_ms(ours.percentile(0.99))})",
                f"{peer.per_second:,.0f}/s ({_ms(peer.percentile(0.5))} / "
                f"{_ms(peer.percentile(0.99))})",
                times(ratio),
                f"≥ 3{X}",
                ratio >= 3,
                data={
                    name: {
                        "per_second": [run.per_second for run in loads[name][figure]],
                        "latency_s": summary(best[name].latencies),
                        "server_cpu_s_per_request": cpu_per_request[name, figure],
                    }
                    for name in loads
                },
                note=(
                    "server CPU per request (median of rounds): ours "
                    f"{statistics.median(cpu_per_request['ours', figure]) * 1e6:.0f} µs, peer "
                    f"{statistics.median(cpu_per_request['peer', figure]) * 1e6:.0f} µs"
                ),
            )
        )
    rows[0].note += (
        f"; one uvicorn worker each, loopback; {CONNECTIONS} keep-alive connections each "
        "sending one request after another, byte-identical 2026-07-28 requests to both, no "
        "access log on either (ours: `--no-access-log`; the rate limit still counted); best "
        f"of {rounds} alternating rounds. The peer is `benchmarks/http_peer.py`: the SDK's "
        "`MCPServer` with its stateless Streamable HTTP app in JSON mode."
    )
    growth = memory["ours"]["rss_after_mib"] - memory["ours"]["rss_before_mib"]
    text_mib = text_bytes / (1024 * 1024)
    peer_growth = memory["peer"]["rss_after_mib"] - memory["peer"]["rss_before_mib"]
    rows.append(
        Row(
            f"RSS for the tree ({text_mib:.1f} MiB of text, {http_tree.PAGES:,} pages)",
            f"+{growth:.1f} MiB ({growth / text_mib:.1f}{X} text)",
            f"{memory['peer']['rss_after_mib']:.1f} MiB in all",
            "—",
            f"≤ 3{X} text",
            growth <= 3 * text_mib,
            data={"ours": memory["ours"], "peer": memory["peer"], "text_bytes": text_bytes},
            note=(
                "ours: VmRSS growth from before the first search to after it (the index built "
                f"over the tree); the process took {memory['ours']['rss_after_mib']:.1f} MiB in "
                "all. The peer reads the tree at start, so its growth across the first search "
                f"(+{peer_growth:.1f} MiB) says nothing; its total is shown."
            ),
        )
    )
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def search_in_process(bench: Bench) -> list[Row]:
    """`search_docs` over the tree in this process: the tool call, the tree check included."""
    from kinetis_mcp_docs.server.application import DocsApplication  # noqa: PLC0415

    root, _ = _tree(bench)
    application = DocsApplication(pages_root=os.fspath(root))
    tools = application.site_tools()
    try:
        # The worst admissible query is searched for, not built, in `search_cost`.
        rows = _ordinary_searches(bench, tools, root)
    finally:
        application.close()
    return rows


def _ordinary_searches(bench: Bench, tools: Toolset, root: Path) -> list[Row]:
    repeats = max(5, bench.settings.repeats)
    kinds = http_tree.queries()
    ours: dict[str, list[float]] = {kind: [] for kind in kinds}
    plain: dict[str, list[float]] = {kind: [] for kind in kinds}
    pages = peer_pages(root)
    tools.call("search_docs", {"query": "warm"})  # the index is built here
    for _ in range(repeats):
        for kind, query in kinds.items():
            began = time.perf_counter()
            tools.call("search_docs", {"query": query})
            ours[kind].append(time.perf_counter() - began)
            began = time.perf_counter()
            plain_search(pages, query, 5)
            plain[kind].append(time.perf_counter() - began)
    every = [sample for samples in ours.values() for sample in samples]
    every_plain = [sample for samples in plain.values() for sample in samples]
    p50 = statistics.median(every)
    per_kind = ", ".join(f"{kind} {_ms(statistics.median(ours[kind]))}" for kind in kinds)
    return [
        Row(
            f"`search_docs` over {http_tree.PAGES:,} pages of 20 KB, in-process (p50)",
            _ms(p50),
            _ms(statistics.median(every_plain)),
            f"{times(statistics.median(every_plain) / p50)} faster",
            "≤ 5 ms",
            p50 <= 0.005,
            data={
                "ours_s": {kind: summary(values) for kind, values in ours.items()},
                "plain_scan_s": {kind: summary(values) for kind, values in plain.items()},
            },
            note=(
                "the tool call through `DocsApplication.site_tools()`, each including the check "
                "that makes a changed file visible (inotify here; see docs/http.md); median of "
                f"{repeats} rounds of five queries ({per_kind}). The peer column is the peer's "
                "plain scan of the same pages in memory (no tree check)."
            ),
        )
    ]
