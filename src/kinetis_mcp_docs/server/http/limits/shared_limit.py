"""The count shared through Redis: the `limits` library's sliding-window counter.

Imported only when the route is given a storage other than memory (`ratelimit`): `limits`
brings `deprecated` and `wrapt` with it, about 40 ms of a replica's start that a route
counting in memory never uses. A failure of the storage arrives here as `limits`' one
`StorageError` and leaves as a call to `unreachable`, so that the fail-open policy stays
in one place, `ratelimit.RateLimit`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from limits import RateLimitItemPerMinute
from limits.aio.storage import Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string

# Bounds on one Redis connection attempt and one command, unless the URI sets its own
# (`?socket_timeout=...`): without them an unreachable host holds a request for minutes.
REDIS_TIMEOUTS = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}
_NAMESPACE = "kinetis-docs"


class SharedCount:
    """`per_minute` requests per key, counted in the storage at `storage_uri`.

    `answered` is called whenever the storage answered, `unreachable` with the reason
    whenever it did not; a count that could not be made allows the request.
    """

    def __init__(
        self,
        per_minute: int,
        storage_uri: str,
        *,
        answered: Callable[[], None],
        unreachable: Callable[[Exception], None],
    ) -> None:
        # redis-py's asyncio client: the one Redis client the extra brings; wrap_exceptions:
        # every failure of the storage arrives as one `StorageError`.
        storage = storage_from_string(
            f"async+{storage_uri}", wrap_exceptions=True, implementation="redispy", **REDIS_TIMEOUTS
        )
        assert isinstance(storage, Storage)  # noqa: S101 - an async+ scheme gives an async one
        self._storage = storage
        self._limiter = SlidingWindowCounterRateLimiter(storage)
        self._item = RateLimitItemPerMinute(per_minute)
        self._answered = answered
        self._unreachable = unreachable

    async def retry_after(self, key: str) -> int:
        """0 when this request is allowed (and counted), or the storage did not answer;
        else seconds until one will be."""
        try:
            if await self._limiter.hit(self._item, _NAMESPACE, key):
                self._answered()
                return 0
            stats = await self._limiter.get_window_stats(self._item, _NAMESPACE, key)
        except StorageError as error:
            self._unreachable(error.storage_error)
            return 0
        self._answered()
        return max(1, math.ceil(stats.reset_time - time.time()))

    async def check(self) -> None:
        """Ask the storage whether it answers, and say so to `answered` or `unreachable`."""
        try:
            if await self._storage.check():
                self._answered()
            else:
                self._unreachable(ConnectionError("the storage did not answer PING"))
        except Exception as error:  # noqa: BLE001 - any failure of the check is an outage
            self._unreachable(getattr(error, "storage_error", error))
