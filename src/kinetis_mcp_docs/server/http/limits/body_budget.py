"""The memory a worker gives request bodies held at once, before each is read.

A body is buffered until it is whole (at most 2 MiB), and its upload may take up to the
body timeout: 200 uploads from 4 addresses, each within its rate limit, each declaring
2 MiB and stopping short of it, took a worker from 48 to 412 MiB for 30 s, renewable. The
body timeout bounds how long, not how much. So each request's body is counted against a
budget (`KINETIS_DOCS_BODY_MEMORY`, 64 MiB by default) before it is read: its
`Content-Length`, or the 2 MiB cap for a chunked body, whose length is not known. A body
that does not fit is answered `503` with `Retry-After` at once, never read.

An ordinary request's body is a few hundred bytes, and an upload of megabytes is rare: so
bodies over `SMALL_BODY_BYTES` share all but an eighth of the budget, which is left to
ordinary requests. However many large bodies stall, ordinary requests are still read and
answered.
"""

from __future__ import annotations

SMALL_BODY_BYTES = 64 * 1024
DEFAULT_BODY_MEMORY_MIB = 64
MIN_BODY_MEMORY_MIB = 4  # what leaves room for one largest body, and the ordinary ones
RETRY_AFTER_SECONDS = 1


class BodyBudget:
    """Bytes of request bodies one worker holds at once, at most `total`. Used on the event
    loop's thread only: no lock."""

    __slots__ = ("_large_room", "_total", "held")

    def __init__(self, total: int) -> None:
        self._total = total
        self._large_room = total - total // 8
        self.held = 0

    def reserve(self, size: int) -> bool:
        """Count a body of `size` bytes, if the budget has room for it; whether it had."""
        held = self.held + size
        if held > (self._large_room if size > SMALL_BODY_BYTES else self._total):
            return False
        self.held = held
        return True

    def release(self, size: int) -> None:
        """The body of `size` bytes counted by `reserve` is no longer held."""
        self.held -= size
