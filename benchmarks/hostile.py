"""Figures under hostile conditions: compression bombs from the origin, and a client that
stops reading stdout.

The bombs: 2 GiB of zeros gzipped once (2.0 MiB on the wire) or twice (3.4 KiB). They
are run against this project only: the peer decodes with httpx, which inflates a whole
chunk at once, so each of its reads would take gigabytes of a machine other work shares
(an adversarial review measured 2,077 MiB for one stacked bomb against this server,
before it decoded bodies itself).
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from tests.support.bombs import MIB, gzip_bomb, stacked_gzip_bomb
from tests.support.origin import page_path
from tests.support.processes import peak_rss_kib

from benchmarks.bench import Bench
from benchmarks.figures import READ_DOC, restore_page
from benchmarks.report import Row
from benchmarks.wire import INITIALIZE, INITIALIZED, BenchError, ServerProcess, request, tool_call

BOMB_DECODED = 2048 * MIB
BOMB_BUDGET_MIB = 16.0
IN_FLIGHT = 32
STALL_SECONDS = 10.0
"""The server's documented time a frame write may go without progress."""
STALL_TARGET_SECONDS = STALL_SECONDS + 1.0
PEER_STALL_LIMIT = 20.0
_SLUG = "troubleshooting"
_INTERNAL_ERROR = -32603


def _read_at_once(server: ServerProcess, first_id: int, count: int) -> list[dict[str, Any]]:
    """`count` reads of the page sent in one write; their answers."""
    arguments = {"uri": f"kinetis://docs/{_SLUG}"}
    before = server.received
    server.send(b"".join(tool_call(first_id + n, READ_DOC, arguments) for n in range(count)))
    server.wait_for(before + count)
    return server.responses(before)


def _bomb_growth(bench: Bench, content_encoding: str, bomb: bytes, count: int) -> dict[str, Any]:
    """Peak RSS growth of a fresh server reading `count` bombs at once.

    The origin holds each answer until all `count` requests are in, so they are decoded
    together. Before, the server read the real page `count` times at once, twice: the
    threads and connections for `count` reads exist already, and only the bombs' cost
    is measured.
    """
    origin = bench.stage.origin
    with ServerProcess(bench.ours, bench.server_env()) as server:
        server.initialize()
        for round_ in range(2):
            restore_page(bench, _SLUG, rendezvous=threading.Barrier(count))
            _read_at_once(server, 100 * (round_ + 1), count)
        before = peak_rss_kib(server.pid)
        origin.serve(
            page_path(_SLUG),
            body=bomb,
            content_encoding=content_encoding,
            rendezvous=threading.Barrier(count),
        )
        answers = _read_at_once(server, 1000, count)
        after = peak_rss_kib(server.pid)
        refused = sum(answer.get("error", {}).get("code") == _INTERNAL_ERROR for answer in answers)
        said = server.stderr_tail()
    if refused != count or "a compression bomb" not in said:
        raise BenchError(f"{count - refused} of {count} bombs were not refused; {said}")
    return {"before_kib": before, "after_kib": after, "growth_mib": (after - before) / 1024}


def bombs(bench: Bench) -> list[Row]:
    """Peak RSS growth under 2 GiB bombs, one read and 32 at once."""
    shapes = [
        ("gzip", "gzipped once", gzip_bomb(BOMB_DECODED)),
        ("gzip, gzip", "gzipped twice", stacked_gzip_bomb(BOMB_DECODED)),
    ]
    rows = []
    try:
        for count in (1, IN_FLIGHT):
            for content_encoding, described, bomb in shapes:
                grown = _bomb_growth(bench, content_encoding, bomb, count)
                reads = "one read" if count == 1 else f"{count} reads at once"
                rows.append(
                    Row(
                        f"2 GiB bomb {described} ({_size(len(bomb))}), {reads}: peak RSS growth",
                        f"{grown['growth_mib']:.1f} MiB",
                        "not run",
                        "—",
                        f"≤ {BOMB_BUDGET_MIB:g} MiB",
                        grown["growth_mib"] <= BOMB_BUDGET_MIB,
                        data={"content_encoding": content_encoding, "reads": count, **grown},
                    )
                )
    finally:
        restore_page(bench, _SLUG)
    rows[-1].note = (
        "VmHWM from /proc before and after the bombs, after two rounds of as many reads of "
        "the real page at once. Each answer is -32603 with 'a compression bomb' on stderr. "
        "The peer is not run: httpx inflates a whole chunk at once (2,077 MiB "
        "for one stacked bomb)."
    )
    return rows


def _unread_stdout_exit(argv: Sequence[str], env: dict[str, str], limit: float) -> dict[str, Any]:
    """Seconds from a burst of requests whose answers overflow a stdout nobody reads to the
    server's exit; None if it was still running after `limit`."""
    answers = b"".join(request(n + 1, "tools/list") for n in range(400))  # ~800 KB of answers
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
        )
        assert process.stdin is not None
        try:
            process.stdin.write(INITIALIZE + INITIALIZED + answers)
            process.stdin.flush()
            start = time.perf_counter()
            try:
                code: int | None = process.wait(limit)
                elapsed: float | None = time.perf_counter() - start
            except subprocess.TimeoutExpired:
                code = elapsed = None
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(limit)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
        stderr.seek(0)
        said = stderr.read().decode("utf-8", "replace").strip()
    return {"exit_s": elapsed, "code": code, "stderr": said[-500:]}


def stalled_reader(bench: Bench) -> list[Row]:
    """A client that stops reading stdout: how long until the server gives up and exits."""
    ours = _unread_stdout_exit(bench.ours, bench.server_env(), STALL_TARGET_SECONDS + 30)
    peer = _unread_stdout_exit(bench.peer, bench.server_env(), PEER_STALL_LIMIT)
    if ours["exit_s"] is None or ours["code"] != 1 or "no progress" not in ours["stderr"]:
        raise BenchError(f"ours did not exit 1 with its message: {ours}")
    peer_cell = (
        f"still running after {PEER_STALL_LIMIT:g} s"
        if peer["exit_s"] is None
        else f"{peer['exit_s']:.1f} s (exit {peer['code']})"
    )
    return [
        Row(
            "a client stops reading stdout: the server exits after",
            f"{ours['exit_s']:.1f} s (exit 1)",
            peer_cell,
            "—",
            f"≤ {STALL_TARGET_SECONDS:g} s",
            ours["exit_s"] <= STALL_TARGET_SECONDS,
            data={"ours": ours, "peer": peer},
            note=(
                "From writing 400 tools/list requests (about 800 KB of answers) to a server "
                "whose stdout is never read, with stdin left open, to its exit; ours says "
                f"'{ours['stderr']}'."
            ),
        )
    ]


def _size(count: int) -> str:
    return f"{count / MIB:.1f} MiB" if count >= MIB else f"{count / 1024:.1f} KiB"
