"""The exclusive update lock on `DIR/.update.lock`, taken with the filelock package.

Taken by setup, by `update_now`, and by a spawn only when its throttle says an update is
due (then that spawn reads the timestamp again under it): a spawn inside the update window
takes no lock and never imports this module, which keeps filelock's import cost off every
client start but one a day. What the lock guarantees:

- it is an `flock` on an open file description (filelock's `UnixFileLock`), so the kernel
  releases it when the holder dies, however it dies (SIGKILL included);
- its descriptor is not inheritable (O_CLOEXEC, PEP 446), so neither pip nor the server
  can keep the lock alive after the holder lets go;
- the lock file is never created or opened through a symlink: anything but a regular file
  under the name is refused here, before filelock runs, and filelock (3.20.1 and later)
  opens it with `O_NOFOLLOW`, which closes the gap between the two;
- the file itself is never deleted: unlinking a lock file while another process waits on
  its old inode would let two holders in at once;
- it is created `files.FILE_MODE` less what the umask takes, as every file of the install
  directory is: never writable by others, and no more readable than a stricter umask allows.

A process that finds the lock held says so through `on_wait` and waits (filelock polls
every 50 ms), for as long as it is held or, given `wait_at_most`, that many seconds at most
(then `LockBusy`: a client start must not wait past its own deadline). `LockState.waited`
then tells the caller that the holder has just installed or updated, or tried, so a spawn
does not try again.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from filelock import FileLock, Timeout

from ..children import child_umask
from ..errors import InstallerError
from ..names import DIR_ENVIRONMENT_VARIABLE
from .files import FILE_MODE, describe

# An install directory that cannot be written: no lock, and no update, can be taken there.
_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


@dataclass(frozen=True)
class LockState:
    """What taking the lock found: `waited` when another process held it as we arrived."""

    waited: bool


class LockBusy(InstallerError):
    """The lock was still held by another process when the caller's wait ran out."""


@contextmanager
def update_lock(
    path: str | os.PathLike[str],
    *,
    on_wait: Callable[[], None] | None = None,
    wait_at_most: float | None = None,
) -> Iterator[LockState]:
    """Hold the exclusive lock on `path` for the block, waiting as long as it is held, or
    at most `wait_at_most` seconds (then `LockBusy`).

    Raises `InstallerError` when the lock cannot be taken: a symlink, a directory or
    anything but a regular file under the name, or a directory that cannot be written.
    """
    name = os.fspath(path)
    _refuse_unless_regular(name)
    # filelock sets an explicit mode with `fchmod`, past the umask: filter it here. The
    # children's umask is this process's, with group and others' write taken away too.
    lock = FileLock(name, mode=FILE_MODE & ~child_umask())
    try:
        try:
            lock.acquire(timeout=0)
            waited = False
        except Timeout:
            if on_wait is not None:
                on_wait()
            try:
                lock.acquire(timeout=-1 if wait_at_most is None else max(wait_at_most, 0))
            except Timeout:
                raise LockBusy(
                    f"{name} was still held by another process after {wait_at_most:g} s"
                ) from None
            waited = True
    except OSError as error:
        fix = ""
        if error.errno in _UNWRITABLE:
            fix = (
                f"; the install directory cannot be written: choose a writable location with "
                f"{DIR_ENVIRONMENT_VARIABLE}, or fix the permissions"
            )
        raise InstallerError(
            f"Could not take the update lock {name} ({error.strerror or error}){fix}."
        ) from error
    try:
        yield LockState(waited=waited)
    finally:
        lock.release()


def _refuse_unless_regular(name: str) -> None:
    try:
        mode = os.lstat(name).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise InstallerError(
            f"Could not take the update lock {name} ({error.strerror or error})."
        ) from error
    if not stat.S_ISREG(mode):
        raise InstallerError(
            f"Could not take the update lock: {name} is {describe(mode)}, not the lock file "
            "this installer makes; move it out of the way and try again."
        )
