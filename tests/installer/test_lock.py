"""The update lock, taken by real processes."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.lock import LockBusy, update_lock
from tests.support.processes import PROC_AVAILABLE, holds_file, holds_lock

TIMEOUT = 30

# A process that takes the lock, says "waiting" when it finds it held, says so on stdout
# once it holds it, with whether it had to wait, and holds it until a line arrives on
# stdin. With an argument it first starts a child that inherits every descriptor it may
# (close_fds=False), prints the child's pid, and leaves it running until the test closes
# the stdin they share.
HOLDER = """
import subprocess, sys
from pathlib import Path
from kinetis_mcp_docs.installer.install_dir.lock import update_lock

print("trying", flush=True)
with update_lock(Path(sys.argv[1]), on_wait=lambda: print("waiting", flush=True)) as state:
    print(f"held waited={state.waited}", flush=True)
    if len(sys.argv) > 2:
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.read()"], close_fds=False
        )
        print(child.pid, flush=True)
    sys.stdin.readline()
    print("releasing", flush=True)
"""


def _holder(lock: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, os.fspath(lock), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=TIMEOUT)


def test_an_uncontended_lock_is_taken_without_waiting(tmp_path: Path) -> None:
    with update_lock(tmp_path / ".update.lock") as state:
        assert not state.waited


def test_the_lock_can_be_taken_again_once_released(tmp_path: Path) -> None:
    lock = tmp_path / ".update.lock"
    with update_lock(lock):
        pass
    with update_lock(lock) as state:
        assert not state.waited


def test_the_lock_file_stays_after_release(tmp_path: Path) -> None:
    lock = tmp_path / ".update.lock"
    with update_lock(lock):
        pass
    assert lock.is_file()


@pytest.mark.parametrize(
    ("umask", "mode"),
    [
        # Never writable by others, however loose the umask.
        (0o000, 0o644),
        (0o002, 0o644),
        # A stricter umask is kept: it only takes more away.
        (0o027, 0o640),
        (0o077, 0o600),
    ],
)
def test_the_lock_file_is_created_writable_only_by_us_and_as_private_as_the_umask_asks(
    tmp_path: Path, umask: int, mode: int
) -> None:
    lock = tmp_path / ".update.lock"
    before = os.umask(umask)
    try:
        with update_lock(lock):
            pass
    finally:
        os.umask(before)
    assert stat.S_IMODE(lock.stat().st_mode) == mode


@pytest.mark.parametrize("planted", ["dangling", "to-a-file"])
def test_a_lock_file_that_is_a_symlink_is_refused_and_its_target_neither_made_nor_opened(
    tmp_path: Path, planted: str
) -> None:
    target = tmp_path / "elsewhere" / "target"
    target.parent.mkdir()
    if planted == "to-a-file":
        target.write_text("theirs\n")
    lock = tmp_path / ".update.lock"
    lock.symlink_to(target)

    with pytest.raises(InstallerError) as refusal, update_lock(lock):
        pass

    assert "is a symlink" in refusal.value.message
    assert lock.is_symlink()
    if planted == "dangling":
        assert not target.exists()
    else:
        assert target.read_text() == "theirs\n"


def test_a_lock_file_that_is_a_directory_is_refused_with_one_sentence(tmp_path: Path) -> None:
    lock = tmp_path / ".update.lock"
    lock.mkdir()

    with pytest.raises(InstallerError) as refusal, update_lock(lock):
        pass

    assert refusal.value.message == (
        f"Could not take the update lock: {lock} is a directory, not the lock file this "
        "installer makes; move it out of the way and try again."
    )


needs_proc = pytest.mark.skipif(
    not PROC_AVAILABLE, reason="observes the child's descriptors in /proc"
)


def _holding(
    lock: Path, processes: list[subprocess.Popen[str]], *extra: str
) -> subprocess.Popen[str]:
    """A holder process that took the lock without waiting."""
    holder = _holder(lock, *extra)
    processes.append(holder)
    assert _line(holder) == "trying"
    assert _line(holder) == "held waited=False"
    return holder


def _holder_and_waiter(
    lock: Path, processes: list[subprocess.Popen[str]]
) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """A process holding the lock, and a second one that found it held and waits for it."""
    holder = _holding(lock, processes)

    waiter = _holder(lock)
    processes.append(waiter)
    assert _line(waiter) == "trying"
    # It tried once without waiting and found the lock held: from here it can only wait.
    assert _line(waiter) == "waiting"
    assert waiter.poll() is None
    return holder, waiter


def test_a_held_lock_blocks_a_second_process_until_it_is_released(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    lock = tmp_path / ".update.lock"
    holder, waiter = _holder_and_waiter(lock, processes)

    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert _line(holder) == "releasing"
    # It found the lock held when it arrived, and got it once the holder let go.
    assert _line(waiter) == "held waited=True"


@needs_proc
def test_a_wait_bounded_in_seconds_gives_up_while_another_process_still_holds_the_lock(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    lock = tmp_path / ".update.lock"
    holder = _holding(lock, processes)
    waited: list[bool] = []

    with (
        pytest.raises(LockBusy) as busy,
        update_lock(lock, on_wait=lambda: waited.append(True), wait_at_most=0.2),
    ):
        pass

    assert waited == [True]
    assert busy.value.message == f"{lock} was still held by another process after 0.2 s"
    # It gave up because the lock was held, not for any other reason: the kernel still
    # lists the holder's lock, and once it lets go a bounded wait gets it.
    assert holds_lock(holder.pid, lock)
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert _line(holder) == "releasing"
    assert holder.wait(timeout=TIMEOUT) == 0
    with update_lock(lock, wait_at_most=TIMEOUT) as state:
        assert not state.waited


def test_killing_the_holder_releases_the_lock(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    lock = tmp_path / ".update.lock"
    holder, waiter = _holder_and_waiter(lock, processes)

    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=TIMEOUT)
    assert _line(waiter) == "held waited=True"


@needs_proc
def test_a_child_of_the_holder_does_not_inherit_the_lock(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    lock = tmp_path / ".update.lock"
    holder = _holding(lock, processes, "start-a-child")
    child_pid = int(_line(holder))

    try:
        # The child holds no descriptor of the lock file, whatever the parent passed on.
        assert not holds_file(child_pid, lock)

        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=TIMEOUT)
        # The holder is gone and its child still runs: the lock is free at once.
        os.kill(child_pid, 0)
        with update_lock(lock) as state:
            assert not state.waited
    finally:
        os.kill(child_pid, signal.SIGKILL)
