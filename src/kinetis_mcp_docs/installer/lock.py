"""The exclusive update lock on `DIR/.update.lock`, shared by `setup` and every spawn.

Why `fcntl.flock` on a raw descriptor rather than the filelock package: this module sits
on the fast path of every client spawn, and `import filelock` pulls in asyncio, sqlite3,
logging, threading and tempfile — about 100 ms, several times a bare interpreter's whole
start-up. `flock` gives exactly the semantics the contract asks for and nothing more:

- the lock belongs to the open file description, so the kernel releases it when the
  holder dies, however it dies (SIGKILL included);
- `os.open` descriptors are non-inheritable (O_CLOEXEC, PEP 446), so neither pip nor the
  server's children can keep the lock alive after we close it;
- closing the descriptor is the release, which `start` does before the server runs.

The lock file itself is never deleted: unlinking a lock file while another process waits
on its old inode would let two holders in at once.

For the same start-up budget this module imports neither pathlib nor dataclasses (the
server itself needs neither; together they cost about as much as a bare interpreter),
nor typing or contextlib (typing alone is about a fifth of a spawn inside the window;
contextlib also comes with `-m` on Python 3.10 and 3.11, not on 3.12 and later).
"""

from __future__ import annotations

import fcntl
import os

TYPE_CHECKING = False  # `typing` and `contextlib` cost start-up time; mypy honours the name
if TYPE_CHECKING:
    from types import TracebackType


class LockState:
    """What taking the lock found.

    `waited` is True when another process held the lock as we arrived, so we waited for
    it: that holder has just installed or updated (or tried), and this spawn should not
    try again.
    """

    __slots__ = ("waited",)

    def __init__(self, *, waited: bool) -> None:
        self.waited = waited

    def __repr__(self) -> str:
        return f"LockState(waited={self.waited})"


class update_lock:  # noqa: N801 - used as a function: `with update_lock(path) as state:`
    """Hold the exclusive lock on `path` for the block, waiting as long as it is held.

    The lock is released, and its descriptor closed, when the block exits. A class rather
    than `contextlib.contextmanager` for the start-up budget (see the module's docstring).
    """

    __slots__ = ("_fd", "_path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> LockState:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            waited = False
            try:
                # Non-blocking first: the only way to learn that someone else held it.
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return LockState(waited=waited)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        fd, self._fd = self._fd, -1
        # Closing the only descriptor of this open file description releases the lock.
        os.close(fd)
