"""`python -m benchmarks.run`: every figure (speed, and hostile conditions), ours beside the peer.

Run from the project root, in an environment holding the project with its `test` extra and
`mcp` (the `bench` nox session builds one). Prints the table and writes it, with the raw
samples, as JSON (`.bench/results.json` by default).

    python -m benchmarks.run                 # everything (about 80 s on 2 cores)
    python -m benchmarks.run --quick         # fewer repetitions, a smoke run
    python -m benchmarks.run --only spawn,throughput
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from benchmarks import (
    contract,
    figures,
    hostile,
    http_figures,
    http_floor,
    http_hostile,
    search_figures,
)
from benchmarks.bench import Bench, Settings
from benchmarks.report import Row, X, failed_row, notes, table, write_json
from benchmarks.stage import PROJECT_ROOT, staged
from kinetis_mcp_docs import __version__

TARGETS = {
    "setup": "≤ 3 s",
    "spawn": f"≤ 4{X} bare, ≥ 8{X} faster than the peer",
    "throughput": f"≥ 10{X}",
    "concurrency": f"≤ 2{X} one read",
    "reuse": "= 1",
    "large_pages": "≤ 20 ms, linear",
    "memory": "≤ 16 MiB",
    "update_day": "≤ 1 s added",
    "update_offline": "≤ 1 s added refused, ≤ 3 s silent index or name server",
    "update_day_newer": "—",
    "update_compile": f"≤ 0.5{X} compiling all",
    "http_route": f"≥ 3{X} the peer's req/s; RSS ≤ 3{X} text",
    "http_search": "≤ 5 ms p50",
    "http_floor": (
        f"≥ {http_floor.TARGETS['quiet']:.2f}{X} the bare ASGI app, "
        f"≥ {http_floor.TARGETS['observed']:.2f}{X} with metrics and the JSON log"
    ),
    "bombs": f"≤ {hostile.BOMB_BUDGET_MIB:g} MiB",
    "stalled_reader": f"≤ {hostile.STALL_TARGET_SECONDS:g} s",
    "http_hostile": (
        f"≤ {http_hostile.SHAPE_TARGET:g}{X} an ordinary request "
        f"({http_hostile.PIECES_TARGET:g}{X} in pieces)"
    ),
    "http_rate_keys": f"≤ {http_hostile.KEYS_TARGET:g}{X} at 10 keys",
    "http_stalled_bodies": f"≤ {http_hostile.STALLED_TARGET:g}{X} the budget",
    "http_supervisor_killed": f"≤ {http_hostile.SUPERVISOR_TARGET_SECONDS:g} s",
    "search_quality": (
        "relevance on every tree: MRR@10 ≥ 0.80 and ≥ bm25s + 0.05, questions ≥ 0.70, "
        "errors Hit@1 ≥ 0.85, snippets ≥ 70%, agent p95 ≤ 32 KB"
    ),
    "search_cost": f"≤ 2 ms p50, ≤ 50 ms worst, ≤ 2 s build, RSS ≤ 3{X} text",
    "search_http": (
        f"≥ {search_figures.TARGET_PER_SECOND:,} req/s at a "
        f"{search_figures.FLOOR_WHEN_SET:,} req/s floor"
    ),
}
# The figures that measure the install the setup figure makes: setup runs before them.
NEED_THE_INSTALL = {"spawn", "update_day", "update_offline", "update_day_newer", "update_compile"}
# The one registry of figures, in the order a full run measures them.
FIGURES: tuple[tuple[str, Callable[[Bench], list[Row]]], ...] = (
    ("setup", figures.setup),
    ("spawn", figures.spawn),
    ("throughput", figures.throughput),
    ("concurrency", figures.concurrency),
    ("reuse", figures.reuse),
    ("large_pages", figures.large_pages),
    ("memory", figures.memory),
    ("update_day", figures.update_day),
    ("update_offline", figures.update_offline),
    ("update_day_newer", figures.update_day_newer),
    ("update_compile", figures.update_compile),
    ("http_route", http_figures.http_route),
    ("http_search", http_figures.search_in_process),
    ("bombs", hostile.bombs),
    ("stalled_reader", hostile.stalled_reader),
    ("http_floor", http_floor.http_floor),
    ("http_hostile", http_hostile.hostile_shapes),
    ("http_rate_keys", http_hostile.rate_limit_keys),
    ("http_stalled_bodies", http_hostile.stalled_bodies),
    ("http_supervisor_killed", http_hostile.supervisor_killed),
    ("search_quality", search_figures.search_quality),
    ("search_cost", search_figures.search_cost),
    ("search_http", search_figures.search_http),
)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions: a smoke run")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated figures to run, of: {', '.join(name for name, _ in FIGURES)}",
    )
    parser.add_argument(
        "--json", type=Path, default=PROJECT_ROOT / ".bench" / "results.json", help="JSON output"
    )
    return parser.parse_args(argv)


def _versions() -> dict[str, str]:
    names = ("kinetis-mcp-docs", "mcp", "httpx", "pydantic", "anyio")
    installed = {
        (distribution.metadata["Name"] or "").lower(): distribution.version
        for distribution in metadata.distributions()
    }
    return {name: installed.get(name, "not installed") for name in names}


def _machine() -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    options = _arguments(argv)
    settings = Settings.quick() if options.quick else Settings()
    chosen = [name for name in options.only.split(",") if name] or [name for name, _ in FIGURES]
    unknown = set(chosen) - {name for name, _ in FIGURES}
    if unknown:
        print(f"unknown figure(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if NEED_THE_INSTALL & set(chosen) and "setup" not in chosen:
        chosen.insert(0, "setup")

    started = time.monotonic()
    rows: list[Row] = []
    cache = PROJECT_ROOT / ".bench" / "cache" / "dependency-wheels"
    with (
        tempfile.TemporaryDirectory(prefix="kinetis-bench-") as scratch,
        staged(Path(scratch), cache) as stage,
    ):
        bench = Bench(stage, settings, sys.executable)
        for name, figure in FIGURES:
            if name not in chosen:
                continue
            print(f"bench: {name} ...", file=sys.stderr, flush=True)
            begun = time.monotonic()
            try:
                rows.extend(figure(bench))
            except Exception as error:  # one figure failing must not hide the others
                rows.append(failed_row(name, TARGETS[name], error))
            print(f"bench: {name} took {time.monotonic() - begun:.1f} s", file=sys.stderr)
        print("bench: contract probes ...", file=sys.stderr, flush=True)
        env = stage.environ()
        kept = {server: contract.probe(command, env) for server, command in bench.servers()}

    elapsed = time.monotonic() - started
    print()
    print(table(rows))
    print()
    print(notes(rows))
    print()
    print(_contract_table(kept))
    document = {
        "version": __version__,
        "machine": _machine(),
        "versions": _versions(),
        "quick": options.quick,
        "elapsed_s": elapsed,
        "settings": vars(settings),
        "table": table(rows),
        "contract": kept,
    }
    write_json(options.json, document, rows)
    print(f"\nwritten to {options.json} ({elapsed:.0f} s)")
    missed = [row.figure for row in rows if row.met is False]
    if missed:
        print(f"targets missed: {len(missed)}", file=sys.stderr)
    return 0


def _contract_table(kept: dict[str, dict[str, bool]]) -> str:
    lines = [
        "| contract point | ours | peer (MCP SDK) |",
        "| --- | --- | --- |",
    ]
    for point in kept["ours"]:
        cells = ["kept" if kept[server][point] else "not kept" for server in ("ours", "peer")]
        lines.append(f"| {point} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
