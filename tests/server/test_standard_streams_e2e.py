"""A server started with a standard descriptor closed, as `2>&-` in a shell does.

Python gives such a stream the value None, and the next file the process opens takes the
free descriptor number: neither may reach the frames on stdout or stop the server.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence

import pytest

from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR
from tests.server.conftest import SpawnServer
from tests.support.origin import DocsOrigin
from tests.support.stdio import INITIALIZE_PARAMS, assert_only_frames, module_argv, serve_argv

# Descriptors, and how an interpreter sets up its standard streams.
pytestmark = pytest.mark.interpreter

# Runs its argv with the descriptors listed first (comma-separated) closed.
WITH_CLOSED = (
    "import os, sys; [os.close(int(fd)) for fd in sys.argv[1].split(',')]; "
    "os.execv(sys.argv[2], sys.argv[2:])"
)
ENTRIES = [pytest.param(module_argv, id="python -m"), pytest.param(serve_argv, id="serve")]
WAIT = 30.0


def with_closed(descriptors: str, argv: Sequence[str]) -> list[str]:
    """`argv`, started with `descriptors` ("2", "0,2") closed."""
    return [sys.executable, "-c", WITH_CLOSED, descriptors, *argv]


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_server_started_with_stderr_closed_answers_with_frames_only(
    docs_origin: DocsOrigin,
    origin_env: dict[str, str],
    spawn_server: SpawnServer,
    entry: Callable[[], list[str]],
) -> None:
    docs_origin.serve_page("index", "# Index\n")
    server = spawn_server(with_closed("2", entry()), origin_env)

    initialize = server.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
    assert initialize["result"]["serverInfo"]["name"] == "kinetis-mcp-docs"
    read = server.request("resources/read", {"uri": "kinetis://docs/index"}, timeout=WAIT)
    assert read["result"]["contents"][0]["text"] == "# Index\n"
    # A page that cannot be read says why on stderr: here, on nothing.
    missing = server.request("resources/read", {"uri": "kinetis://docs/setup"}, timeout=WAIT)
    assert missing["error"]["code"] == INTERNAL_ERROR
    assert server.finish(timeout=WAIT) == 0
    assert_only_frames(server.lines)
    assert len(server.lines) == 3


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_server_started_with_stdin_and_stderr_closed_ends_at_once_as_at_end_of_input(
    spawn_server: SpawnServer, entry: Callable[[], list[str]]
) -> None:
    server = spawn_server(with_closed("0,2", entry()))

    assert server.wait_for_exit(timeout=WAIT) == 0
    assert server.lines == []


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_server_started_with_stdout_closed_exits_one_saying_so_in_one_line(
    entry: Callable[[], list[str]],
) -> None:
    assert_refused_for_a_closed_stdout(entry())


def assert_refused_for_a_closed_stdout(
    argv: Sequence[str], env: Mapping[str, str] | None = None
) -> None:
    """`argv` started with stdout closed exits 1, saying why in one line on stderr."""
    completed = subprocess.run(
        with_closed("1", argv),
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=WAIT,
        check=False,
    )

    assert completed.returncode == 1
    assert completed.stderr.decode().splitlines() == [
        "kinetis-docs: stdout is closed, so no answer could reach the client; exiting."
    ]
