"""Whether anything in a directory tree may have changed since last asked: Linux's inotify.

A search over a local tree must see a file changed a moment ago, and looking at every file
(a `stat` each) on every search costs milliseconds on a tree of a thousand pages. The
kernel queues an event on a watched directory during the very call that changes one of its
entries, so a search that finds the queue empty knows nothing changed, without a look at
the disk. Where inotify is missing (not Linux) or a watch cannot be added for want of
resources (the user's watch limit reached, `ENOSPC`, or kernel memory), `TreeWatch` is
not used and every search looks at the disk again.

A walk of the tree calls `begin`, then `watch` on each directory before listing it (so a
file created in it after the listing raises an event), then `end`, which removes the
watches of directories the walk no longer reached: a tree moved out of the root is not
watched on for good. A directory that is gone by the time it is watched (`ENOENT`,
`ENOTDIR`), or that cannot be read (`EACCES`), is simply not watched: its parent's watch
sees it go, come back or change its mode (the caller looks again at a root it could not
watch, which has no parent watched). The kernel's own
notices are read too: `IN_IGNORED` (a watch the kernel dropped, with its directory) and
`IN_Q_OVERFLOW` (events were lost, so anything may have changed).

A change made through a hard link in an unwatched directory raises no event here.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_IGNORED = 0x8000
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
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then `len` bytes of name
# The directory is gone, is no directory now, or cannot be read: not watched, and no
# reason to stop watching the rest.
_NOT_WATCHED = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EACCES})


class TreeWatch:
    """An inotify instance watching directories; `OSError` where there is none."""

    def __init__(self) -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._add = libc.inotify_add_watch
            self._remove = libc.inotify_rm_watch
            init = libc.inotify_init1
        except (OSError, AttributeError) as error:
            raise OSError("inotify is not available here") from error
        self._add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        self._remove.argtypes = (ctypes.c_int, ctypes.c_int)
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd: int | None = fd
        self._watched: set[int] = set()  # watch descriptors the kernel holds for us
        self._reached: set[int] = set()  # those the walk under way has reached

    def begin(self) -> None:
        """A walk of the tree starts: what it does not reach is unwatched at `end`."""
        self._reached = set()

    def watch(self, directory: str) -> bool:
        """Watch `directory` (again is harmless); whether it is watched. `OSError` when the
        kernel refuses for want of resources (`ENOSPC`: the watch limit; `ENOMEM`): then
        no answer of this watch can be trusted, and the caller looks at the disk instead."""
        if self._fd is None:
            raise OSError(errno.EBADF, "the watch is closed")
        descriptor = self._add(self._fd, os.fsencode(directory), _MASK)
        if descriptor >= 0:
            self._watched.add(descriptor)
            self._reached.add(descriptor)
            return True
        failure = ctypes.get_errno()
        if failure in _NOT_WATCHED:
            return False
        raise OSError(failure, f"inotify_add_watch failed: {os.strerror(failure)}")

    def end(self) -> None:
        """The walk is over: stop watching every directory it did not reach."""
        if self._fd is None:
            return
        for descriptor in self._watched - self._reached:
            self._remove(self._fd, descriptor)  # EINVAL if the kernel dropped it meanwhile
        self._watched = self._reached

    def changed(self) -> bool:
        """Whether anything may have changed since the last call; the queue is emptied."""
        if self._fd is None:
            return True
        seen = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return seen
            if not data:
                return seen
            offset = 0
            while offset < len(data):
                descriptor, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length
                if mask & _IN_IGNORED:
                    # The kernel dropped this watch (its directory went, or `end` removed
                    # it); the directory's going, if it went, has its own event.
                    self._watched.discard(descriptor)
                    self._reached.discard(descriptor)
                else:
                    seen = True  # a change, or IN_Q_OVERFLOW: events were lost

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
