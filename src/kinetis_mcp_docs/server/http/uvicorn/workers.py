"""`serve --http --workers N`: N worker processes on one listening socket, each draining.

uvicorn's own supervisor makes each worker a plain `uvicorn.Server`, which has no drain,
and offers no way to make it another. This one starts each worker (a fresh interpreter, as
uvicorn's does, by `multiprocessing`'s spawn) as a `DrainingServer` over the socket the
parent bound, and:

- forwards SIGTERM to every worker once: each drains (readiness 503, answering on) for
  the drain time, then finishes what is in flight and exits; the parent exits 0 once
  every worker has;
- forwards SIGINT: every worker stops at once (a worker takes the terminal's Ctrl-C and
  the parent's forwarded one as one);
- starts a worker again if one dies while the server runs, unless it died before it
  started serving (its application failed to load, say: every restart would fail the
  same way), which stops them all, with the status 3 uvicorn gives that failure; and
  before it starts the next, marks the one that died dead for the metrics, whose gauges
  are summed over live workers only (see `metrics`).

A worker watches its supervisor too: should the parent die without stopping it (SIGKILL,
the OOM killer, a crash), the worker is reparented, sees so within a tick, and stops
(see `drain.DrainingServer`), so that no worker serves on unsupervised and a restarted
service can bind the port again.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading

from ...core.display import say
from ..settings import MULTIPROCESS_DIR
from .drain import DrainingServer

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from multiprocessing.process import BaseProcess
    from types import FrameType

    import uvicorn

STARTUP_FAILURE = 3
_WATCH_SECONDS = 0.5


def dead_for_metrics(pid: int) -> None:
    """Take worker `pid`'s gauges out of the figures every worker sums (`--metrics`).

    A worker that ends as it should does this itself (`RouteMetrics.close`); one that was
    killed left its files behind, and a gauge summed as the minimum over live workers
    (ready, pages, the index's age) went on counting a process that no longer exists: a
    worker killed while it built its index kept `kinetis_docs_ready` at 0 for good."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if directory:
        from prometheus_client.multiprocess import mark_process_dead  # noqa: PLC0415

        mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]


def _serve_worker(
    config: uvicorn.Config, listening: socket.socket, drain_seconds: float, parent: int
) -> None:
    """One worker, in its own process: the route on `listening` until it is told to stop,
    or until its supervisor, process `parent`, is gone."""
    config.configure_logging()
    server = DrainingServer(config, drain_seconds, parent=parent)
    # The parent stops the workers and reports what there is to report.
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[listening])
    sys.exit(0 if server.started else STARTUP_FAILURE)


class Workers:
    """`count` workers of `config` on `listening`."""

    def __init__(
        self,
        config: uvicorn.Config,
        listening: socket.socket,
        count: int,
        drain_seconds: float,
    ) -> None:
        self._config = config
        self._listening = listening
        self._count = count
        self._drain_seconds = drain_seconds
        self._context = multiprocessing.get_context("spawn")
        self._processes: list[BaseProcess] = []
        self._signals: list[int] = []
        self._woken = threading.Event()
        self._stopping = False
        self._failed = False

    def run(self) -> int:
        """Serve until told to stop; the exit status (0, or 3 when a worker failed to start)."""
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            self._processes = [self._start() for _ in range(self._count)]
            while self._processes:
                self._woken.wait(_WATCH_SECONDS)
                self._woken.clear()
                self._handle_signals()
                self._watch()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return STARTUP_FAILURE if self._failed else 0

    def _start(self) -> BaseProcess:
        process = self._context.Process(
            target=_serve_worker,
            args=(self._config, self._listening, self._drain_seconds, os.getpid()),
            name="kinetis-docs worker",
        )
        process.start()
        return process

    def _on_signal(self, sig: int, _frame: FrameType | None) -> None:
        # Only noted here: the watch loop acts on it (a handler may run mid-step of it).
        self._signals.append(sig)
        self._woken.set()

    def _handle_signals(self) -> None:
        while self._signals:
            sig = self._signals.pop(0)
            if sig == signal.SIGTERM and self._stopping:
                continue  # forwarded once: each worker is draining or stopping already
            self._stopping = True
            self._forward(sig)

    def _forward(self, sig: int) -> None:
        for process in self._processes:
            if process.is_alive() and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.kill(process.pid, sig)

    def _watch(self) -> None:
        """Reap the workers that ended; start another for one that died while serving."""
        running = []
        for process in self._processes:
            if process.is_alive():
                running.append(process)
                continue
            process.join()
            if process.pid is not None:
                dead_for_metrics(process.pid)
            if self._stopping:
                continue
            if process.exitcode == STARTUP_FAILURE:
                say(f"a worker failed to start (status {process.exitcode}); stopping the others")
                self._failed = self._stopping = True
                self._forward(signal.SIGINT)
                continue
            say(f"worker {process.pid} ended (status {process.exitcode}); starting another")
            running.append(self._start())
        self._processes = running
