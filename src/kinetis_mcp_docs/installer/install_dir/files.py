"""Reading and writing the install directory's small files without following a symlink.

A symlink planted under the install directory must never make us read, create or
overwrite its target: reads open with `O_NOFOLLOW` (and `O_NONBLOCK`, so a FIFO planted
under the name cannot block a client's start forever) and accept only a regular file;
writes create a fresh file beside the target with `O_EXCL`, which no existing name — a
link included — satisfies, then rename it over the target, which replaces a link rather
than writing through it. A reader sees the old content or the new, never half.

The spawn path reads through here on every client start, so this imports only `os` and
`stat` (see `start.py`).
"""

from __future__ import annotations

import os
import stat

FILE_MODE = 0o644
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def read_regular(path: str, limit: int) -> bytes | None:
    """At most `limit + 1` bytes of the regular file at `path`.

    None when it is missing, unreadable, a symlink, or anything but a regular file; the
    extra byte lets a caller tell a file longer than `limit` from one of exactly `limit`.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes, mode: int = FILE_MODE) -> None:
    """Replace `path` with a regular file holding `data`: `mode` (0o644), less the umask.

    Raises `OSError` (leaving `path` as it was) when it cannot.
    """
    temporary = f"{path}.tmp-{os.urandom(4).hex()}"
    fd = os.open(temporary, _CREATE_FLAGS, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)  # noqa: PTH105 - pathlib is kept off the spawn path
    except BaseException:
        try:  # noqa: SIM105 - contextlib is kept off the spawn path
            os.unlink(temporary)  # noqa: PTH108 - see above
        except FileNotFoundError:
            pass
        raise


def describe(mode: int) -> str:
    """What kind of file `mode` (from `lstat`) is, for a message."""
    kinds = [
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISREG, "a regular file"),
    ]
    return next((text for test, text in kinds if test(mode)), "a device")
