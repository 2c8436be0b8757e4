"""The rate limit: N requests per minute per key, counted by the `limits` library.

In memory, each instance counts on its own; with a `redis://` storage every instance that
names the same Redis shares one count per key. The key is the bearer token when a valid
one was presented (so a team behind one address is not one client), else the client's
address: the first `X-Forwarded-For` entry when the connection comes from a trusted
proxy, else the peer address. A token that is not valid never becomes a key, so guessing
tokens is limited per address.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time

from limits import RateLimitItemPerMinute
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from .settings import IpNetwork


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: tuple[IpNetwork, ...]
) -> str:
    """Whom a request is from: the first forwarded address if the peer is a trusted proxy."""
    if peer is None:
        return "unknown"
    if forwarded_for and _trusted(peer, trusted):
        first = forwarded_for.split(",", 1)[0].strip()
        if first:
            return first
    return peer


def _trusted(peer: str, trusted: tuple[IpNetwork, ...]) -> bool:
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in trusted)


def token_key(token: str) -> str:
    """The key of a valid token: a digest, so the token itself is never stored (in Redis)."""
    return "token:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


class RateLimit:
    """`per_minute` requests per key, in a moving window."""

    def __init__(self, per_minute: int, storage_uri: str) -> None:
        # redis-py's asyncio client: the one Redis client the extra brings.
        options = {} if storage_uri.startswith("memory") else {"implementation": "redispy"}
        storage = storage_from_string(f"async+{storage_uri}", **options)
        assert isinstance(storage, Storage)  # noqa: S101 - an async+ scheme gives an async one
        self._limiter = MovingWindowRateLimiter(storage)
        self._item = RateLimitItemPerMinute(per_minute)

    async def retry_after(self, key: str) -> int:
        """0 when this request is allowed (and counted), else seconds until one will be."""
        if await self._limiter.hit(self._item, "kinetis-docs", key):
            return 0
        stats = await self._limiter.get_window_stats(self._item, "kinetis-docs", key)
        return max(1, math.ceil(stats.reset_time - time.time()))
