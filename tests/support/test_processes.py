"""The process observations the end-to-end tests wait on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.built import hold
from tests.support.processes import PROC_AVAILABLE, kill_processes_mentioning

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
