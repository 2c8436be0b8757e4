"""The page fetcher: the only module of the server that touches the network.

A page is `ORIGIN_PREFIX + slug + ".md"`, built from constants: there is no origin, ref or
path to configure, no local copy and no cache. Each fetch is one bounded HTTPS GET:

- TLS verifies the peer and its host name, at TLS 1.2 or later. The trusted certificates
  are the ones `SSL_CERT_FILE` or `SSL_CERT_DIR` name, else certifi's bundle.
- A proxy named by `HTTPS_PROXY` / `ALL_PROXY` is used, except for hosts in `NO_PROXY`.
- Redirects are not followed, and any status other than 200 fails.
- Every network operation fails after `idle_timeout` seconds without progress (connect,
  TLS handshake, send, each read, a wait for a pooled connection), and the whole fetch after
  `total_deadline` seconds, whatever the origin does (see `HttpPageSource`).
- Only `gzip` and `deflate` are asked for; the body is streamed raw and decoded by
  `content_coding`, which refuses any other coding and bounds the decoded bytes while it
  decodes: abandoned as soon as they pass `max_body_bytes`, or a hundred times the raw
  bytes decoded (past the first 64 KiB). It must be valid UTF-8.

Every failure is a `PageFetchError` carrying a reason for the operator's log. Library
exceptions become that error at one boundary, `_translated_errors`.

Connections are kept alive and reused across fetches; that is reuse, not caching: every
fetch asks the origin for the page again.
"""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from ... import __version__
from .content_coding import (
    ACCEPT_ENCODING,
    BodyRefused,
    BoundedBody,
    parse_content_encoding,
)
from .page_source import MAX_PAGE_BYTES, PageFetchError

ORIGIN_PREFIX = "https://raw.githubusercontent.com/kinetis-dev/kinetis/main/docs/"
USER_AGENT = f"kinetis-mcp-docs/{__version__}"

# The C source location OpenSSL errors end with, e.g. " (_ssl.c:1006)": not for operators.
_SSL_SOURCE_LOCATION = re.compile(r"\s*\(_ssl\.c:\d+\)$")

# httpcore trace events whose return value is a freshly opened network stream.
_STREAM_OPENED_EVENTS = (
    "connect_tcp.complete",
    "connect_unix_socket.complete",
    "start_tls.complete",
)


@dataclass(frozen=True)
class FetchBounds:
    """How long and how much one fetch may take."""

    idle_timeout: float = 10.0
    """Seconds a single network operation may go without progress."""
    total_deadline: float = 30.0
    """Seconds the whole fetch may take, from the call to its return."""
    max_body_bytes: int = MAX_PAGE_BYTES
    """Decoded body bytes accepted; exactly this many is fine, one more is a failure."""

    def __post_init__(self) -> None:
        if not self.idle_timeout > 0:
            raise ValueError(f"idle_timeout must be positive, not {self.idle_timeout!r}")
        if not self.total_deadline > 0:
            raise ValueError(f"total_deadline must be positive, not {self.total_deadline!r}")
        if self.max_body_bytes < 0:
            raise ValueError(f"max_body_bytes must not be negative, not {self.max_body_bytes!r}")


DEFAULT_BOUNDS = FetchBounds()


class HttpPageSource:
    """Fetches catalogue pages from the documentation origin over HTTPS.

    Safe to call from several threads at once. One `httpx.Client` is created on the first
    fetch, from the environment as it is then, and shared by every later fetch so that
    connections are reused.

    Worst case: `fetch` returns or raises at most `total_deadline` seconds (30 by default)
    after it is called, whatever the origin, the proxy or the resolver does. The request runs
    on a worker thread, and the caller stops waiting for it at the deadline. httpx's timeouts
    alone would not give that bound: they apply to each network operation, so a body or
    response headers trickling one byte every few seconds would never trip them, and name
    resolution has no timeout at all.

    An origin that stops sending fails the fetch after `idle_timeout` (10 s by default).

    At the deadline the abandoned request's socket is shut down, which ends its worker's
    blocking read at once; the worker ends and its connection is closed, never reused. The
    socket is known from the moment it is connected, and a pooled connection's from the
    request's first byte (see `_ClaimingSSLSocket`). Only while the TCP connection itself is
    being made is there no socket to shut down: that step ends by `idle_timeout`.
    """

    def __init__(self, bounds: FetchBounds = DEFAULT_BOUNDS) -> None:
        self._bounds = bounds
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._closed = False
        self._attempts: set[_Attempt] = set()

    @property
    def bounds(self) -> FetchBounds:
        """The bounds every fetch of this source runs under."""
        return self._bounds

    def url_for(self, slug: str) -> str:
        """The URL a page is fetched from."""
        return f"{ORIGIN_PREFIX}{slug}.md"

    def fetch(self, slug: str) -> str:
        """The page's current markdown; raises `PageFetchError` on any failure."""
        deadline = time.monotonic() + self._bounds.total_deadline
        url = self.url_for(slug)
        attempt: _Attempt | None = None
        try:
            # Making the thread allocates too (its locks, its name), so it is in the `try`.
            attempt = _Attempt(url)
            attempt.worker = threading.Thread(
                target=self._run,
                args=(attempt,),
                name=f"kinetis-mcp-docs fetch {slug}",
                daemon=True,
            )
            with self._lock:
                if self._closed:
                    raise PageFetchError(url, "the page source is closed")
                self._attempts.add(attempt)
            attempt.worker.start()
        except (RuntimeError, MemoryError) as error:
            # The process is at its limit of threads or address space: this read fails,
            # the others and the session go on.
            if attempt is not None:
                with self._lock:
                    self._attempts.discard(attempt)
            reason = str(error) or "out of memory"
            raise PageFetchError(
                url, f"no thread could be started for the request ({reason})"
            ) from error
        if attempt.finished.wait(max(0.0, deadline - time.monotonic())):
            return attempt.result()
        attempt.abort()
        raise PageFetchError(
            attempt.url, f"total deadline of {_seconds(self._bounds.total_deadline)} s passed"
        )

    def close(self) -> None:
        """Abandon fetches still running and close every connection.

        Waits at most `idle_timeout` for abandoned workers to let go of their connections.
        """
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
            attempts = list(self._attempts)
        for attempt in attempts:
            attempt.abort()
        give_up_at = time.monotonic() + self._bounds.idle_timeout
        for attempt in attempts:
            if attempt.worker is not None and attempt.worker.ident is not None:
                attempt.worker.join(max(0.0, give_up_at - time.monotonic()))
        if client is not None:
            client.close()

    def _run(self, attempt: _Attempt) -> None:
        """The worker thread: fetch, and hand the outcome to the waiting caller."""
        _this_thread.attempt = attempt
        try:
            with _translated_errors(attempt.url, self._bounds):
                text = self._download(attempt)
        except Exception as error:  # noqa: BLE001 - not swallowed: the caller raises it
            attempt.finish(error=error)
        else:
            attempt.finish(text=text)
        finally:
            with self._lock:
                self._attempts.discard(attempt)

    def _download(self, attempt: _Attempt) -> str:
        client = self._client_for(attempt.url)
        try:
            with client.stream("GET", attempt.url, extensions={"trace": attempt.trace}) as response:
                try:
                    if response.status_code != httpx.codes.OK:
                        raise PageFetchError(attempt.url, _status_reason(response))
                    body = _read_body(response, attempt, self._bounds.max_body_bytes)
                finally:
                    # Before the response is closed, which may hand its connection to the
                    # next fetch: an abort must never shut down someone else's connection.
                    attempt.release()
        finally:
            attempt.release()
        return body.decode("utf-8")  # strict: invalid UTF-8 fails at the boundary

    def _client_for(self, url: str) -> httpx.Client:
        with self._lock:
            if self._closed:
                raise PageFetchError(url, "the page source is closed")
            if self._client is None:
                self._client = _new_client(self._bounds)
            return self._client


def _new_client(bounds: FetchBounds) -> httpx.Client:
    context = httpx.create_ssl_context(trust_env=True)
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = True
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.sslsocket_class = _ClaimingSSLSocket
    return httpx.Client(
        verify=context,
        trust_env=True,
        follow_redirects=False,
        timeout=httpx.Timeout(bounds.idle_timeout),
        # Set rather than httpx's default, which adds `br` and `zstd` when their packages
        # happen to be installed: only what `content_coding` decodes under its bounds.
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
    )


def _read_body(response: httpx.Response, attempt: _Attempt, limit: int) -> bytes:
    """The decoded body, refused as soon as decoding passes a bound (see `content_coding`).

    The raw bytes are read as they arrive and decoded here: httpx's own decoders have no
    bound on what one chunk inflates to.
    """
    body = BoundedBody(
        parse_content_encoding(response.headers.get_list("Content-Encoding")), limit=limit
    )
    for chunk in response.iter_raw():
        if attempt.cancelled.is_set():
            raise PageFetchError(attempt.url, "abandoned after the total deadline")
        body.feed(chunk)
    return body.finish()


def _status_reason(response: httpx.Response) -> str:
    status = response.status_code
    location = response.headers.get("Location")
    if 300 <= status < 400 and location is not None:
        return f"HTTP {status}: redirect to {location} not followed"
    return f"HTTP {status}"


@contextlib.contextmanager
def _translated_errors(url: str, bounds: FetchBounds) -> Iterator[None]:
    """The one place library exceptions become `PageFetchError`.

    Besides httpx's own exceptions, setting up the client can raise `OSError` (an
    unreadable `SSL_CERT_FILE`), `ValueError` (a proxy URL of an unknown scheme) or
    `ImportError` (a SOCKS proxy without httpx's socks extra).
    """
    try:
        yield
    except PageFetchError:
        raise
    except BodyRefused as refused:
        raise PageFetchError(url, refused.reason) from refused
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError, ImportError) as error:
        raise PageFetchError(url, _reason_for(error, bounds)) from error


# Reasons by exception type, first match wins; `{idle}` is the idle timeout in seconds.
_TIMEOUT_REASONS: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "could not connect within {idle} s"),
    (httpx.ReadTimeout, "no data for {idle} s"),
    (httpx.WriteTimeout, "could not send the request for {idle} s"),
    (httpx.PoolTimeout, "no free connection within {idle} s"),
)
_REQUEST_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ConnectError, "could not connect"),
    (httpx.ProxyError, "the proxy refused the tunnel"),
    (httpx.RemoteProtocolError, "the origin broke HTTP/1.1"),
    (httpx.NetworkError, "the connection failed"),
)


def _reason_for(error: Exception, bounds: FetchBounds) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not valid UTF-8 at byte {error.start}"
    for timeout_type, template in _TIMEOUT_REASONS:
        if isinstance(error, timeout_type):
            return template.format(idle=_seconds(bounds.idle_timeout))
    tls_error = _tls_error_in(error)
    if isinstance(error, httpx.ConnectError) and tls_error is not None:
        return f"TLS handshake failed: {_describe_tls_error(tls_error)}"
    for error_type, summary in _REQUEST_REASONS:
        if isinstance(error, error_type):
            return f"{summary}: {_text_of(error)}"
    if isinstance(error, (httpx.HTTPError, httpx.InvalidURL)):
        return f"{type(error).__name__}: {_text_of(error)}"
    if tls_error is not None:
        return f"the TLS settings could not be loaded: {_describe_tls_error(tls_error)}"
    return (
        "the HTTPS client could not be set up from the environment"
        f" (SSL_CERT_FILE, SSL_CERT_DIR, *_PROXY): {_text_of(error)}"
    )


def _tls_error_in(error: BaseException) -> ssl.SSLError | None:
    """The `ssl.SSLError` an exception was raised from, if any."""
    cause: BaseException | None = error
    for _ in range(8):  # a chain of causes is short; never loop on a cyclic one
        if cause is None:
            return None
        if isinstance(cause, ssl.SSLError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _describe_tls_error(error: ssl.SSLError) -> str:
    if isinstance(error, ssl.SSLCertVerificationError) and error.verify_message:
        return f"certificate verify failed: {error.verify_message}"
    return _SSL_SOURCE_LOCATION.sub("", _text_of(error))


def _text_of(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _seconds(value: float) -> str:
    return f"{value:g}"


class _Attempt:
    """One fetch: its outcome, and the socket to shut down if the caller gives up on it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.worker: threading.Thread | None = None
        self.finished = threading.Event()
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._released = False
        self._text: str | None = None
        self._error: Exception | None = None

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: learn a new connection's socket as soon as it exists."""
        if event.endswith(_STREAM_OPENED_EVENTS):
            get_extra_info = getattr(info.get("return_value"), "get_extra_info", None)
            sock = get_extra_info("socket") if get_extra_info is not None else None
            if isinstance(sock, socket.socket):
                self.attach(sock)

    def attach(self, sock: socket.socket) -> None:
        """Remember the socket this fetch now waits on; shut it down if already abandoned."""
        with self._lock:
            if self._released:
                return
            self._socket = sock
            if self.cancelled.is_set():
                _shut_down(sock)

    def claim(self, sock: socket.socket) -> None:
        """`attach`, cheaply when `sock` is already the one known (it is, on every read)."""
        if self._socket is not sock:
            self.attach(sock)

    def release(self) -> None:
        """Forget the socket for good: its connection may go back to the pool, and from
        then on belongs to whichever fetch takes it next."""
        with self._lock:
            self._released = True
            self._socket = None

    def abort(self) -> None:
        """Give up on this fetch: its worker's blocking read, if any, ends now."""
        with self._lock:
            self.cancelled.set()
            if self._socket is not None:
                _shut_down(self._socket)

    def finish(self, *, text: str | None = None, error: Exception | None = None) -> None:
        self._text = text
        self._error = error
        self.finished.set()

    def result(self) -> str:
        if self._error is not None:
            raise self._error
        if self._text is None:  # pragma: no cover - finish() always sets one of them
            raise PageFetchError(self.url, "the fetch ended without a result")
        return self._text


# The fetch each worker thread runs, for the sockets it uses to claim themselves.
_this_thread = threading.local()


def _claim(sock: socket.socket) -> None:
    attempt: _Attempt | None = getattr(_this_thread, "attempt", None)
    if attempt is not None:
        attempt.claim(sock)


class _ClaimingSSLSocket(ssl.SSLSocket):
    """A TLS socket that names itself to the fetch whose thread uses it.

    httpx has no public way to learn which pooled connection a request was given; without
    one, a request on a reused connection whose origin drips its response headers could not
    be stopped at the deadline. Every request's first act on its connection is a handshake
    or a send, on its own worker thread, so the connection is known from then on. Installed
    through `SSLContext.sslsocket_class`, the standard library's hook for this.
    """

    def do_handshake(self, block: bool = False) -> None:  # noqa: FBT001, FBT002 - the base's signature
        _claim(self)
        super().do_handshake(block)

    def send(self, data: Any, flags: int = 0) -> int:
        _claim(self)
        return super().send(data, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        _claim(self)
        super().sendall(data, flags)

    def recv(self, buflen: int = 1024, flags: int = 0) -> bytes:
        _claim(self)
        return super().recv(buflen, flags)

    def recv_into(self, buffer: Any, nbytes: int | None = None, flags: int = 0) -> int:
        _claim(self)
        return super().recv_into(buffer, nbytes, flags)


def _shut_down(sock: socket.socket) -> None:
    """Shut a socket down, never closing it: its owner's thread still holds it.

    `socket.socket.shutdown` rather than the method of the object, because
    `ssl.SSLSocket.shutdown` also drops the TLS state the owning thread may be using.
    """
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
