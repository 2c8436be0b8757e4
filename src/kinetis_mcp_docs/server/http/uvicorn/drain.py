"""SIGTERM drains: uvicorn's server, taken out of a load balancer before it stops.

uvicorn stops accepting the moment SIGTERM arrives, so a load balancer still sending to
the replica gets refused connections until its health check notices. `DrainingServer`
instead, on SIGTERM:

1. tells the route (`begin_drain`), whose `/readyz` answers 503 from then on, and whose
   answers close their connections, so that none is left idle for the balancer to reuse;
2. goes on accepting and answering for `drain_seconds`, time for the balancer's health
   check to take the replica out (HAProxy: `inter` times `fall`);
3. then stops as uvicorn stops: no new connection, what is in flight finished (up to
   uvicorn's `timeout_graceful_shutdown`, 10 s), and the process exits 0. uvicorn would
   raise SIGTERM again once done, which kills the process with it; a drain is the
   expected end of a deploy, not a failure.

A repeated SIGTERM changes nothing (systemd signals every process of a service, and then
the supervisor forwards its own). SIGINT (Ctrl-C) stops at once, as uvicorn does; a second
one stops without waiting for what is in flight, unless the server is a worker of
`workers`, whose parent forwards the SIGINT the terminal sent it too.

A worker of `workers` is given its supervisor's pid (`parent`). Should the supervisor die
without stopping it (SIGKILL, the OOM killer), the kernel makes another process the
worker's parent; the worker sees that on its next tick, says so, and stops as on SIGINT,
what is in flight given at most `ORPHAN_GRACE_SECONDS` to finish: with no supervisor,
nobody would restart it or stop it, and the port would stay taken for as long as it ran.

Signal handlers run between two steps of the event loop's thread, so the handler only
sets attributes; what it has to say is said on the server's next tick (0.1 s later).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import uvicorn

from ...core.display import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType

# How long what is in flight may take to finish once a worker's supervisor is gone.
ORPHAN_GRACE_SECONDS = 2.0


def _drainable(app: Any) -> Any:
    """The route under whatever uvicorn wrapped it in (a middleware keeps it as `app`)."""
    for _ in range(8):
        if app is None or hasattr(app, "begin_drain"):
            return app
        app = getattr(app, "app", None)
    return None


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining `drain_seconds` on SIGTERM before it stops."""

    def __init__(
        self, config: uvicorn.Config, drain_seconds: float, *, parent: int | None = None
    ) -> None:
        """`parent`: the pid of the supervisor of a worker of `workers`; None for a server
        that is a process of its own."""
        super().__init__(config)
        self._drain_seconds = drain_seconds
        self._worker = parent is not None
        self._parent = parent
        self._drain_ends: float | None = None
        self._announced = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM:
            if self.should_exit or self._drain_ends is not None:
                return  # stopping already, or draining: a repeated SIGTERM changes nothing
            if self._drain_seconds <= 0:
                self.should_exit = True
                return
            self._drain_ends = time.monotonic() + self._drain_seconds
            route = _drainable(getattr(self.config, "loaded_app", None))
            if route is not None:
                route.begin_drain(self._drain_seconds)
            return
        if self._worker and self.should_exit and sig == signal.SIGINT:
            return  # the terminal's Ctrl-C and the parent's forwarded one are one request
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self._parent is not None and os.getppid() != self._parent and not self.should_exit:
            say(f"the supervisor (process {self._parent}) is gone: this worker stops")
            self.should_exit = True
            asyncio.get_running_loop().call_later(ORPHAN_GRACE_SECONDS, self._force_exit)
        ends = self._drain_ends
        if ends is not None and not self.should_exit:
            if not self._announced:
                self._announced = True
                say(
                    f"SIGTERM: not ready, still answering for {self._drain_seconds:g} s, "
                    "then stopping"
                )
            if time.monotonic() >= ends:
                self.should_exit = True
        return await super().on_tick(counter)

    def _force_exit(self) -> None:
        self.force_exit = True
