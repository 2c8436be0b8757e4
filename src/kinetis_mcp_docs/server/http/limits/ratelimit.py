"""The rate limit: N requests per minute per key, in a sliding window.

In memory (`memory://`), each instance counts on its own, in `counter`'s table, whose cost
and size do not grow with the number of clients. With a `redis://` storage every instance
that names the same Redis shares one count per key, counted by the `limits` library's
sliding-window counter (`shared_limit`, imported only then); the memory counter does the
same arithmetic. `keys` says what a key is.

A storage that cannot be reached fails open: the request is served without the limit, and
the storage is not asked again for `STORAGE_RETRY_SECONDS`, so an outage costs at most one
wait on a connection a few seconds; stderr gets one line a minute at most saying so. The
limit is a guard against abuse, not the route's purpose: an outage of Redis must not take
the documentation down with it.
"""

from __future__ import annotations

import asyncio
import math
import time

from ...core.display import say
from .counter import MAX_KEYS, SlidingWindowCounter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .shared_limit import SharedCount

STORAGE_RETRY_SECONDS = 5.0
REPORT_EVERY_SECONDS = 60.0


class RateLimit:
    """`per_minute` requests per key, in a sliding window.

    This window's count plus the previous one's, weighted by the share of it still inside
    the last 60 seconds: two counters a key, whatever the limit. A moving window kept a
    timestamp per request of the last minute and inserted each at the front of a list: at
    a high limit that cost every request 20 to 40 µs, a quarter of the route's whole cost,
    and memory in proportion.

    `max_keys` and `clock` are the memory counter's (see `counter`); a shared storage
    keeps its own keys, each expiring two minutes after its last request.
    `on_storage_error` is called for every failed call to the storage (the metrics count
    them).
    """

    def __init__(
        self,
        per_minute: int,
        storage_uri: str,
        *,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
        on_storage_error: Callable[[], None] | None = None,
    ) -> None:
        self._asked_again_at = 0.0  # monotonic; the storage is not asked before then
        self._reported_at = -math.inf
        self._on_error = on_storage_error
        # What the last call to the storage said: None before any, else the reason it
        # failed ("" when it answered), and when (monotonic).
        self._last_problem: str | None = None
        self._last_contact = -math.inf
        self._checking: asyncio.Task[None] | None = None
        self._memory: SlidingWindowCounter | None = None
        self._shared: SharedCount | None = None
        if storage_uri.startswith("memory"):
            self._memory = SlidingWindowCounter(per_minute, max_keys=max_keys, clock=clock)
            return
        from .shared_limit import SharedCount  # noqa: PLC0415 - only a shared count needs it

        self._shared = SharedCount(
            per_minute, storage_uri, answered=self._answered, unreachable=self._unreachable
        )

    @property
    def memory(self) -> SlidingWindowCounter | None:
        """The in-memory count, which a caller may `hit` directly (no coroutine); None
        when the count is shared."""
        return self._memory

    async def retry_after(self, key: str) -> int:
        """0 when this request is allowed (and counted), else seconds until one will be."""
        if self._memory is not None:
            return self._memory.hit(key)
        if self._shared is None or time.monotonic() < self._asked_again_at:
            return 0
        return await self._shared.retry_after(key)

    def storage_problem(self) -> str | None:
        """Why the shared storage could not be reached at its last call, or None when it
        answered (or none is used, or it has not been called yet)."""
        return self._last_problem or None

    def storage_answered(self) -> bool | None:
        """Whether the shared storage answered its last call; None before any call."""
        return None if self._last_problem is None else not self._last_problem

    @property
    def shared(self) -> bool:
        return self._memory is None

    def refresh_in_background(self) -> None:
        """Ask the shared storage whether it answers, without waiting for it, unless it was
        asked within `STORAGE_RETRY_SECONDS`: what readiness reports is then at most that
        old, even when no request has needed the storage."""
        if self._shared is None or self._checking is not None:
            return
        if time.monotonic() - self._last_contact < STORAGE_RETRY_SECONDS:
            return
        self._checking = asyncio.get_running_loop().create_task(self._check(self._shared))

    async def _check(self, shared: SharedCount) -> None:
        try:
            await shared.check()
        finally:
            self._checking = None

    def _answered(self) -> None:
        self._last_problem = ""
        self._last_contact = time.monotonic()

    def _unreachable(self, error: Exception) -> None:
        now = time.monotonic()
        self._asked_again_at = now + STORAGE_RETRY_SECONDS
        self._last_contact = now
        detail = " ".join(str(error).split())[:200]
        reason = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        self._last_problem = reason
        if self._on_error is not None:
            self._on_error()
        if now - self._reported_at < REPORT_EVERY_SECONDS:
            return
        self._reported_at = now
        # The error names the storage's host, never a key (a token's digest at most).
        say(
            f"rate limit: the limit storage is unreachable ({reason}); "
            "serving requests without the limit"
        )
