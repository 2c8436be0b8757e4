"""A minimal HTTP CONNECT proxy on 127.0.0.1, and the threaded TCP server it is built on.

`ConnectProxy` tunnels every `CONNECT` to one upstream address, whatever host the client
asked for, so `raw.githubusercontent.com:443` lands on the local test origin. It counts the
tunnels it opened. `ThreadedTcpServer` is shared with the origin (`tests.support.origin`):
one thread per connection, and a `stop()` that is bounded and leaves no thread behind.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
import types

IO_TIMEOUT = 30.0
"""Seconds any single socket operation of a test server may block."""
STOP_TIMEOUT = 10.0
"""Seconds `stop()` waits for the server's threads before failing the test."""
TUNNEL_IDLE_LIMIT = 120.0
"""Seconds a tunnel may carry nothing in either direction before the proxy drops it."""
_MAX_HEAD_BYTES = 64 * 1024


class ThreadedTcpServer:
    """Accepts TCP connections on 127.0.0.1 and serves each on its own thread.

    Subclasses implement `handle(conn)`. An `OSError` out of it means the peer went away
    (or `stop()` shut the socket down) and is ignored; any other exception is a bug of the
    test server and is raised again by `stop()`.

    `stop()` wakes every handler by shutting down the sockets registered with `track()` —
    every accepted connection is — and sets `stopping`, which handlers wait on instead of
    sleeping. It then joins every thread, and fails if one is still alive after
    `STOP_TIMEOUT` seconds.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._started = False
        self._stopped = False
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._errors: list[Exception] = []
        self._accepted = 0
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"{name} accept", daemon=True
        )

    @property
    def port(self) -> int:
        """The port the server listens on, at 127.0.0.1."""
        port: int = self._listener.getsockname()[1]
        return port

    @property
    def stopping(self) -> threading.Event:
        """Set once `stop()` begins; handlers wait on it rather than sleeping."""
        return self._stopping

    @property
    def accepted(self) -> int:
        """TCP connections accepted so far."""
        with self._lock:
            return self._accepted

    def start(self) -> None:
        """Start accepting connections."""
        self._started = True
        self._acceptor.start()

    def stop(self) -> None:
        """Stop accepting, end every connection, join every thread (bounded); idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._stopping.set()
            sockets = list(self._sockets)
        self._on_stop()
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"x")
        if self._started:
            self._acceptor.join(STOP_TIMEOUT)
        for sock in sockets:
            shut_down(sock)
        with self._lock:
            threads = [*self._threads, self._acceptor] if self._started else []
        give_up_at = time.monotonic() + STOP_TIMEOUT
        for thread in threads:
            thread.join(max(0.0, give_up_at - time.monotonic()))
        self._listener.close()
        self._wake_reader.close()
        self._wake_writer.close()
        alive = [thread.name for thread in threads if thread.is_alive()]
        if alive:
            raise AssertionError(f"{self.name}: threads still running after stop: {alive}")
        if self._errors:
            raise self._errors[0]

    def __enter__(self) -> ThreadedTcpServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: types.TracebackType | None,
    ) -> None:
        self.stop()

    def handle(self, conn: socket.socket) -> None:
        """Serve one accepted connection; the server closes it afterwards."""
        raise NotImplementedError

    def track(self, sock: socket.socket) -> None:
        """Have `stop()` shut `sock` down; at once if the server is already stopping."""
        with self._lock:
            self._sockets.add(sock)
            stopping = self._stopping.is_set()
        if stopping:
            shut_down(sock)

    def release(self, sock: socket.socket) -> None:
        """Forget a socket registered with `track()`, before closing it."""
        with self._lock:
            self._sockets.discard(sock)

    def _on_stop(self) -> None:
        """Hook: release anything handlers may wait on besides sockets and `stopping`."""

    def _accept_loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _events in selector.select():
                    if key.fileobj is self._wake_reader:
                        return
                    try:
                        conn, _address = self._listener.accept()
                    except OSError:
                        continue
                    self._spawn(conn)

    def _spawn(self, conn: socket.socket) -> None:
        with self._lock:
            if self._stopping.is_set():
                conn.close()
                return
            self._accepted += 1
            self._sockets.add(conn)
            self._threads = [thread for thread in self._threads if thread.is_alive()]
            thread = threading.Thread(
                target=self._serve_connection,
                args=(conn,),
                name=f"{self.name} connection {self._accepted}",
                daemon=True,
            )
            self._threads.append(thread)
            thread.start()

    def _serve_connection(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(IO_TIMEOUT)
            self.handle(conn)
        except OSError:
            pass  # the peer went away, or stop() shut the socket down
        except Exception as error:  # noqa: BLE001 - a bug of the test server, raised by stop()
            with self._lock:
                self._errors.append(error)
        finally:
            self.release(conn)
            conn.close()


class ConnectProxy(ThreadedTcpServer):
    """An HTTP proxy that answers only `CONNECT`, tunnelling every one to `upstream_port`.

    `url` is what `HTTPS_PROXY` should say; `connects` counts the tunnels opened and
    `targets` lists the `host:port` each `CONNECT` asked for.
    """

    def __init__(self, upstream_port: int) -> None:
        super().__init__("connect proxy")
        self._upstream = ("127.0.0.1", upstream_port)
        self._targets: list[str] = []

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`, for `HTTPS_PROXY`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def connects(self) -> int:
        """`CONNECT` requests received so far."""
        with self._lock:
            return len(self._targets)

    @property
    def targets(self) -> list[str]:
        """The `host:port` of every `CONNECT`, in order."""
        with self._lock:
            return list(self._targets)

    def handle(self, conn: socket.socket) -> None:
        head, early_data = _read_head(conn)
        if head is None:
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(request_line) != 3 or request_line[0] != "CONNECT":
            conn.sendall(
                b"HTTP/1.1 405 Method Not Allowed\r\n"
                b"Allow: CONNECT\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            return
        with self._lock:
            self._targets.append(request_line[1])
        upstream = socket.create_connection(self._upstream, timeout=IO_TIMEOUT)
        self.track(upstream)
        try:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if early_data:
                upstream.sendall(early_data)
            _pump(conn, upstream)
        finally:
            self.release(upstream)
            upstream.close()


def _read_head(conn: socket.socket) -> tuple[bytes | None, bytes]:
    """The request head up to its blank line, and whatever followed it."""
    received = b""
    while b"\r\n\r\n" not in received:
        if len(received) > _MAX_HEAD_BYTES:
            return None, b""
        data = conn.recv(4096)
        if not data:
            return None, b""
        received += data
    head, _, rest = received.partition(b"\r\n\r\n")
    return head, rest


def _pump(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until either side closes; then the tunnel is over."""
    peer = {client: upstream, upstream: client}
    with selectors.DefaultSelector() as selector:
        selector.register(client, selectors.EVENT_READ)
        selector.register(upstream, selectors.EVENT_READ)
        while True:
            ready = selector.select(TUNNEL_IDLE_LIMIT)
            if not ready:
                return
            for key, _events in ready:
                source = client if key.fileobj is client else upstream
                data = source.recv(65536)
                if not data:
                    return
                peer[source].sendall(data)


def shut_down(sock: socket.socket) -> None:
    """Shut a socket down without closing it, waking any thread blocked on it.

    `socket.socket.shutdown` rather than the method of the object, because
    `ssl.SSLSocket.shutdown` also drops the TLS state the owning thread may be using.
    """
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
