"""Where `serve --http` listens: its start-up line comes once connections are accepted, and
an address it cannot listen on is one line naming it and what to do, exit status 2."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.http.conftest import TREE
from tests.support.http import clean_environ, kinetis_docs, write_tree

TIMEOUT = 60.0
_SERVING = re.compile(r"^kinetis-docs: serving MCP at http://127\.0\.0\.1:(\d+)/api/mcp ")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "tree", TREE)


def _serve(tree: Path, *options: str) -> list[str]:
    return [kinetis_docs(), "serve", "--http", "--docs-dir", os.fspath(tree), *options]


@pytest.fixture
def served(tree: Path) -> Iterator[tuple[subprocess.Popen[bytes], queue.Queue[str]]]:
    """`serve --http --port 0` running, each line of its stderr put on a queue as it comes."""
    process = subprocess.Popen(
        _serve(tree, "--port", "0"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=clean_environ(),
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line.decode("utf-8", "replace"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield process, lines
    finally:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
        process.wait(TIMEOUT)
        reader.join(TIMEOUT)
        assert process.stderr is not None
        process.stderr.close()


def test_a_connection_made_once_the_start_up_line_is_out_is_accepted_and_answered(
    served: tuple[subprocess.Popen[bytes], queue.Queue[str]],
) -> None:
    process, lines = served
    while not (found := _SERVING.match(lines.get(timeout=TIMEOUT))):
        pass
    port = int(found.group(1))
    # Stopped where it stands, as a busy machine may leave it: whatever it does after its
    # line must not be what makes the socket accept.
    os.kill(process.pid, signal.SIGSTOP)

    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as connection:
        os.kill(process.pid, signal.SIGCONT)
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = connection.makefile("rb").readline()

    assert answer.startswith(b"HTTP/1.1 200"), answer


def _refused(tree: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _serve(tree, *options),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=TIMEOUT,
        check=False,
    )


def test_a_port_in_use_is_one_line_naming_the_address_and_another_port_exit_2(
    tree: Path,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = _refused(tree, "--port", str(port))

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"kinetis-docs: cannot listen on 127.0.0.1:{port}: port {port} is already in use "
        "there (another server listens on it: an earlier `serve --http` still running, say); "
        "stop that one, or choose another with --port (--port 0 picks a free one).\n"
    )


def test_an_address_this_machine_does_not_have_is_one_line_naming_it_exit_2(
    tree: Path,
) -> None:
    nonlocal_bind = Path("/proc/sys/net/ipv4/ip_nonlocal_bind")
    if nonlocal_bind.exists() and nonlocal_bind.read_text().strip() != "0":
        pytest.skip("this machine binds any address (net.ipv4.ip_nonlocal_bind)")
    # TEST-NET-1 (RFC 5737): documentation's own, assigned to no machine.
    done = _refused(tree, "--host", "192.0.2.1", "--port", "0")

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "kinetis-docs: cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this "
        "machine; give --host one of its addresses (127.0.0.1 for this machine alone, "
        "0.0.0.0 for all of them).\n"
    )


def test_a_host_name_that_does_not_resolve_is_one_line_naming_it_exit_2(tree: Path) -> None:
    # `.invalid` (RFC 2606) resolves nowhere, whatever name server there is, or none.
    done = _refused(tree, "--host", "no-such-host.invalid", "--port", "0")

    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "kinetis-docs: cannot listen on no-such-host.invalid:0: the name no-such-host.invalid "
        "does not resolve ("
    ), line
    assert line.endswith(
        "); give --host an address of this machine, or a name that resolves to one."
    ), line
