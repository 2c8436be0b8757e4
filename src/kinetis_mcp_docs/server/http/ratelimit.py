"""The rate limit: N requests per minute per key, counted by the `limits` library.

In memory, each instance counts on its own; with a `redis://` storage every instance that
names the same Redis shares one count per key. The key is the bearer token when a valid
one was presented (so a team behind one address is not one client), else the client's
address: the first `X-Forwarded-For` entry when the connection comes from a trusted
proxy, else the peer address. A token that is not valid never becomes a key, so guessing
tokens is limited per address.

A storage that cannot be reached fails open: the request is served without the limit, and
the storage is not asked again for `STORAGE_RETRY_SECONDS`, so an outage costs at most one
wait on a connection a few seconds; stderr gets one line a minute at most saying so. The
limit is a guard against abuse, not the route's purpose: an outage of Redis must not take
the documentation down with it.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time

from limits import RateLimitItemPerMinute
from limits.aio.storage import Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string

from .guard import ip_address
from .settings import IpNetwork

STORAGE_RETRY_SECONDS = 5.0
REPORT_EVERY_SECONDS = 60.0
# Bounds on one Redis connection attempt and one command, unless the URI sets its own
# (`?socket_timeout=...`): without them an unreachable host holds a request for minutes.
REDIS_TIMEOUTS = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}
_NAMESPACE = "kinetis-docs"


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: tuple[IpNetwork, ...]
) -> str:
    """Whom a request is from: the first forwarded address if the peer is a trusted proxy.

    `forwarded_for` is every `X-Forwarded-For` line, joined in order with commas."""
    if peer is None:
        return "unknown"
    if forwarded_for:
        address = ip_address(peer)
        if address is not None and any(address in network for network in trusted):
            first = forwarded_for.split(",", 1)[0].strip()
            if first:
                forwarded = ip_address(first)
                return first if forwarded is None else str(forwarded)
    # An IPv4 client of a dual-stack socket is the same client as over IPv4. Only that form
    # is parsed: parsing every peer address costs more than the rest of a small request.
    if peer.startswith("::ffff:"):
        return str(ip_address(peer) or peer)
    return peer


def token_key(token: str) -> str:
    """The key of a valid token: a digest, so the token itself is never stored (in Redis)."""
    return "token:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


class RateLimit:
    """`per_minute` requests per key, in a sliding window.

    The `limits` library's sliding-window counter: this minute's count plus the previous
    minute's, weighted by the share of it still inside the last 60 seconds. Two counters a
    key, whatever the limit. Its moving window kept a timestamp per request of the last
    minute and inserted each at the front of a list: at a high limit that cost every
    request 20 to 40 µs, a quarter of the route's whole cost, and memory in proportion.
    """

    def __init__(self, per_minute: int, storage_uri: str) -> None:
        # redis-py's asyncio client: the one Redis client the extra brings.
        options: dict[str, str | float] = {}
        if not storage_uri.startswith("memory"):
            options = {"implementation": "redispy", **REDIS_TIMEOUTS}
        # wrap_exceptions: every failure of the storage arrives as one `StorageError`.
        storage = storage_from_string(f"async+{storage_uri}", wrap_exceptions=True, **options)
        assert isinstance(storage, Storage)  # noqa: S101 - an async+ scheme gives an async one
        self._limiter = SlidingWindowCounterRateLimiter(storage)
        self._item = RateLimitItemPerMinute(per_minute)
        self._asked_again_at = 0.0  # monotonic; the storage is not asked before then
        self._reported_at = -math.inf

    async def retry_after(self, key: str) -> int:
        """0 when this request is allowed (and counted), else seconds until one will be."""
        now = time.monotonic()
        if now < self._asked_again_at:
            return 0
        try:
            if await self._limiter.hit(self._item, _NAMESPACE, key):
                return 0
            stats = await self._limiter.get_window_stats(self._item, _NAMESPACE, key)
        except StorageError as error:
            self._unreachable(error.storage_error)
            return 0
        return max(1, math.ceil(stats.reset_time - time.time()))

    def _unreachable(self, error: Exception) -> None:
        now = time.monotonic()
        self._asked_again_at = now + STORAGE_RETRY_SECONDS
        if now - self._reported_at < REPORT_EVERY_SECONDS:
            return
        self._reported_at = now
        # The error names the storage's host, never a key (a token's digest at most).
        detail = " ".join(str(error).split())[:200]
        reason = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        print(
            f"kinetis-docs: rate limit: the limit storage is unreachable ({reason}); "
            "serving requests without the limit",
            file=sys.stderr,
            flush=True,
        )
