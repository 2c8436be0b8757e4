"""A child whose output the installer reads: started with pipes, stopped with its group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kinetis_mcp_docs.installer.children import start_piped, stopped_on_leaving

WAIT = 30.0
# Says it is ready, then waits for its stdin to end: it runs until the test lets it go.
_WAITING = "import sys; print('ready', flush=True); sys.stdin.read()"


def _waiting() -> subprocess.Popen[bytes]:
    process = start_piped(
        [sys.executable, "-I", "-c", _WAITING], env=dict(os.environ), stdin=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    return process


def _closed(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def test_a_piped_child_gives_its_stdout_and_stderr_to_the_reader() -> None:
    said = "import sys; print('out'); print('err', file=sys.stderr)"
    process = start_piped([sys.executable, "-I", "-c", said], env=dict(os.environ))

    with process, stopped_on_leaving(process):
        out, err = process.communicate(timeout=WAIT)

    assert (out, err, process.returncode) == (b"out\n", b"err\n", 0)


def test_a_piped_child_starts_in_a_process_group_of_its_own() -> None:
    process = _waiting()
    try:
        assert os.getpgid(process.pid) == process.pid
    finally:
        with stopped_on_leaving(process):
            pass
        _closed(process)


def test_a_block_left_by_an_exception_stops_the_child() -> None:
    process = _waiting()

    with pytest.raises(KeyboardInterrupt), stopped_on_leaving(process):
        raise KeyboardInterrupt

    assert process.returncode == -signal.SIGKILL
    _closed(process)


def test_a_block_left_with_the_child_still_running_stops_it() -> None:
    process = _waiting()

    with stopped_on_leaving(process):
        pass

    assert process.returncode == -signal.SIGKILL
    _closed(process)


def test_a_child_that_has_exited_is_left_as_it_ended() -> None:
    process = _waiting()

    with stopped_on_leaving(process):
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=WAIT) == 0

    assert process.returncode == 0
    _closed(process)


def test_a_program_that_cannot_be_started_is_the_systems_error() -> None:
    with pytest.raises(PermissionError):
        start_piped([os.devnull], env=dict(os.environ))
