"""A real HTTPS documentation origin on 127.0.0.1, reached through a local CONNECT proxy.

The server fetches `https://raw.githubusercontent.com/kinetis-dev/kinetis/main/docs/<slug>.md`
and nothing else; these tests never reach the internet. `DocsOrigin` is a threaded HTTPS
server whose certificate (from `trustme`) is valid for `raw.githubusercontent.com`, plus a
`ConnectProxy` that tunnels every `CONNECT` to it. A process whose environment says
`HTTPS_PROXY=<proxy>` and `SSL_CERT_FILE=<the test CA>` therefore fetches its pages from
the origin over real TLS, with no change to the code under test. `DocsOrigin.environ()`
builds that environment for a subprocess; `DocsOrigin.apply_environ(monkeypatch)` applies it
to the test process. Both first drop the proxy and certificate variables of the machine
running the tests, so its own proxy or CA bundle never interferes. The proxy tunnels *every*
host to the origin: anything else in that environment that speaks HTTPS reaches the origin
too (and fails its TLS check unless it trusts the test CA).

Each path answers as the test scripts it with `serve()`; a path never served answers 404.
The origin counts TCP connections (`accepted`), completed TLS handshakes (`handshakes`) and
requests (`requests`), and the proxy counts tunnels (`proxy.connects`), so a test can assert
connection reuse. `wait_for_received(path)` waits (bounded) for a request to arrive, and
`wait_for_finished(path)` until the origin has finished answering it; its `outcome` says
whether the origin saw the client leave (`CLIENT_GONE`).

With the pytest fixtures of `tests/conftest.py`::

    def test_the_server_reads_the_index(docs_origin, origin_env, spawn_server):
        docs_origin.serve_docs()                    # docs/<slug>.md of this repository
        server = spawn_server(env=origin_env)
        ...                                         # resources/read kinetis://docs/index
        assert docs_origin.requests_for(page_path("index"))

    def test_an_in_process_fetch(origin_monkeypatch):
        origin_monkeypatch.serve_page("index", "# Index\\n")
        assert HttpPageSource().fetch("index") == "# Index\\n"
"""

from __future__ import annotations

import contextlib
import gzip as gzip_codec
import os
import selectors
import socket
import socketserver
import ssl
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.support.proxy import IO_TIMEOUT, ConnectProxy, ThreadedTcpServer

DOCS_PATH_PREFIX = "/kinetis-dev/kinetis/main/docs/"
"""The path of every page on the origin: `DOCS_PATH_PREFIX + slug + ".md"`."""
ORIGIN_HOSTS = ("raw.githubusercontent.com", "localhost", "127.0.0.1")
"""The names the origin's certificate is valid for."""
REPO_DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
"""This repository's `docs/`: the pages the server serves."""
STALL_LIMIT = 120.0
"""Seconds a stalled response waits for the client to leave or the origin to stop."""

PENDING = "pending"
COMPLETE = "complete"
CLIENT_GONE = "client gone"
STOPPED = "stopped"

# Variables that choose a proxy or the trusted certificates, compared in lower case.
_SCRUBBED_VARIABLES = frozenset(
    {
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "ssl_cert_file",
        "ssl_cert_dir",
        "requests_ca_bundle",
        "curl_ca_bundle",
    }
)
_GENERATED_BLOCK = b"x" * 65536


def page_path(slug: str) -> str:
    """The origin path the server requests for `kinetis://docs/<slug>`."""
    return f"{DOCS_PATH_PREFIX}{slug}.md"


@dataclass
class RequestRecord:
    """One request the origin received, and how answering it went."""

    method: str
    path: str
    headers: dict[str, str]
    """Request headers, names in lower case."""
    connection: int
    """Which TLS connection carried it: the ordinal of its handshake, from 1."""
    body_bytes_sent: int = 0
    """Body bytes written to the connection (compressed bytes, for a gzip body)."""
    outcome: str = PENDING
    """`PENDING` while answering; then `COMPLETE`, `CLIENT_GONE` or `STOPPED`."""
    finished: threading.Event = field(default_factory=threading.Event, repr=False)


@dataclass(frozen=True)
class _Route:
    status: int
    payload: bytes  # the bytes on the wire: already compressed for a gzip route
    headers: tuple[tuple[str, str], ...]
    content_encoding: str | None
    delay: float
    head_drip: float
    chunk_size: int | None
    chunk_delay: float
    stall_after: int | None
    generated_size: int | None
    rendezvous: threading.Barrier | None


_NOT_FOUND = _Route(404, b"not found\n", (), None, 0.0, 0.0, None, 0.0, None, None, None)


class HttpsOrigin(ThreadedTcpServer):
    """A threaded HTTPS/1.1 server (keep-alive) whose answer per path the test scripts."""

    def __init__(self, context: ssl.SSLContext, name: str = "https origin") -> None:
        super().__init__(name)
        self._context = context
        self._changed = threading.Condition(self._lock)
        self._routes: dict[str, _Route] = {}
        self._handshakes = 0
        self._handshake_failures: list[str] = []
        self._requests: list[RequestRecord] = []

    def serve(
        self,
        path: str,
        *,
        body: bytes = b"",
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        gzip: bool = False,
        content_encoding: str | None = None,
        delay: float = 0.0,
        head_drip: float = 0.0,
        chunk_size: int | None = None,
        chunk_delay: float = 0.0,
        stall_after: int | None = None,
        generated_size: int | None = None,
        rendezvous: threading.Barrier | None = None,
    ) -> None:
        """Script the answer to `GET path`, replacing any earlier one.

        - `body`, `status`, `headers`: the response; `Content-Length` is always sent.
        - `gzip`: send `body` gzip-compressed, with `Content-Encoding: gzip`.
        - `content_encoding`: send `body` exactly as given (encoded by the test any way, or
          not at all), labelled with this `Content-Encoding` value, whatever it says.
        - `delay`: seconds to wait before the status line.
        - `head_drip`: send the status line and headers one byte at a time, this many
          seconds apart (a response that keeps the connection busy without finishing its
          head).
        - `chunk_size`, `chunk_delay`: write the body in pieces of `chunk_size` bytes with
          `chunk_delay` seconds between them (a trickle).
        - `stall_after`: write that many body bytes, then nothing more until the client
          leaves or the origin stops (while `Content-Length` promises the whole body).
        - `generated_size`: instead of `body`, stream that many generated bytes — 200 MiB
          costs no memory.
        - `rendezvous`: wait at this barrier (bounded) before answering, so a test can hold
          N requests in flight at once.
        """
        if gzip:
            body, content_encoding = gzip_codec.compress(body, mtime=0), "gzip"
        route = _Route(
            status=status,
            payload=body,
            headers=tuple((headers or {}).items()),
            content_encoding=content_encoding,
            delay=delay,
            head_drip=head_drip,
            chunk_size=chunk_size,
            chunk_delay=chunk_delay,
            stall_after=stall_after,
            generated_size=generated_size,
            rendezvous=rendezvous,
        )
        with self._lock:
            self._routes[path] = route

    @property
    def handshakes(self) -> int:
        """TLS handshakes completed: new connections that reached HTTP."""
        with self._lock:
            return self._handshakes

    @property
    def handshake_failures(self) -> list[str]:
        """Why each failed TLS handshake failed, as the origin saw it."""
        with self._lock:
            return list(self._handshake_failures)

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, path: str) -> list[RequestRecord]:
        """The requests received so far for `path`."""
        return [record for record in self.requests if record.path == path]

    def wait_for_received(self, path: str, timeout: float = 10.0) -> RequestRecord:
        """The first request for `path`, as soon as it arrives; waits for it (bounded)."""
        return self._wait_for(path, timeout, finished=False)

    def wait_for_finished(self, path: str, timeout: float = 10.0) -> RequestRecord:
        """The first request for `path` the origin has finished answering; waits for it."""
        return self._wait_for(path, timeout, finished=True)

    def _wait_for(self, path: str, timeout: float, *, finished: bool) -> RequestRecord:
        def first_match() -> RequestRecord | None:
            for record in self._requests:
                if record.path == path and (record.finished.is_set() or not finished):
                    return record
            return None

        with self._changed:
            record = self._changed.wait_for(first_match, timeout)
        if record is None:
            state = "finished" if finished else "arrived"
            raise AssertionError(f"{self.name}: no request for {path} {state} in {timeout} s")
        return record

    def handle(self, conn: socket.socket) -> None:
        tls = self._context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        self.track(tls)
        try:
            try:
                tls.do_handshake()
            except OSError as error:  # ssl.SSLError included
                with self._lock:
                    self._handshake_failures.append(str(error))
                return
            with self._lock:
                self._handshakes += 1
                connection = self._handshakes
            _RequestHandler(tls, self, connection)
        finally:
            self.release(tls)
            tls.close()

    def answer(self, handler: _RequestHandler) -> None:
        """Answer one parsed request (called by the request handler)."""
        record = RequestRecord(
            method=handler.command,
            path=handler.path,
            headers={name.lower(): value for name, value in handler.headers.items()},
            connection=handler.connection_number,
        )
        with self._changed:
            self._requests.append(record)
            route = self._routes.get(handler.path, _NOT_FOUND)
            self._changed.notify_all()
        try:
            record.outcome = self._send(handler, route, record)
        except OSError:
            record.outcome = STOPPED if self.stopping.is_set() else CLIENT_GONE
        finally:
            if record.outcome != COMPLETE:
                handler.close_connection = True
            with self._changed:
                record.finished.set()
                self._changed.notify_all()

    def _send(self, handler: _RequestHandler, route: _Route, record: RequestRecord) -> str:
        if route.rendezvous is not None:
            try:
                route.rendezvous.wait(IO_TIMEOUT)
            except threading.BrokenBarrierError:
                return STOPPED
        if route.delay and self.stopping.wait(route.delay):
            return STOPPED
        head = _head(route)
        if route.head_drip:
            for index in range(len(head)):
                if index and self.stopping.wait(route.head_drip):
                    return STOPPED
                handler.wfile.write(head[index : index + 1])
        else:
            handler.wfile.write(head)
        if route.stall_after is not None:
            self._write(handler, record, route.payload[: route.stall_after])
            return self._stall(handler.connection)
        for index, piece in enumerate(_pieces(route)):
            if index and route.chunk_delay and self.stopping.wait(route.chunk_delay):
                return STOPPED
            self._write(handler, record, piece)
        return COMPLETE

    @staticmethod
    def _write(handler: _RequestHandler, record: RequestRecord, data: bytes) -> None:
        handler.wfile.write(data)
        record.body_bytes_sent += len(data)

    def _stall(self, sock: socket.socket) -> str:
        """Send nothing until the client leaves or the origin stops (bounded)."""
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_READ)
            selector.select(STALL_LIMIT)  # readable: the client closed, or stop() shut it
        return STOPPED if self.stopping.is_set() else CLIENT_GONE

    def _on_stop(self) -> None:
        with self._changed:
            barriers = [route.rendezvous for route in self._routes.values() if route.rendezvous]
            self._changed.notify_all()
        for barrier in barriers:
            barrier.abort()


class _RequestHandler(BaseHTTPRequestHandler):
    """Parses HTTP/1.1 requests off one TLS connection, keep-alive, for an `HttpsOrigin`."""

    protocol_version = "HTTP/1.1"
    server_version = "kinetis-docs-test-origin"
    timeout = IO_TIMEOUT

    def __init__(self, tls: ssl.SSLSocket, origin: HttpsOrigin, connection_number: int) -> None:
        self.origin = origin
        self.connection_number = connection_number
        # The base class serves the whole connection from its constructor.
        super().__init__(tls, ("127.0.0.1", 0), _NO_SOCKETSERVER)

    def do_GET(self) -> None:
        self.origin.answer(self)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the origin keeps its own records."""


# http.server's handler wants a socketserver; the origin is not one, and it is never used.
_NO_SOCKETSERVER = socketserver.BaseServer(("127.0.0.1", 0), socketserver.BaseRequestHandler)


def _head(route: _Route) -> bytes:
    """The status line and headers of `route`'s answer; `Content-Length` is always sent."""
    length = route.generated_size if route.generated_size is not None else len(route.payload)
    try:
        reason = HTTPStatus(route.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [
        f"HTTP/1.1 {route.status} {reason}",
        *(f"{name}: {value}" for name, value in route.headers),
    ]
    if route.content_encoding is not None:
        lines.append(f"Content-Encoding: {route.content_encoding}")
    lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _pieces(route: _Route) -> Iterator[bytes]:
    if route.generated_size is not None:
        block = _GENERATED_BLOCK[: route.chunk_size] if route.chunk_size else _GENERATED_BLOCK
        remaining = route.generated_size
        while remaining > 0:
            piece = block[:remaining]
            remaining -= len(piece)
            yield piece
    elif route.chunk_size:
        for start in range(0, len(route.payload), route.chunk_size):
            yield route.payload[start : start + route.chunk_size]
    elif route.payload:
        yield route.payload


class DocsOrigin(HttpsOrigin):
    """The documentation origin as the server sees it: an `HttpsOrigin` behind its proxy.

    `proxy` is the `ConnectProxy` in front of it, `ca_file` the PEM of the CA that signed
    its certificate, and `empty_cert_dir` an empty directory used as `SSL_CERT_DIR`.
    """

    def __init__(self, context: ssl.SSLContext, ca_file: Path, empty_cert_dir: Path) -> None:
        super().__init__(context, name="docs origin")
        self.proxy = ConnectProxy(self.port)
        self.ca_file = ca_file
        self.empty_cert_dir = empty_cert_dir

    def start(self) -> None:
        super().start()
        self.proxy.start()

    def stop(self) -> None:
        """Stop the origin, then its proxy; bounded, every thread joined."""
        try:
            super().stop()
        finally:
            self.proxy.stop()

    def serve_page(self, slug: str, text: str | bytes) -> str:
        """Serve `text` as the page `slug` (UTF-8 if a str); returns its origin path."""
        path = page_path(slug)
        self.serve(path, body=text.encode("utf-8") if isinstance(text, str) else text)
        return path

    def serve_docs(self, docs_dir: Path = REPO_DOCS_DIR) -> list[str]:
        """Serve every `docs_dir/<slug>.md` byte for byte; returns the slugs, sorted."""
        slugs = []
        for page in sorted(docs_dir.glob("*.md")):
            self.serve_page(page.stem, page.read_bytes())
            slugs.append(page.stem)
        return slugs

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) pointed at this origin.

        Drops every proxy and CA variable of `base` (`*_proxy` in any case, `NO_PROXY`
        included, `SSL_CERT_FILE`, `SSL_CERT_DIR`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`),
        then sets `HTTPS_PROXY` to the proxy, `SSL_CERT_FILE` to the test CA and
        `SSL_CERT_DIR` to an empty directory.
        """
        source = os.environ if base is None else base
        env = {name: value for name, value in source.items() if not _scrubbed(name)}
        env.update(self._variables())
        return env

    def apply_environ(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make this process's environment what `environ()` returns, until the test ends."""
        for name in list(os.environ):
            if _scrubbed(name):
                monkeypatch.delenv(name)
        for name, value in self._variables().items():
            monkeypatch.setenv(name, value)

    def _variables(self) -> dict[str, str]:
        return {
            "HTTPS_PROXY": self.proxy.url,
            "SSL_CERT_FILE": os.fspath(self.ca_file),
            "SSL_CERT_DIR": os.fspath(self.empty_cert_dir),
        }


def _scrubbed(name: str) -> bool:
    return name.lower() in _SCRUBBED_VARIABLES


@contextlib.contextmanager
def running_docs_origin(
    ca: trustme.CA, cert: trustme.LeafCert, directory: Path, *, tls_1_1_only: bool = False
) -> Iterator[DocsOrigin]:
    """A started `DocsOrigin` presenting `cert`, its CA written under `directory`; stopped
    (bounded, every thread joined) on exit."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(os.fspath(ca_file))
    empty_cert_dir = directory / "no-certs"
    empty_cert_dir.mkdir(exist_ok=True)
    origin = DocsOrigin(server_context(cert, tls_1_1_only=tls_1_1_only), ca_file, empty_cert_dir)
    origin.start()
    try:
        yield origin
    finally:
        origin.stop()


def server_context(cert: trustme.LeafCert, *, tls_1_1_only: bool = False) -> ssl.SSLContext:
    """The origin's TLS context; with `tls_1_1_only`, one that offers TLS 1.1 and nothing
    else (which needs OpenSSL security level 0)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if tls_1_1_only:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1_1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
    cert.configure_cert(context)
    return context


def tls_1_1_unavailable(ca: trustme.CA, cert: trustme.LeafCert) -> str | None:
    """Why this Python's OpenSSL cannot run a TLS 1.1-only origin, or None if it can.

    Tried for real: a handshake in memory between the origin's context and a client that
    accepts TLS 1.1 must complete at TLS 1.1.
    """
    if not ssl.HAS_TLSv1_1:
        return "this Python's OpenSSL was built without TLS 1.1"
    try:
        server = server_context(cert, tls_1_1_only=True)
        client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ca.configure_trust(client)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            client.minimum_version = ssl.TLSVersion.TLSv1_1
        client.set_ciphers("DEFAULT:@SECLEVEL=0")
        version = _handshake_in_memory(client, server, ORIGIN_HOSTS[0])
    except (ssl.SSLError, ValueError) as error:
        return f"this Python's OpenSSL cannot offer TLS 1.1: {error}"
    if version != "TLSv1.1":
        return f"a TLS 1.1-only origin negotiated {version}, not TLSv1.1"
    return None


def _handshake_in_memory(
    client_context: ssl.SSLContext, server_context: ssl.SSLContext, host: str
) -> str | None:
    """Run a TLS handshake between two contexts over memory buffers; the version agreed."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(to_client, to_server, server_hostname=host)
    server = server_context.wrap_bio(to_server, to_client, server_side=True)
    pending = [client, server]
    for _ in range(10):  # a handshake takes a few round trips; never loop for ever
        for side in list(pending):
            try:
                side.do_handshake()
            except ssl.SSLWantReadError:
                continue
            pending.remove(side)
        if not pending:
            return client.version()
    raise ssl.SSLError("the in-memory handshake did not complete")
