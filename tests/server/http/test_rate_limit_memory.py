"""The in-memory rate limit: the cost of a count, the bound on its memory, and its arithmetic,
which is the one the shared (Redis) limit uses."""

from __future__ import annotations

import asyncio
import statistics
import time

from kinetis_mcp_docs.server.http.limits.ratelimit import RateLimit


class Clock:
    """Seconds, moved by hand: the window's turns are tested without waiting for them."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _answers(limit: RateLimit, key: str, count: int) -> list[int]:
    async def hits() -> list[int]:
        return [await limit.retry_after(key) for _ in range(count)]

    return asyncio.run(hits())


def _seconds_per_hit(limit: RateLimit, keys: list[str], hits: int) -> float:
    """The least of three rounds of `hits` counts spread over `keys`, per count. The event
    loop runs between two counts, as it does between two requests: whatever a count
    leaves for the loop to do is paid for too."""

    async def rounds() -> list[float]:
        spent = []
        for _ in range(3):
            began = time.perf_counter()
            for n in range(hits):
                await limit.retry_after(keys[n * 7919 % len(keys)])
                await asyncio.sleep(0)
            spent.append((time.perf_counter() - began) / hits)
        return spent

    return min(asyncio.run(rounds()))


def _fill(limit: RateLimit, count: int) -> list[str]:
    keys = [f"address:10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}" for n in range(count)]

    async def fill() -> None:
        for key in keys:
            await limit.retry_after(key)

    asyncio.run(fill())
    return keys


def test_a_count_costs_the_same_with_100000_other_live_keys_as_with_10() -> None:
    few = RateLimit(1_000_000_000, "memory://")
    many = RateLimit(1_000_000_000, "memory://")
    few_keys, many_keys = _fill(few, 10), _fill(many, 100_000)
    ratios = []
    for _ in range(3):  # in pairs, seconds apart, so that a busy moment hits both of one
        at_ten = _seconds_per_hit(few, few_keys, 10_000)
        ratios.append(_seconds_per_hit(many, many_keys, 10_000) / at_ten)
    # The middle pair: a loaded machine changes speed between rounds (single rounds were
    # 4x apart either way, and one quick round of ten keys made the two rounds' quickest
    # 4x apart). The bench holds the target (1.2x). Here the bound sits between the two
    # kinds of cost: a count that looked at every key cost 15-20x in every pair, while one
    # that does not has had pairs of 3.6x and a middle pair of 3.2x (100,000 keys do not
    # fit in the processor's cache, and ten do).
    assert statistics.median(ratios) < 8, ratios


def test_a_full_table_forgets_the_key_seen_least_recently_and_keeps_limiting_the_busy_one() -> None:
    clock = Clock()
    limit = RateLimit(3, "memory://", max_keys=100, clock=clock)
    assert _answers(limit, "address:192.0.2.1", 4)[-1] > 0  # the first key, at its limit
    assert _answers(limit, "address:192.0.2.2", 4)[-1] > 0  # the busy one, at its limit
    for n in range(300):  # three tables' worth of other keys, the busy key among them
        assert _answers(limit, f"address:10.0.{n >> 8}.{n & 255}", 1) == [0]
        assert _answers(limit, "address:192.0.2.2", 1)[0] > 0
    # The first key was forgotten to make room: a fresh budget, never a lock-out.
    assert _answers(limit, "address:192.0.2.1", 1) == [0]


def test_the_previous_minute_counts_by_the_share_of_it_still_inside_the_last_60_seconds() -> None:
    clock = Clock()
    limit = RateLimit(10, "memory://", clock=clock)
    key = "address:192.0.2.1"
    assert _answers(limit, key, 11) == [0] * 10 + [60]  # room again when the window turns
    clock.now += 61  # 59 s of the last minute still count: 10 * 59/60 is 9, room for 1
    assert [wait == 0 for wait in _answers(limit, key, 2)] == [True, False]
    clock.now += 29  # 30 s of it count now: 5, and the one hit of this minute: room for 4
    assert [wait == 0 for wait in _answers(limit, key, 5)] == [True] * 4 + [False]
    clock.now += 120  # two minutes without a request: a fresh start
    assert _answers(limit, key, 10) == [0] * 10
