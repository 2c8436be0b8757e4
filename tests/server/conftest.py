"""Fixtures for the server's tests: real server subprocesses, always reaped."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import pytest

from tests.support.stdio import ServerProcess, serve_argv

SpawnServer = Callable[..., ServerProcess]


@pytest.fixture
def spawn_server() -> Iterator[SpawnServer]:
    """Start `kinetis-docs serve` (or another argv) as a subprocess; killed at teardown."""
    started: list[ServerProcess] = []

    def spawn(
        argv: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        *,
        read_stdout: bool = True,
        read_stderr: bool = True,
    ) -> ServerProcess:
        server = ServerProcess(
            argv or serve_argv(), env, read_stdout=read_stdout, read_stderr=read_stderr
        )
        started.append(server)
        return server

    yield spawn
    for server in started:
        server.kill()


@pytest.fixture
def server(spawn_server: SpawnServer) -> ServerProcess:
    """One `kinetis-docs serve` subprocess with the test's environment."""
    return spawn_server()
