"""Pages from a local directory instead of the origin: `kinetis://docs/<slug>` is `DIR/<slug>.md`.

An explicit, opt-in source (`--docs-dir DIR`) for a machine that cannot reach the origin,
or a checkout whose `docs/` should be served as it is edited. It keeps the fetch's rules:
the file is read again on every call (no cache), at most `MAX_PAGE_BYTES` of it, and it
must be valid UTF-8; every failure is a `PageFetchError`, so a read answers `-32603`
exactly as an unreachable origin does. Only catalogue slugs ever reach `fetch`, so no
client-chosen path is opened here.
"""

from __future__ import annotations

import os
import stat

from .page_source import MAX_PAGE_BYTES, PageFetchError, describe_size

_CHUNK_BYTES = 64 * 1024


def read_page_file(path: str, max_bytes: int = MAX_PAGE_BYTES) -> str:
    """The text of the regular file at `path`: at most `max_bytes`, strict UTF-8.

    Never holds more than `max_bytes` plus one chunk, whatever the file's size, and never
    blocks on a FIFO or a device put under a page's name (it is refused, not read).
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise PageFetchError(path, f"cannot open the file ({error.strerror})") from error
    try:
        return read_open_page(fd, path, max_bytes)
    finally:
        os.close(fd)


def read_open_page(fd: int, path: str, max_bytes: int = MAX_PAGE_BYTES) -> str:
    """The text of the regular file open at `fd` (named `path` in errors), as `read_page_file`
    reads it; the descriptor is left open."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PageFetchError(path, "not a regular file")
        data = bytearray()
        while len(data) <= max_bytes:
            chunk = os.read(fd, _CHUNK_BYTES)
            if not chunk:
                break
            data += chunk
    except OSError as error:
        raise PageFetchError(path, f"cannot read the file ({error.strerror})") from error
    if len(data) > max_bytes:
        raise PageFetchError(path, f"the file exceeds {describe_size(max_bytes)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PageFetchError(path, f"not valid UTF-8 at byte {error.start}") from None


class LocalPageSource:
    """Catalogue pages read from `root/<slug>.md` on every call."""

    def __init__(self, root: str | os.PathLike[str], max_bytes: int = MAX_PAGE_BYTES) -> None:
        self.root = os.path.abspath(os.fspath(root))  # noqa: PTH100 - a str for os.open
        self._max_bytes = max_bytes

    def path_for(self, slug: str) -> str:
        """The file a page is read from."""
        return os.path.join(self.root, f"{slug}.md")  # noqa: PTH118 - a str for os.open

    def fetch(self, slug: str) -> str:
        return read_page_file(self.path_for(slug), self._max_bytes)

    def close(self) -> None:
        """Nothing to release: every read opens and closes its own file."""
