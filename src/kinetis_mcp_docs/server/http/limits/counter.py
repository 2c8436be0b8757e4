"""The in-memory rate count: a sliding-window counter whose cost and memory do not grow with
the number of clients.

The arithmetic is that of the `limits` library's sliding window counter on Redis (its Lua
script), so one instance counting alone and several sharing Redis answer alike: each key
has a window of 60 seconds that begins at its first request and turns every 60 seconds
after; a request is allowed while this window's count plus the previous window's count,
weighted by the share of the previous window still inside the last 60 seconds, leaves
room for it. A refused request is not counted. `limits`' own memory storage aligns its
windows to the clock's minutes instead, and on every count runs an expiry pass over every
key it holds: at 20,000 keys a request cost 4-5 ms instead of 0.2, for every client.

Here a count is a dictionary lookup and a move to the end of an ordered dictionary, O(1)
whatever the number of keys. The keys are bounded (`max_keys`): a key that has seen no
request for two windows is forgotten when a new one comes, and when the table is full the
key seen least recently is forgotten to make room. Forgetting a key only ever gives it a
fresh budget; refusing new keys instead would let anyone holding enough addresses lock
every newcomer out, and counting them in one shared bucket would do the same. A client
that keeps sending keeps its key, and its limit, however many others come and go.

The clock is `time.monotonic`: windows are lengths of time, not dates, and a clock set
back must not hand out a new budget.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable

WINDOW_SECONDS = 60.0
# About 250 bytes a key (its text, three numbers, the table's entry): some 25 MiB when
# full. No instance of a documentation site sees 100,000 clients within two minutes.
MAX_KEYS = 100_000
# Keys forgotten, at most, each time a new key comes: enough to keep up, since every new
# key can leave at most one old one behind.
_PRUNED_PER_KEY = 2


class SlidingWindowCounter:
    """`amount` requests per window per key, in memory, for one process."""

    __slots__ = ("_amount", "_clock", "_entries", "_max_keys")

    def __init__(
        self,
        amount: int,
        *,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._amount = amount
        self._max_keys = max_keys
        self._clock = clock
        # key -> (end of its current window, this window's count, the previous window's):
        # a tuple of a float and two small ints, which the garbage collector stops tracking
        # and which, at 100,000 keys, takes half the memory of a list of three floats.
        self._entries: OrderedDict[str, tuple[float, int, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def hit(self, key: str) -> int:
        """0 when this request is allowed (and counted), else the whole seconds until one
        will be (at least 1): a `Retry-After`."""
        now = self._clock()
        entries = self._entries
        entry = entries.get(key)
        if entry is not None and now < entry[0] and not entry[2]:
            # The common case, a key inside its first window (or one whose previous window
            # was empty): no weight to work out, a lookup, a move and a store.
            end, current, _ = entry
            entries.move_to_end(key)
            if current < self._amount:
                entries[key] = (end, current + 1, 0)
                return 0
            return max(1, math.ceil(end - now))
        if entry is None:
            self._make_room(now)
            end, current, previous = now + WINDOW_SECONDS, 0, 0
        else:
            entries.move_to_end(key)
            end, current, previous = entry
            if now >= end + WINDOW_SECONDS:  # no request for a whole window: a fresh start
                end, current, previous = now + WINDOW_SECONDS, 0, 0
            elif now >= end:  # the window turned: this one's count becomes the previous
                end, current, previous = end + WINDOW_SECONDS, 0, current
        left = end - now  # of this window; also what of the previous one still counts
        allowed = math.floor(previous * left / WINDOW_SECONDS) + current + 1 <= self._amount
        entries[key] = (end, current + 1 if allowed else current, previous)
        if allowed:
            return 0
        # As `limits` estimates it: when the previous window's weight drops by one request,
        # or this window ends, whichever comes first.
        wait = left
        if previous:
            wait = min(wait, left % (WINDOW_SECONDS / previous))
        return max(1, math.ceil(wait))

    def _make_room(self, now: float) -> None:
        entries = self._entries
        for _ in range(_PRUNED_PER_KEY):
            if not entries:
                return
            oldest = next(iter(entries.values()))
            if now < oldest[0] + WINDOW_SECONDS:
                break  # the least recent key still counts, and so do all the others
            entries.popitem(last=False)
        if len(entries) >= self._max_keys:
            entries.popitem(last=False)
