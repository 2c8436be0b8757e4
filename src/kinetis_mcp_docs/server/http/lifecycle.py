"""Where one worker of the route is in its life: starting, serving, or draining.

- **Starting.** The search index is built as the worker starts, on a thread of its own,
  not by the first search: a search that came first used to build it while every
  concurrent search waited (2 to 14 s over a large tree). Meanwhile the worker answers,
  and its readiness says it is starting.
- **Serving.** Ready while its pages can be read and its index is built. Every
  `UPKEEP_SECONDS` the same thread brings the index up to date as a search would (a tree
  asks the kernel what changed; the catalogue is rebuilt in the background once its index
  is a minute old), so the index, its age and readiness stay current with no search at
  all: a catalogue whose origin was down at start becomes ready once it answers again,
  without waiting for a request that a load balancer would never send it.
- **Draining.** From the moment SIGTERM arrives (`begin_drain`) it says it is not ready,
  while it goes on answering, so that a load balancer takes it out before it stops.

What readiness says is worked out on every probe from the index's own state, which costs
a `stat` of a tree's root at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
import traceback
from dataclasses import dataclass

from ..core.display import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..site.pages import SitePages
    from .limits.ratelimit import RateLimit
    from .observe.metrics import RouteMetrics

UPKEEP_SECONDS = 5.0

STARTING = "starting"
READY = "ready"
UNREADY = "unready"
DRAINING = "draining"


@dataclass(frozen=True)
class Readiness:
    """What a readiness probe answers: `status` is `READY` or why not, with the details."""

    status: str
    details: dict[str, object]

    @property
    def ready(self) -> bool:
        return self.status == READY


class Lifecycle:
    """One worker's readiness and the upkeep of its index. `pages` None: a route that
    serves no page (a dark one), ready once started."""

    def __init__(
        self,
        pages: SitePages | None,
        limit: RateLimit,
        metrics: RouteMetrics | None = None,
        *,
        upkeep_seconds: float = UPKEEP_SECONDS,
    ) -> None:
        self._pages = pages
        self._limit = limit
        self._metrics = metrics
        self._upkeep_seconds = upkeep_seconds
        self._started = False
        self._build_failure: str | None = None  # why the first build failed, until one works
        self._drain_ends: float | None = None  # monotonic
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Read on every answer (to close connections while draining): a plain attribute.
        self.draining = False

    def start(self) -> None:
        """Build the index and keep it current, on a thread of this worker's own."""
        if self._pages is None:
            self._started = True
            self._publish()
            return
        self._thread = threading.Thread(
            target=self._upkeep, name="kinetis-docs index upkeep", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the upkeep; a build under way is not waited for (the process is ending)."""
        self._stop.set()

    def begin_drain(self, seconds: float) -> None:
        """Not ready from now on: SIGTERM arrived, the server stops accepting in `seconds`.

        Called from a signal handler, between two steps of whatever the event loop's thread
        was doing: it only sets attributes, and leaves the metrics (which take locks that
        thread may hold) to the loop's next turn."""
        if self._drain_ends is None:
            self._drain_ends = time.monotonic() + seconds
        self.draining = True
        with contextlib.suppress(RuntimeError):  # no loop running: nothing to publish
            asyncio.get_running_loop().call_soon_threadsafe(self._publish)

    def readiness(self) -> Readiness:
        """Whether this worker can serve now, and why not."""
        details: dict[str, object] = {}
        if self._drain_ends is not None:
            left = max(0.0, self._drain_ends - time.monotonic())
            details["reason"] = (
                f"SIGTERM received: draining, new connections refused in {left:.1f} s"
            )
            return self._with_limit(Readiness(DRAINING, details))
        if not self._started:
            failure = self._build_failure
            details["reason"] = (
                "building the search index"
                if failure is None
                else f"the search index could not be built ({failure}); trying again"
            )
            return self._with_limit(Readiness(STARTING, details))
        if self._pages is None:
            return self._with_limit(Readiness(READY, details))
        state = self._pages.index_state()
        details["pages"] = state.pages
        details["index_age_seconds"] = round(max(0.0, time.time() - state.updated_at), 1)
        if state.problem is not None:
            details["reason"] = state.problem
            return self._with_limit(Readiness(UNREADY, details))
        return self._with_limit(Readiness(READY, details))

    def _with_limit(self, readiness: Readiness) -> Readiness:
        """The rate limit's storage, as the last call to it found it. An unreachable Redis
        leaves the worker ready: the limit fails open, and the documentation is served."""
        if not self._limit.shared:
            readiness.details["rate_limit"] = {"storage": "memory"}
            return readiness
        problem = self._limit.storage_problem()
        limit: dict[str, object] = {"storage": "redis"}
        if problem is not None:
            limit.update(reachable=False, reason=problem, limit="not applied: fails open")
        else:
            limit["reachable"] = self._limit.storage_answered()
        readiness.details["rate_limit"] = limit
        return readiness

    def _upkeep(self) -> None:
        pages = self._pages
        assert pages is not None  # noqa: S101 - only started with pages to keep
        while not self._started:
            try:
                pages.prepare()
            except Exception as error:  # noqa: BLE001 - a failed build is retried, not fatal
                self._build_failure = f"{type(error).__name__}: {error}"[:200]
                say(
                    "search index: the first build failed; trying again in "
                    f"{self._upkeep_seconds:g} s"
                )
                traceback.print_exc(file=sys.stderr)
                self._publish()
                if self._stop.wait(self._upkeep_seconds):
                    return
                continue
            self._started = True
            self._build_failure = None
        self._publish()
        while not self._stop.wait(self._upkeep_seconds):
            try:
                pages.keep_current()
            except Exception:  # noqa: BLE001 - the next tick tries again; a search would too
                traceback.print_exc(file=sys.stderr)
            self._publish()

    def _publish(self) -> None:
        """The index's figures and readiness, into the metrics (each worker its own)."""
        metrics = self._metrics
        if metrics is None:
            return
        readiness = self.readiness()
        state = None if self._pages is None or not self._started else self._pages.index_state()
        metrics.worker_state(
            ready=readiness.ready,
            pages=None if state is None else state.pages,
            updated_at=None if state is None else state.updated_at,
        )
