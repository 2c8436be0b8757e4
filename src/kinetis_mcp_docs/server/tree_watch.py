"""Whether anything in a directory tree may have changed since last asked: Linux's inotify.

A search over a local tree must see a file changed a moment ago, and looking at every file
(a `stat` each) on every search costs milliseconds on a tree of a thousand pages. The
kernel queues an event on a watched directory during the very call that changes one of its
entries, so a search that finds the queue empty knows nothing changed, without a look at
the disk. Where inotify is missing (not Linux) or a watch cannot be added (the user's
watch limit reached), `TreeWatch` is not used and every search looks at the disk again.

A change made through a hard link in an unwatched directory raises no event here.
"""

from __future__ import annotations

import ctypes
import os

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)


class TreeWatch:
    """An inotify instance watching directories; `OSError` where there is none."""

    def __init__(self) -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._add = libc.inotify_add_watch
            init = libc.inotify_init1
        except (OSError, AttributeError) as error:
            raise OSError("inotify is not available here") from error
        self._add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd: int | None = fd

    def watch(self, directory: str) -> bool:
        """Watch `directory`; watching it again is harmless. False when the kernel refuses."""
        return self._fd is not None and self._add(self._fd, os.fsencode(directory), _MASK) >= 0

    def changed(self) -> bool:
        """Whether any event arrived since the last call; the queue is emptied."""
        if self._fd is None:
            return True
        seen = False
        while True:
            try:
                if not os.read(self._fd, 65536):
                    return seen
            except BlockingIOError:
                return seen
            seen = True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
