"""`--metrics`: the route's figures in Prometheus' text format at `GET /metrics`.

Counted with `prometheus_client`, the Prometheus project's own client, rather than by hand:
it writes the text format exactly, and its multiprocess mode sums the figures of every
worker of `serve --http --workers N` (each worker writes its values into memory-mapped
files in `PROMETHEUS_MULTIPROC_DIR`, which `serve --http` makes for the run and removes
after; whichever worker answers a scrape reads them all). Without that variable the
figures are this process's own.

- `kinetis_docs_requests_total{method,tool,status}`: requests to the route, by JSON-RPC
  method (`other` for a method the route does not have, empty when there was no call to
  read: refused before the body, or malformed), tool (for `tools/call`: `search_docs`,
  `fetch_page` or `other`; else empty) and HTTP status. Labels take only these values,
  whatever a client sends, so the series stay few.
- `kinetis_docs_request_duration_seconds{method}`: a histogram of the time from the
  request's arrival at the application to its answer.
- `kinetis_docs_rate_limited_total`: requests answered 429.
- `kinetis_docs_rate_limit_storage_errors_total`: calls to a shared (Redis) limit storage
  that failed (each request then served without the limit).
- `kinetis_docs_page_fetches_total{outcome}`: pages read, for a tool or for the index:
  `ok`, `missing` (no such page) or `failed` (the origin failing, a file over the bounds).
- `kinetis_docs_index_pages`: the pages in the search index (of the worker holding fewest).
- `kinetis_docs_index_age_seconds`: since the index was last built or found current (of
  the worker whose index is oldest), worked out at the scrape.
- `kinetis_docs_ready`: 1 when every worker is ready (see `probes`), else 0.

A request is recorded on the event loop's thread as one row (its labels, status and
duration; see `batch`), and the rows are added up and folded into `prometheus_client`'s
values at most `FOLD_SECONDS` later or once `FOLD_ROWS` wait (and before this worker
answers a scrape, and when it stops): in multiprocess mode each value written is a lock
and a write into the memory-mapped file, three for a request (its count, its histogram
bucket, the histogram's sum), which cost a request more than the rest of the route.
Figures of another worker are therefore up to `FOLD_SECONDS` old at a scrape, far below
any scrape interval.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from ..settings import MULTIPROCESS_DIR
from .batch import Batch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from prometheus_client.registry import Collector

    from .access_log import Note

# The methods and tools a label may name; anything else a client sends is `other`.
METHODS = frozenset({"initialize", "ping", "server/discover", "tools/list", "tools/call"})
TOOLS = frozenset({"search_docs", "fetch_page"})
OUTCOMES = ("ok", "missing", "failed")
# From a ping on loopback (well under a millisecond) to the slowest admissible search.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_UPDATED = "kinetis_docs_index_updated_timestamp_seconds"
FOLD_SECONDS = 1.0
# Or as soon as this many requests wait to be folded, whichever comes first.
FOLD_ROWS = 4096


def method_label(method: str | None) -> str:
    if method is None:
        return ""
    return method if method in METHODS else "other"


def tool_label(method: str | None, tool: str | None) -> str:
    if method != "tools/call":
        return ""
    return tool if tool in TOOLS else "other"


class RouteMetrics:
    """One worker's metrics. `multiprocess_dir`: where every worker's values are kept
    (`PROMETHEUS_MULTIPROC_DIR`, which must be set before `prometheus_client` is imported:
    it chooses how values are stored then); None, this process's own."""

    def __init__(self, multiprocess_dir: str | None = None) -> None:
        self._dir = multiprocess_dir
        # A registry of its own: nothing here touches prometheus_client's global one.
        registry = self._registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "kinetis_docs_requests",
            "Requests to the MCP route, by JSON-RPC method, tool and HTTP status.",
            ("method", "tool", "status"),
            registry=registry,
        )
        self._duration = Histogram(
            "kinetis_docs_request_duration_seconds",
            "Time from a request's arrival at the application to its answer.",
            ("method",),
            buckets=BUCKETS,
            registry=registry,
        )
        self._limited = Counter(
            "kinetis_docs_rate_limited", "Requests answered 429 (rate limit).", registry=registry
        )
        self._storage_errors = Counter(
            "kinetis_docs_rate_limit_storage_errors",
            "Calls to the shared rate-limit storage that failed (the limit then fails open).",
            registry=registry,
        )
        fetches = Counter(
            "kinetis_docs_page_fetches",
            "Pages read (for a tool or the index), by outcome: ok, missing, failed.",
            ("outcome",),
            registry=registry,
        )
        self._fetches = {outcome: fetches.labels(outcome) for outcome in OUTCOMES}
        self._pages = Gauge(
            "kinetis_docs_index_pages",
            "Pages in the search index (of the worker holding fewest).",
            registry=registry,
            multiprocess_mode="livemin",
        )
        self._updated = Gauge(
            _UPDATED,
            "When the search index was last built or found current (of the oldest worker).",
            registry=registry,
            multiprocess_mode="livemin",
        )
        self._ready = Gauge(
            "kinetis_docs_ready",
            "1 when every worker is ready to serve, else 0.",
            registry=registry,
            multiprocess_mode="livemin",
        )
        self._ready.set(0)
        # (method label, tool label, status, seconds, rate-limited) of each request since
        # the last fold, which adds them up: recording a request is one append.
        self._observed: Batch[tuple[str, str, int, float, bool]] = Batch(
            self._add_up, most=FOLD_ROWS, seconds=FOLD_SECONDS
        )
        # `fold` adds to a histogram child's bucket and sum values directly (an observation
        # adds one to each): prometheus_client has no call adding many at once. Checked
        # here, so that a release that renames them stops the start, not a request.
        probe = self._duration.labels("ping")
        if not (hasattr(probe, "_sum") and len(getattr(probe, "_buckets", ())) == len(BUCKETS) + 1):
            raise RuntimeError("prometheus_client's Histogram no longer keeps _sum and _buckets")

    @classmethod
    def from_environ(cls) -> RouteMetrics:
        return cls(os.environ.get(MULTIPROCESS_DIR) or None)

    # What the route and its parts report.

    def observe(self, note: Note, status: int, seconds: float) -> None:
        """One request answered (or given up on) after `seconds`; on the event loop."""
        method = note.method
        self._observed.add(
            (
                method_label(method),
                tool_label(method, note.tool),
                status,
                seconds,
                note.limited,
            )
        )

    def fold(self) -> None:
        """The requests observed since the last fold, into prometheus_client's values."""
        self._observed.flush()

    def _add_up(self, observed: list[tuple[str, str, int, float, bool]]) -> None:
        # (method, tool, status) -> requests, seconds in all, and requests per histogram
        # bucket (the last one +Inf).
        pending: dict[tuple[str, str, int], list[Any]] = {}
        limited = 0
        for method, tool, status, seconds, was_limited in observed:
            key = (method, tool, status)
            sums = pending.get(key)
            if sums is None:
                sums = pending[key] = [0, 0.0, [0] * (len(BUCKETS) + 1)]
            sums[0] += 1
            sums[1] += seconds
            # The first bucket whose bound is at least `seconds`, as prometheus_client does.
            sums[2][bisect_left(BUCKETS, seconds)] += 1
            limited += was_limited
        for (method, tool, status), (count, total, buckets) in pending.items():
            self._requests.labels(method, tool, str(status)).inc(count)
            histogram = self._duration.labels(method)
            histogram._sum.inc(total)  # see `__init__`: checked at start
            values = histogram._buckets
            for index, added in enumerate(buckets):
                if added:
                    values[index].inc(added)
        if limited:
            self._limited.inc(limited)

    def page_fetched(self, outcome: str) -> None:
        self._fetches[outcome].inc()

    def storage_failed(self) -> None:
        self._storage_errors.inc()

    def worker_state(self, *, ready: bool, pages: int | None, updated_at: float | None) -> None:
        self._ready.set(1 if ready else 0)
        if pages is not None:
            self._pages.set(pages)
        if updated_at is not None:
            self._updated.set(updated_at)

    # The scrape.

    def exposition(self) -> tuple[bytes, bytes]:
        """The text format of every worker's figures, and its content type."""
        source: Collector
        if self._dir is None:
            source = self._registry
        else:
            source = MultiProcessCollector(None, path=self._dir)  # type: ignore[no-untyped-call]
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_WithIndexAge(source))
        return generate_latest(registry), CONTENT_TYPE_LATEST.encode("ascii")

    def close(self) -> None:
        """This worker is ending: its last requests are folded in, and its "live" gauges no
        longer count toward the figures."""
        self.fold()
        if self._dir is not None:
            mark_process_dead(os.getpid(), self._dir)  # type: ignore[no-untyped-call]


class _WithIndexAge:
    """A collector yielding another's metrics, plus the index's age worked out now from the
    time it was last updated: a gauge set by a worker would be as old as its last update."""

    def __init__(self, source: Collector) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        updated: list[float] = []
        for family in self._source.collect():
            if family.name == _UPDATED:
                updated.extend(sample.value for sample in family.samples if sample.value > 0)
            yield family
        age = GaugeMetricFamily(
            "kinetis_docs_index_age_seconds",
            "Seconds since the search index was last built or found current (oldest worker).",
        )
        if updated:
            age.add_metric([], max(0.0, time.time() - min(updated)))
        yield age
