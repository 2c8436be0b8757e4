"""The stdio server's dispatch: each frame read becomes an answer written whole.

Cheap methods run on the reading thread, in arrival order. Methods marked blocking
(those that reach the network) run on their own threads, at most `max_in_flight` at a
time, so a `ping` is answered while a slow read is in flight; their answers may
complete out of order, each written whole. When no thread can be started (the process is
at its limit of threads or address space), the request runs on the reading thread instead:
it is still answered, and reading goes on after it.

`threading` is imported with the first blocking request: it is not needed to answer
`initialize`, and costs start-up time.
"""

from __future__ import annotations

from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, RpcError
from ..protocol.jsonrpc import (
    EnvelopeError,
    Request,
    error_message,
    params_of,
    parse,
    result_message,
)
from .framing import FrameWriteError, FrameWriter, Oversized

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from ..protocol.dispatch import Method, MethodTable


MAX_IN_FLIGHT = 32


class Dispatcher:
    """Answers frames through a method table, writing each answer whole."""

    def __init__(
        self,
        table: MethodTable,
        writer: FrameWriter,
        on_fatal: Callable[[str], None],
        *,
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        self._table = table
        self._writer = writer
        self._on_fatal = on_fatal
        self._max_in_flight = max_in_flight
        self._slots: threading.BoundedSemaphore | None = None

    def receive(self, frame: bytes | Oversized) -> None:
        if isinstance(frame, Oversized):
            error = RpcError(INVALID_REQUEST, "Message exceeds the 2 MiB frame limit.")
            self._send(error_message(None, error))
            return
        if not frame:
            return  # A blank line carries no message; answering it could desync a client.
        try:
            message = parse(frame)
        except EnvelopeError as rejected:
            self._send(error_message(rejected.id, rejected.error))
            return
        if not isinstance(message, Request):
            return
        try:
            method = self._table.resolve(message.method)
            params = params_of(message)
        except RpcError as error:
            self._send(error_message(message.id, error))
            return
        if method.blocking:
            import threading  # noqa: PLC0415 - see the module's docstring

            if self._slots is None:
                self._slots = threading.BoundedSemaphore(self._max_in_flight)
            self._slots.acquire()
            work = (self._slots, message, method, params)
            worker = threading.Thread(target=self._run_in_slot, args=work, daemon=True)
            try:
                worker.start()
            except (RuntimeError, MemoryError):
                self._run_in_slot(*work)
        else:
            self._run(message, method, params)

    def drain(self) -> None:
        """Wait until every request in flight has been answered."""
        slots = self._slots
        if slots is None:
            return  # nothing ever ran on a thread
        for _ in range(self._max_in_flight):
            slots.acquire()
        for _ in range(self._max_in_flight):
            slots.release()

    def _run_in_slot(
        self,
        slots: threading.BoundedSemaphore,
        request: Request,
        method: Method,
        params: dict[str, object],
    ) -> None:
        try:
            self._run(request, method, params)
        finally:
            slots.release()

    def _run(self, request: Request, method: Method, params: dict[str, object]) -> None:
        try:
            answer = result_message(request.id, self._table.run(method, params))
        except RpcError as error:
            answer = error_message(request.id, error)
        except Exception:  # noqa: BLE001 - making the answer failed (out of memory): still one
            answer = error_message(request.id, RpcError(INTERNAL_ERROR, "Internal error"))
        self._send(answer)

    def _send(self, payload: bytes) -> None:
        try:
            self._writer.write(payload)
        except FrameWriteError as error:
            self._on_fatal(str(error))
