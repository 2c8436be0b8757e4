"""What the kernel says about other processes: their command lines, descriptors, parents.

Tests that race real processes wait on these observations instead of sleeping: a process
is known to hold a file when the kernel lists its descriptor, not when it has merely
printed that it is about to open it. Linux only (`/proc`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PROC_AVAILABLE = Path("/proc/self/cmdline").exists()
# Gives SIGINT its default action back, then becomes the command that follows.
_RESTORE_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def sigint_restored(argv: Sequence[str]) -> list[str]:
    """`argv`, run with SIGINT's default action when this process ignores SIGINT.

    A run started in the background of a shell without job control (`nohup pytest &`)
    ignores SIGINT, every child inherits that across `exec`, and Python then installs no
    `KeyboardInterrupt` for it: a test's Ctrl-C would reach nothing. The child is started
    through a small launcher that restores the default before it `exec`s the command (the
    same process, so its pid and descriptors are the command's); otherwise `argv` as it is.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return list(argv)
    return [sys.executable, "-I", "-c", _RESTORE_SIGINT, *argv]


def wait_for(condition: Callable[[], bool], what: str, timeout: float) -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def processes_mentioning(text: str) -> list[int]:
    """Live processes (other than this one) whose command line contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry.name))
    return found


def kill_processes_mentioning(text: str, timeout: float) -> None:
    """Kill every process whose command line contains `text`, and wait until each has
    finished exiting, its descriptors (and the locks they hold) closed.

    A dying process's command line reads empty from the moment its memory is released,
    before its descriptors are closed: a process no longer listed may still hold an
    environment's `flock` for as long as the machine takes to unmap its memory.
    """
    killed: dict[int, str | None] = {}  # pid -> when it started: a reused pid starts later

    def all_exited() -> bool:
        for pid in processes_mentioning(text):
            if pid not in killed:
                killed[pid] = running_since(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return all(
            started is None or running_since(pid) != started for pid, started in killed.items()
        )

    wait_for(all_exited, f"processes using {text} to exit", timeout)


def running_since(pid: int) -> str | None:
    """When process `pid` started, while it runs or exits; None when there is no such
    process or it is a zombie (whose descriptors are closed). A process has ended once
    this no longer gives what it gave while it ran (a reused pid started later)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The fields after the command's name, which is in parentheses and may hold any byte:
    # the state, then (twentieth) the start time.
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def holds_file(pid: int, path: Path) -> bool:
    """Whether process `pid` has a descriptor open on `path`."""
    fds = Path(f"/proc/{pid}/fd")
    return any(os.path.realpath(fd) == os.path.realpath(path) for fd in fds.iterdir())


def holds_lock(pid: int, path: Path) -> bool:
    """Whether process `pid` holds an `flock` on `path`, as the kernel's lock table says.

    `/proc/locks` lists each lock as `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode>
    0 EOF` (the device in hex), and a process blocked waiting for one behind `->`.
    """
    info = path.stat()
    file = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in Path("/proc/locks").read_text(encoding="ascii").splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[4:6] == [str(pid), file]:
            return True
    return False


def peak_rss_kib(pid: int) -> int:
    """Process `pid`'s peak resident set size so far (`VmHWM`), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _parent_of(entry) == pid
    ]


def _parent_of(entry: Path) -> int | None:
    try:
        status = (entry / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return None


def cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used so far, all its threads, to the nanosecond.

    Read from the process's own CPU clock (what `clock_getcpuclockid` names), not summed
    over `/proc/<pid>/task`: a thread that exits between two readings (a pool trimming
    itself) would take its time out of the sum and make a cost negative, and `stat`'s
    clock ticks of 10 ms are too coarse for a cost measured over a few requests.
    """
    return time.clock_gettime(_process_cpu_clock(pid))


def _process_cpu_clock(pid: int) -> int:
    # Linux's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED): the clock id glibc's
    # clock_getcpuclockid returns, which Python's time module does not expose.
    return (~pid << 3) | 2
