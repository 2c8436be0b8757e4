"""The process observations the end-to-end tests wait on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.built import hold
from tests.support.processes import PROC_AVAILABLE, cpu_seconds, kill_processes_mentioning

# Holds an `flock` on the directory it is given, then fills memory, so that unmapping it
# when the process dies takes a while.
_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
memory = bytearray(512 * 1024 * 1024)
print("holding", flush=True)
time.sleep(300)
"""


@pytest.mark.skipif(not PROC_AVAILABLE, reason="reads /proc")
def test_a_killed_process_is_waited_for_until_its_locks_are_free(tmp_path: Path) -> None:
    # A dying process's command line reads empty before its descriptors are closed: a
    # test that took "no longer listed" for "gone" found an environment still held.
    held = tmp_path / "env"
    held.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, os.fspath(held)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "holding\n"
        kill_processes_mentioning(os.fspath(held), 60)
        # The hold `prune` takes before it removes an environment: None while another has it.
        fd = hold(held, wait=False)
        assert fd is not None
        os.close(fd)
    finally:
        holder.kill()
        holder.communicate(timeout=60)


# On each line read, runs a thread that works for 0.2 CPU-s and ends, then says "done".
_THREADS_THAT_END = """
import sys, threading, time
def work():
    start = time.thread_time()
    while time.thread_time() - start < 0.2:
        pass
print("ready", flush=True)
for _ in sys.stdin:
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    print("done", flush=True)
"""


def test_a_process_cpu_time_keeps_what_its_ended_threads_used() -> None:
    # A server's thread pool trims itself: a reading that summed the live threads once
    # made a measured cost negative.
    with subprocess.Popen(
        [sys.executable, "-c", _THREADS_THAT_END],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        readings = [cpu_seconds(child.pid)]
        for _ in range(2):
            child.stdin.write("work\n")
            child.stdin.flush()
            assert child.stdout.readline() == "done\n"
            readings.append(cpu_seconds(child.pid))
        child.stdin.close()
        assert child.wait(timeout=60) == 0
    assert readings[1] - readings[0] >= 0.2, readings
    assert readings[2] - readings[1] >= 0.2, readings
