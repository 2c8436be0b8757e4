"""A server at the limits of its process: out of threads, out of address space.

A thread the server cannot start must cost at most the answer of the request it was for,
never the session. The limit is the kernel's own (`RLIMIT_AS`, what `prlimit --as` and
`ulimit -v` set): set before the server starts, as a user would, or lowered under a
running server to little more than it already uses, so that no new thread gets a stack.
"""

from __future__ import annotations

import resource
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR
from kinetis_mcp_docs.server.stdio.serve import WORKER_STACK_BYTES
from tests.server.conftest import SpawnServer
from tests.support.origin import DocsOrigin, page_path
from tests.support.stdio import ServerProcess, serve_argv

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/status").exists(), reason="reads the server's /proc/<pid>/status"
    ),
    pytest.mark.interpreter,  # what an interpreter does when memory or threads run out
]

INDEX = "kinetis://docs/index"
UNREADABLE = {"code": INTERNAL_ERROR, "message": f'Could not read "{INDEX}".'}
PAGE = "# Index\n"  # 8 bytes, as in the audit that found this
MIB = 1 << 20
WAIT = 60.0

# Runs its argv under an address-space limit: `prlimit --as=LIMIT -- ARGV`, in Python.
LIMITED = (
    "import os, resource, sys; limit = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); os.execv(sys.argv[2], sys.argv[2:])"
)


def _reads(server: ServerProcess, count: int) -> list[dict[str, Any]]:
    """`count` reads of the index sent at once, and their answers in request order."""
    for request_id in range(count):
        server.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "resources/read",
                "params": {"uri": INDEX},
            }
        )
    answers = [server.receive(timeout=WAIT) for _ in range(count)]
    return sorted(answers, key=lambda answer: int(answer["id"]))


def _page_or_unreadable(answer: dict[str, Any]) -> str:
    """`page` or `unreadable`; any other answer fails the test."""
    if "result" in answer:
        assert answer["result"]["contents"][0]["text"] == PAGE, answer
        return "page"
    assert answer["error"] == UNREADABLE, answer
    return "unreadable"


def _virtual_size(pid: int) -> int:
    """The address space process `pid` has mapped (`VmSize`), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmSize in /proc/{pid}/status")


def test_thirty_two_reads_in_flight_fit_in_384_mib_of_address_space(
    docs_origin: DocsOrigin, origin_env: dict[str, str], spawn_server: SpawnServer
) -> None:
    # glibc reserves 64 MiB of address space per malloc arena, up to 8 arenas a core: bound
    # them, as a user running under an address-space limit does, so this holds on any
    # machine. Each read runs on two threads: with 8 MiB stacks, 32 reads reserve 512 MiB.
    environ = origin_env | {"MALLOC_ARENA_MAX": "2"}
    argv = [sys.executable, "-c", LIMITED, str(384 * MIB), *serve_argv()]
    server = spawn_server(argv, environ)
    # The origin holds every read until all 32 are in: 32 in flight at once.
    docs_origin.serve(page_path("index"), body=PAGE.encode(), rendezvous=threading.Barrier(32))

    answers = _reads(server, 32)

    assert [_page_or_unreadable(answer) for answer in answers] == ["page"] * 32
    assert server.request("ping", timeout=WAIT)["result"] == {}
    assert server.finish(timeout=WAIT) == 0
    assert "Traceback" not in server.stderr


def test_reads_that_can_start_no_thread_each_cost_only_their_own_answer(
    docs_origin: DocsOrigin, origin_env: dict[str, str], spawn_server: SpawnServer
) -> None:
    # Each read is held a while at the origin, so the threads of the first are still busy
    # when the next ones ask for theirs.
    docs_origin.serve(page_path("index"), body=PAGE.encode(), delay=2.0)
    server = spawn_server(env=origin_env)
    # Everything a read needs exists: the HTTP client, a connection, the stderr writer.
    missing = server.request("resources/read", {"uri": "kinetis://docs/setup"}, timeout=WAIT)
    assert missing["error"]["code"] == INTERNAL_ERROR
    assert _page_or_unreadable(server.request("resources/read", {"uri": INDEX}, timeout=WAIT)) == (
        "page"
    )
    # From now on there is room for some memory, but not for another thread's stack.
    pid = server.process.pid
    limit = _virtual_size(pid) + WORKER_STACK_BYTES // 2
    resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))

    outcomes = [_page_or_unreadable(answer) for answer in _reads(server, 16)]

    assert "unreadable" in outcomes
    assert server.request("ping", timeout=WAIT)["result"] == {}
    assert server.finish(timeout=WAIT) == 0
    assert "no thread could be started for the request" in server.stderr
    assert "Traceback" not in server.stderr
