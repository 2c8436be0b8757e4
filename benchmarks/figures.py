"""The figures of issue 5, each measured for this project and for the peer in the same run.

Every figure that compares is a ratio of two measurements taken side by side, interleaved
where they are repeated, so the load of a shared machine falls on both alike.
"""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.blackhole import UNRESOLVED_INDEX, BlackHoleUnavailable, black_hole_prefix
from tests.support.origin import CLIENT_GONE, page_path
from tests.support.processes import kill_processes_mentioning, peak_rss_kib

from benchmarks import pages
from benchmarks.bench import Bench
from benchmarks.report import Row, X, median, ms, summary, times
from benchmarks.stage import PROJECT_ROOT
from benchmarks.wire import (
    BenchError,
    ServerProcess,
    check_ids,
    request,
    run_to_exit,
    spawn_to_initialize,
    tool_call,
)
from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.installer.envs import compile_env
from kinetis_mcp_docs.installer.envs.links import current_environment, switch_to
from kinetis_mcp_docs.installer.envs.metadata import installed_version
from kinetis_mcp_docs.installer.install_dir.package_source import (
    PackageSource,
    read_source,
    record_source,
)
from kinetis_mcp_docs.installer.install_dir.throttle import (
    read_failure,
    read_last_check,
    record_check,
)
from kinetis_mcp_docs.installer.layout import InstallLayout

READ_DOC = "kinetis_read_doc"
SEARCH_DOC = "kinetis_search_doc"
MIB = pages.MIB


# --- 7. setup -----------------------------------------------------------------------------


def setup(bench: Bench) -> list[Row]:
    """`kinetis-docs setup` end to end, beside a plain `venv` + `pip install`."""
    plain: list[float] = []
    for _ in range(bench.settings.setups):
        try:
            elapsed, directory = bench.stage.run_setup()
        except BenchError as error:
            bench.install_error = str(error)
            raise
        bench.setup_times.append(elapsed)
        bench.install = directory
        plain.append(bench.stage.plain_install())
    ours, reference = median(bench.setup_times), median(plain)
    return [
        Row(
            "`setup` end to end (local wheelhouse, stub client CLI)",
            f"{ours:.2f} s",
            f"{reference:.2f} s",
            f"{times(reference / ours)} faster",
            "≤ 3 s",
            ours <= 3.0,
            data={"setup_s": summary(bench.setup_times), "plain_venv_pip_s": summary(plain)},
            note=(
                f"median of {len(plain)}. The peer column here is the yardstick the issue "
                "names, not an MCP server: `python -m venv` (with ensurepip) then `pip "
                "install kinetis-mcp-docs` from the same wheelhouse, which neither checks "
                "the server nor registers it."
            ),
        )
    ]


# --- 1. spawn -----------------------------------------------------------------------------


def _write_timestamp(install: Path, when: float) -> None:
    record_check(InstallLayout(install).last_update_check, when)


def start_argv(install: Path) -> list[str]:
    """The command `setup` registers with the client."""
    return InstallLayout(install).start_argv()


def spawn(bench: Bench) -> list[Row]:
    """Spawn to `initialize` answered, inside the update window: ours, bare Python, the peer."""
    env = bench.server_env()
    if bench.install is not None:
        _write_timestamp(bench.install, time.time())
        ours_argv = start_argv(bench.install)
        interpreter = ours_argv[0]
        what = "the registered `start` command of a real install"
    else:
        ours_argv = bench.ours
        interpreter = bench.python
        what = f"`python -I -m kinetis_mcp_docs.server` (no install: {bench.install_error})"
    server_only = [interpreter, "-I", "-m", "kinetis_mcp_docs.server"]
    bare = [interpreter, "-c", "pass"]
    runs: dict[str, list[float]] = {"ours": [], "server": [], "bare": [], "peer": []}
    measure: dict[str, Callable[[], float]] = {
        "ours": lambda: spawn_to_initialize(ours_argv, env),
        "server": lambda: spawn_to_initialize(server_only, env),
        "bare": lambda: run_to_exit(bare, env),
        "peer": lambda: spawn_to_initialize(bench.peer, env),
    }
    for name, run in measure.items():  # warm the page cache, not measured
        run()
        if name != "peer":
            run()
    order = list(measure)
    for index in range(bench.settings.spawns):
        for name in order[index % 4 :] + order[: index % 4]:
            runs[name].append(measure[name]())
    ours, bare_time, peer = median(runs["ours"]), median(runs["bare"]), median(runs["peer"])
    data = {name: summary(values) for name, values in runs.items()}
    return [
        Row(
            f"spawn → `initialize` answered (median of {bench.settings.spawns}), vs the peer",
            ms(ours),
            ms(peer),
            f"{times(peer / ours)} faster",
            f"≥ 8{X} faster",
            peer / ours >= 8,
            data=data,
            note=(
                f"ours is {what}, inside the update window; the peer is "
                "`python -I benchmarks/peer_server.py`. Without the update check, "
                f"`python -I -m kinetis_mcp_docs.server` takes {ms(median(runs['server']))}."
            ),
        ),
        Row(
            "spawn → `initialize` answered ÷ bare `python -c pass`",
            times(ours / bare_time),
            times(peer / bare_time),
            "—",
            f"≤ 4{X}",
            ours / bare_time <= 4,
            data={"bare_s": summary(runs["bare"])},
            note=f"bare `python -c pass` of the same interpreter: {ms(bare_time)} (median).",
        ),
    ]


# --- 8. update-day spawn ------------------------------------------------------------------


def _due_and_inside(
    bench: Bench,
    env: dict[str, str],
    after_due: Callable[[float], None],
    wrapper: Sequence[str] = (),
) -> tuple[list[float], list[float]]:
    """Spawn times of the install: due ones, each followed by one inside the window.

    Before each due spawn the timestamp is set three days back, and any failure the one
    before recorded is forgotten, so that each tries; `after_due` gets that time and
    raises `BenchError` if the spawn did not do what the figure assumes. `wrapper` runs
    both kinds of spawn (behind a silent name server, say).
    """
    install = bench.installed()
    argv = [*wrapper, *start_argv(install)]
    due: list[float] = []
    inside: list[float] = []
    for _ in range(bench.settings.update_spawns):
        stale = time.time() - 3 * 86_400
        _write_timestamp(install, stale)
        InstallLayout(install).last_update_failure.unlink(missing_ok=True)
        due.append(spawn_to_initialize(argv, env))
        after_due(stale)
        _write_timestamp(install, time.time())
        inside.append(spawn_to_initialize(argv, env))
    return due, inside


def _time_added(
    figure: str, due: list[float], inside: list[float], target: float, note: str
) -> Row:
    added = median(due) - median(inside)
    return Row(
        figure,
        f"+{ms(added)}",
        "—",
        "—",
        f"≤ {target:g} s added",
        added <= target,
        data={"due_s": summary(due), "inside_window_s": summary(inside)},
        note=(
            f"median of {len(due)} due spawns ({ms(median(due))}) minus the spawn inside the "
            f"window that followed each ({ms(median(inside))}); {note}"
        ),
    )


def update_day(bench: Bench) -> list[Row]:
    """A spawn whose update is due and finds nothing newer, against one inside the window."""
    layout = InstallLayout(bench.installed())
    current = os.path.realpath(layout.current)

    def recorded_and_kept(stale: float) -> None:
        recorded = read_last_check(layout.last_update_check)
        if recorded is None or recorded <= stale:
            raise BenchError("the update-day spawn did not record a successful check")
        if os.path.realpath(layout.current) != current:
            raise BenchError("the update-day spawn switched `current`: something was newer")

    due, inside = _due_and_inside(bench, bench.server_env(), recorded_and_kept)
    note = "pip resolves against the local wheelhouse. The peer has no updater."
    return [_time_added("update-day spawn, nothing newer: time added", due, inside, 1.0, note)]


@contextmanager
def _installed_from(layout: InstallLayout, environ: dict[str, str]) -> Iterator[None]:
    """The install as if setup had run with `environ`'s pip settings: updates look where
    those say (an index that is down, say), whatever the spawn's own environment holds."""
    recorded = read_source(layout)
    record_source(layout, PackageSource.of(environ))
    try:
        yield
    finally:
        if recorded is None:
            layout.package_source.unlink(missing_ok=True)
        else:
            record_source(layout, recorded)


def _failed(layout: InstallLayout, what: str) -> None:
    """That a due spawn tried and recorded its failure (so the next hour's starts skip it)."""
    if read_failure(layout.last_update_failure) is None:
        raise BenchError(f"a due spawn with the {what} recorded no failure")


@contextmanager
def _silent_index() -> Iterator[str]:
    """An index URL on 127.0.0.1 that accepts every connection and never answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)

    acceptor = threading.Thread(target=accept, name="silent index", daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/simple/"
    finally:
        stopping.set()
        listener.close()
        acceptor.join(timeout=10)
        for connection in held:
            connection.close()


def _refused_index() -> str:
    """An index URL on 127.0.0.1 where nothing listens: every connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple/"


def update_offline(bench: Bench) -> list[Row]:
    """A due spawn whose index is unreachable, against one inside the window.

    pip is pointed at the index alone (no wheelhouse), as a laptop offline or a dead
    mirror would leave it; the install records that index as where it comes from. Each due
    spawn must serve the installed version, record no check but its failure, and leave
    `current` as it was.
    """
    layout = InstallLayout(bench.installed())
    current = os.path.realpath(layout.current)
    base = {
        key: value
        for key, value in bench.server_env().items()
        if key not in {"PIP_NO_INDEX", "PIP_FIND_LINKS"}
    }
    local = {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    rows = []
    with _silent_index() as silent:
        cases = [
            ("index refusing connections", _refused_index(), 1.0),
            ("index accepting connections, never answering", silent, 3.0),
        ]
        for what, url, target in cases:

            def nothing_recorded(stale: float, what: str = what) -> None:
                if read_last_check(layout.last_update_check) != stale:
                    raise BenchError(f"a due spawn with the {what} recorded a check")
                if os.path.realpath(layout.current) != current:
                    raise BenchError(f"a due spawn with the {what} switched `current`")
                _failed(layout, what)

            env = base | local | {"PIP_INDEX_URL": url}
            with _installed_from(layout, env):
                due, inside = _due_and_inside(bench, env, nothing_recorded)
            note = (
                "each due spawn served the installed version and recorded its failure "
                "(forgotten before the next, which would otherwise skip the update for an "
                "hour)."
            )
            rows.append(
                _time_added(f"update-day spawn, {what}: time added", due, inside, target, note)
            )
    rows.append(_update_behind_a_black_hole(bench, base, current))
    return rows


def _update_behind_a_black_hole(bench: Bench, base: dict[str, str], current: str) -> Row:
    """A due spawn whose index is a name the (silent) name server never resolves."""
    figure = "update-day spawn, a name server that never answers: time added"
    layout = InstallLayout(bench.installed())
    try:
        hole = black_hole_prefix(bench.stage.scratch / "black-hole")
    except BlackHoleUnavailable as reason:
        return Row(figure, "not measured", "—", "—", "≤ 3 s added", None, note=str(reason))

    def nothing_recorded(stale: float) -> None:
        if read_last_check(layout.last_update_check) != stale:
            raise BenchError("a due spawn behind a silent name server recorded a check")
        if os.path.realpath(layout.current) != current:
            raise BenchError("a due spawn behind a silent name server switched `current`")
        _failed(layout, "silent name server")

    # No proxy: the spawn's network is its own, where pip must look the index's name up.
    env = {key: value for key, value in base.items() if "proxy" not in key.lower()}
    env["PIP_INDEX_URL"] = UNRESOLVED_INDEX
    with _installed_from(layout, env):
        due, inside = _due_and_inside(bench, env, nothing_recorded, wrapper=hole)
    note = (
        "both kinds of spawn run in network and mount namespaces of their own whose "
        "resolv.conf names a UDP socket that never answers (`unshare`); the check for a "
        "newer release is given up at 2.5 s, half the default deadline, and only the "
        "failure is recorded."
    )
    return _time_added(figure, due, inside, 3.0, note)


def _next_patch(version: str) -> str:
    major, minor, patch, *_ = (int(part) for part in version.split("."))
    return f"{major}.{minor}.{patch + 1}"


def update_day_newer(bench: Bench) -> list[Row]:
    """A due spawn that finds a newer release: resolve, build, check, switch, hand over."""
    figure = "update-day spawn, a newer release: spawn → `initialize` of the new version"
    install = bench.installed()
    layout = InstallLayout(install)
    original = current_environment(layout)
    if original is None:
        raise BenchError("the install has no current environment")
    argv, env = start_argv(install), bench.server_env()
    newer = _next_patch(__version__)
    wheel = bench.stage.add_release(newer)
    took: list[float] = []
    try:
        for _ in range(bench.settings.update_spawns):
            _write_timestamp(install, time.time() - 3 * 86_400)
            took.append(spawn_to_initialize(argv, env))
            if installed_version(layout) != newer:
                raise BenchError(f"the update-day spawn did not install {newer}")
            # The new environment's detached byte-compile is stopped: it must not load the
            # next round.
            kill_processes_mentioning(os.fspath(install), timeout=120)
            switch_to(layout, original)
    finally:
        wheel.unlink()
        switch_to(layout, original)
    return [
        Row(
            figure,
            f"{median(took):.2f} s",
            "—",
            "—",
            "—",
            None,
            data={"due_s": summary(took)},
            note=(
                f"informative: median of {len(took)} due spawns from {__version__} with "
                f"{newer} in the local wheelhouse, each timed to the `initialize` answer of "
                f"{newer}'s server; `current` is set back to {__version__} between rounds. The "
                "update deadline (5 s by default) bounds it; downloads add to it."
            ),
        )
    ]


def _compile_cpu(argv: list[str], target: Path) -> float:
    """CPU seconds (its own and its children's) of one byte-compile of `target`, from none."""
    for cache in list(target.rglob("__pycache__")):
        shutil.rmtree(cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, timeout=300, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def update_compile(bench: Bench) -> list[Row]:
    """An update's byte-compile, which copies the bytecode of unchanged modules, beside
    compiling every module of the same environment (what it did before)."""
    layout = InstallLayout(bench.installed())
    installed = current_environment(layout)
    if installed is None:
        raise BenchError("the install has no current environment")
    (site_packages,) = installed.glob("lib/python3.*/site-packages")
    # What an update that changes nothing builds: the same files, written anew (new times).
    new = bench.stage.scratch / f"update-compile-{time.monotonic_ns()}"
    target = new / "lib" / site_packages.parent.name / "site-packages"
    shutil.copytree(
        site_packages,
        target,
        ignore=shutil.ignore_patterns("__pycache__"),
        copy_function=shutil.copyfile,
    )
    python = os.fspath(layout.python(installed))
    script = os.fspath(compile_env.__file__)
    reusing = [python, "-I", script, "--reuse", os.fspath(site_packages), os.fspath(new / "lib")]
    everything = [python, "-I", script, os.fspath(new / "lib")]
    reused: list[float] = []
    compiled: list[float] = []
    try:
        for _ in range(bench.settings.update_spawns):
            reused.append(_compile_cpu(reusing, target))
            compiled.append(_compile_cpu(everything, target))
    finally:
        shutil.rmtree(new, ignore_errors=True)
    ours, reference = median(reused), median(compiled)
    ratio = ours / reference
    return [
        Row(
            "update's byte-compile, nothing changed: CPU, reusing bytecode vs compiling all",
            f"{ours:.2f} s",
            f"{reference:.2f} s",
            f"{ratio:.2f}{X}",
            f"≤ 0.5{X}",
            ratio <= 0.5,
            data={"reusing_cpu_s": summary(reused), "compiling_all_cpu_s": summary(compiled)},
            note=(
                f"median of {len(reused)} alternating rounds over a copy of the installed "
                "environment's site-packages (new file times, no bytecode), as an update that "
                "finds nothing newer to install leaves it; CPU of the compile process."
            ),
        )
    ]


# --- 2. requests per second ---------------------------------------------------------------


def _rate(server: ServerProcess, method: str, count: int, first_id: int) -> float:
    """Requests per second for `count` pipelined requests of `method`."""
    blob = b"".join(request(first_id + index, method) for index in range(count))
    before = server.received
    start = time.perf_counter()
    server.send(blob)
    done = server.wait_for(before + count)
    check_ids(server.responses(before), range(first_id, first_id + count))
    return count / (done - start)


def throughput(bench: Bench) -> list[Row]:
    """Pipelined `ping`s, then `tools/list`s, over one stdio pipe."""
    rates: dict[str, dict[str, float]] = {}
    settings = bench.settings
    for name, argv in bench.servers():
        with ServerProcess(argv, bench.server_env()) as server:
            server.initialize()
            _rate(server, "ping", 200, 1_000_000)  # warm-up
            _rate(server, "tools/list", 20, 2_000_000)
            rates[name] = {
                "ping": _rate(server, "ping", settings.pings, 1),
                "tools/list": _rate(server, "tools/list", settings.lists, 100_000),
            }
    rows = []
    for method, count in (("ping", settings.pings), ("tools/list", settings.lists)):
        ours, peer = rates["ours"][method], rates["peer"][method]
        rows.append(
            Row(
                f"{count:,} pipelined `{method}` over one pipe",
                f"{ours:,.0f}/s",
                f"{peer:,.0f}/s",
                times(ours / peer),
                f"≥ 10{X}",
                ours / peer >= 10,
                data={"ours_per_s": ours, "peer_per_s": peer},
            )
        )
    return rows


# --- 3. concurrency -----------------------------------------------------------------------

_SLOW_SLUG = "tools"
_SMALL_SLUG = "index"


def _read(server: ServerProcess, slug: str, request_id: int) -> dict[str, Any]:
    arguments = {"uri": f"kinetis://docs/{slug}"}
    response = server.call(tool_call(request_id, READ_DOC, arguments))
    result = response.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        raise BenchError(f"{server.name}: reading {slug} failed: {str(response)[:300]}")
    return result


def concurrency(bench: Bench) -> list[Row]:
    """16 reads at once while the origin delays each answer: all done within twice one read."""
    origin = bench.stage.origin
    slow = (PROJECT_ROOT / "docs" / f"{_SLOW_SLUG}.md").read_bytes()
    origin.serve(page_path(_SLOW_SLUG), body=slow, delay=bench.settings.delay)
    burst = bench.settings.burst
    found: dict[str, dict[str, Any]] = {}
    try:
        for name, argv in bench.servers():
            with ServerProcess(argv, bench.server_env()) as server:
                server.initialize()
                _read(server, _SMALL_SLUG, 1)  # imports the HTTP client, opens a connection
                singles = []
                for index in range(3):
                    start = time.perf_counter()
                    _read(server, _SLOW_SLUG, 10 + index)
                    singles.append(time.perf_counter() - start)
                bursts = []
                for round_ in range(3):
                    first = 1000 * (round_ + 1)
                    blob = b"".join(
                        tool_call(first + i, READ_DOC, {"uri": f"kinetis://docs/{_SLOW_SLUG}"})
                        for i in range(burst)
                    )
                    before = server.received
                    start = time.perf_counter()
                    server.send(blob)
                    done = server.wait_for(before + burst)
                    check_ids(server.responses(before), range(first, first + burst))
                    bursts.append(done - start)
                found[name] = {"one_s": summary(singles), "burst_s": summary(bursts)}
    finally:
        restore_page(bench, _SLOW_SLUG)
    ours, peer = found["ours"], found["peer"]

    def factor(figures: dict[str, Any]) -> float:
        # The worst burst (the first opens its connections) against the typical single read.
        return float(figures["burst_s"]["max"]) / float(figures["one_s"]["median"])

    delay_ms = bench.settings.delay * 1000
    return [
        Row(
            f"{burst} `{READ_DOC}` at once, origin delaying each {delay_ms:.0f} ms",
            f"{factor(ours):.2f}{X} one read",
            f"{factor(peer):.2f}{X} one read",
            "—",
            f"≤ 2{X} one read",
            factor(ours) <= 2,
            data=found,
            note=(
                f"ours: all {burst} in {ms(ours['burst_s']['max'])}, one read "
                f"{ms(ours['one_s']['median'])}; peer: {ms(peer['burst_s']['max'])} and "
                f"{ms(peer['one_s']['median'])}. Worst of 3 bursts (the first opens "
                f"{burst - 1} new TLS connections through the proxy) over the median of "
                "3 single reads."
            ),
        )
    ]


def restore_page(bench: Bench, slug: str, *, rendezvous: threading.Barrier | None = None) -> None:
    """Serve this repository's page for `slug` again, as the stage first did (held at
    `rendezvous`, if given, until that many requests are in)."""
    page = (PROJECT_ROOT / "docs" / f"{slug}.md").read_bytes()
    bench.stage.origin.serve(page_path(slug), body=page, rendezvous=rendezvous)


# --- 4. connection reuse ------------------------------------------------------------------


def reuse(bench: Bench) -> list[Row]:
    """Sequential reads of one page over TLS: how many new handshakes the origin counts."""
    origin = bench.stage.origin
    counted: dict[str, dict[str, int]] = {}
    for name, argv in bench.servers():
        with ServerProcess(argv, bench.server_env()) as server:
            server.initialize()
            handshakes, tunnels = origin.handshakes, origin.proxy.connects
            for index in range(bench.settings.reads):
                _read(server, _SMALL_SLUG, index + 1)
            counted[name] = {
                "handshakes": origin.handshakes - handshakes,
                "tunnels": origin.proxy.connects - tunnels,
            }
    ours, peer = counted["ours"]["handshakes"], counted["peer"]["handshakes"]
    return [
        Row(
            f"{bench.settings.reads} sequential reads of one page: new TLS handshakes",
            str(ours),
            str(peer),
            "—",
            "= 1",
            ours == 1,
            data=counted,
        )
    ]


# --- 5. window and search on a large page -------------------------------------------------


class _Preloaded:
    """A page source whose fetch costs nothing: what remains is the server's own work."""

    def __init__(self, text: str) -> None:
        self.text = text

    def fetch(self, slug: str) -> str:  # noqa: ARG002 - every slug is the same page here
        return self.text

    def close(self) -> None:
        pass


def _in_process(text: str, repeats: int) -> dict[str, float]:
    """Median seconds per call, in this process, beyond the fetch, with the wire encoding."""
    from kinetis_mcp_docs.server.application import DocsApplication  # noqa: PLC0415
    from kinetis_mcp_docs.server.protocol.jsonrpc import result_message  # noqa: PLC0415

    application = DocsApplication(_Preloaded(text))
    uri = f"kinetis://docs/{_SLOW_SLUG}"
    last = pages.line_count(text)
    calls: dict[str, tuple[str, dict[str, object]]] = {
        # The last window of the page: its start is found by walking every line before it.
        "window": (READ_DOC, {"uri": uri, "startLine": max(1, last - 150)}),
        # A term on 40 lines spread through the page: the whole page is scanned.
        "search": (SEARCH_DOC, {"uri": uri, "query": pages.NEEDLE}),
    }
    found: dict[str, float] = {}
    for name, (tool, arguments) in calls.items():
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = application.call_tool(tool, arguments)
            result_message(1, result)
            samples.append(time.perf_counter() - start)
        if result.get("isError"):
            raise BenchError(f"{name} on a {len(text)} character page was refused: {result}")
        found[name] = median(samples)
    return found


def large_pages(bench: Bench) -> list[Row]:
    """Window and search on 1, 2 and 4 MiB pages, beyond the fetch; and over the wire."""
    sizes = (1, 2, 4)
    texts = {size: pages.synthetic_page(size * MIB) for size in sizes}
    timed = {size: _in_process(texts[size], bench.settings.repeats) for size in sizes}
    short = _in_process(pages.short_line_page(4 * MIB), bench.settings.repeats)
    rows = []
    for name in ("window", "search"):
        at = {size: timed[size][name] for size in sizes}
        worst = max(at[4], short[name])
        rows.append(
            Row(
                f"{name} on a 4 MiB page, beyond the fetch: prose / 2-byte lines",
                f"{ms(at[4])} / {ms(short[name])}",
                "—",
                "—",
                "≤ 20 ms",
                worst <= 0.020,
                data={
                    **{f"prose_{size}_MiB_s": at[size] for size in sizes},
                    "short_lines_4_MiB_s": short[name],
                },
            )
        )
        rows.append(
            Row(
                f"{name} on prose pages of 1 → 2 → 4 MiB",
                " → ".join(ms(at[size]) for size in sizes),
                "—",
                f"{at[2] / at[1]:.1f}{X}, {at[4] / at[1]:.1f}{X}",
                f"linear (≤ 3{X}, ≤ 6{X})",
                at[2] / at[1] <= 3 and at[4] / at[1] <= 6,
            )
        )
    rows[0].note = (
        "in-process: `DocsApplication.call_tool` over a page source that returns the page at "
        "no cost, plus the JSON-RPC encoding of the result: validation, the catalogue look-up, "
        "the window or search, the result document and its two encodings. Prose: lines of "
        "20-140 characters, one in five with non-ASCII text (52,000 lines in 4 MiB); 2-byte "
        "lines: two million of them. Window: the last 150 lines (every line before them is "
        "counted). Search: a term on 40 lines spread through the page (all of it is "
        f"scanned). Median of {bench.settings.repeats}. The peer runs the same functions, "
        "so it has no figure of its own here."
    )
    rows.append(_over_the_wire(bench, texts[4]))
    return rows


def _over_the_wire(bench: Bench, text: str) -> Row:
    """The same window through each server, fetch included (origin on loopback)."""
    origin = bench.stage.origin
    body = text.encode("utf-8")
    origin.serve(page_path(_SLOW_SLUG), body=body)
    last = pages.line_count(text)
    took: dict[str, list[float]] = {"ours": [], "peer": []}
    arguments = {"uri": f"kinetis://docs/{_SLOW_SLUG}", "startLine": max(1, last - 150)}
    try:
        env = bench.server_env()
        processes = {name: ServerProcess(argv, env) for name, argv in bench.servers()}
        try:
            for process in processes.values():
                process.initialize()
                _read(process, _SMALL_SLUG, 1)
            for index in range(5):
                for name, process in processes.items():
                    start = time.perf_counter()
                    response = process.call(tool_call(100 + index, READ_DOC, arguments))
                    took[name].append(time.perf_counter() - start)
                    if "result" not in response or response["result"].get("isError"):
                        raise BenchError(f"{name}: the 4 MiB window failed: {str(response)[:300]}")
        finally:
            for process in processes.values():
                process.close()
    finally:
        restore_page(bench, _SLOW_SLUG)
    ours, peer = median(took["ours"]), median(took["peer"])
    return Row(
        "window on a 4 MiB page over stdio, fetch included",
        ms(ours),
        ms(peer),
        f"{times(peer / ours)} faster",
        "—",
        None,
        data={name: summary(values) for name, values in took.items()},
        note=(
            "informative: one `tools/call` through each server, the 4 MiB page fetched from "
            "the loopback origin through the proxy each time (median of 5)."
        ),
    )


# --- 6. memory under an oversized body ----------------------------------------------------

_HUGE_SLUG = "troubleshooting"
HUGE_BYTES = 200 * MIB


def memory(bench: Bench) -> list[Row]:
    """The origin streams 200 MiB; the read is abandoned at 4 MiB; peak RSS growth."""
    origin = bench.stage.origin
    origin.serve(page_path(_HUGE_SLUG), generated_size=HUGE_BYTES)
    grown: dict[str, dict[str, Any]] = {}
    try:
        for name, argv in bench.servers():
            with ServerProcess(argv, bench.server_env()) as server:
                server.initialize()
                for warm in range(3):  # the HTTP client imported, a connection open, reads done
                    _read(server, _SMALL_SLUG, warm + 1)
                before = peak_rss_kib(server.pid)
                earlier = len(origin.requests_for(page_path(_HUGE_SLUG)))
                arguments = {"uri": f"kinetis://docs/{_HUGE_SLUG}"}
                response = server.call(tool_call(100, READ_DOC, arguments))
                after = peak_rss_kib(server.pid)
                error = response.get("error")
                if not isinstance(error, dict) or error.get("code") != -32603:
                    raise BenchError(f"{name}: the 200 MiB page was not refused: {response}")
                record = origin.requests_for(page_path(_HUGE_SLUG))[earlier]
                record.finished.wait(30)
                grown[name] = {
                    "before_kib": before,
                    "after_kib": after,
                    "growth_mib": (after - before) / 1024,
                    "origin_sent_mib": record.body_bytes_sent / MIB,
                    "client_left": record.outcome == CLIENT_GONE,
                }
    finally:
        restore_page(bench, _HUGE_SLUG)
    ours, peer = grown["ours"], grown["peer"]
    return [
        Row(
            "oversized body (200 MiB streamed): peak RSS growth",
            f"{ours['growth_mib']:.1f} MiB",
            f"{peer['growth_mib']:.1f} MiB",
            "—",
            "≤ 16 MiB",
            ours["growth_mib"] <= 16 and bool(ours["client_left"]),
            data=grown,
            note=(
                "VmHWM from /proc before and after the read, after three warm-up reads of a "
                f"small page. The origin had sent {ours['origin_sent_mib']:.1f} MiB (ours) and "
                f"{peer['origin_sent_mib']:.1f} MiB (peer) of 200 MiB when the client left; "
                "the rest of that is socket and proxy buffering, not the server's memory."
            ),
        )
    ]
