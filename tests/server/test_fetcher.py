"""The page fetcher against a real HTTPS origin, reached through a real CONNECT proxy.

Nothing here patches httpx: the fetcher finds the proxy and the test CA in the environment
(`origin_monkeypatch`), exactly as a user behind a corporate proxy would configure it.
"""

from __future__ import annotations

import gzip
import random
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.server.sources import fetcher
from kinetis_mcp_docs.server.sources.content_coding import BodyRefused
from kinetis_mcp_docs.server.sources.fetcher import ORIGIN_PREFIX, FetchBounds, HttpPageSource
from kinetis_mcp_docs.server.sources.page_source import PageFetchError
from tests.support.bombs import GZIP_BOMBS
from tests.support.origin import (
    CLIENT_GONE,
    DocsOrigin,
    page_path,
    running_docs_origin,
)
from tests.support.processes import wait_for

MIB = 1024 * 1024
QUICK = FetchBounds(idle_timeout=0.5, total_deadline=10.0)

MakeSource = Callable[..., HttpPageSource]


@pytest.fixture
def make_source() -> Iterator[MakeSource]:
    """`HttpPageSource(bounds)`, closed at teardown."""
    sources: list[HttpPageSource] = []

    def make(bounds: FetchBounds = fetcher.DEFAULT_BOUNDS) -> HttpPageSource:
        source = HttpPageSource(bounds)
        sources.append(source)
        return source

    yield make
    for source in sources:
        source.close()


def fetch_failure(source: HttpPageSource, slug: str) -> PageFetchError:
    """The error fetching `slug` raises; fails the test if the fetch succeeds."""
    with pytest.raises(PageFetchError) as caught:
        source.fetch(slug)
    assert caught.value.url == ORIGIN_PREFIX + slug + ".md"
    return caught.value


# The URL


def test_the_url_is_the_origin_prefix_the_slug_and_md() -> None:
    assert ORIGIN_PREFIX == "https://raw.githubusercontent.com/kinetis-dev/kinetis/main/docs/"
    assert HttpPageSource().url_for("appendix-database") == (
        "https://raw.githubusercontent.com/kinetis-dev/kinetis/main/docs/appendix-database.md"
    )


def test_the_request_goes_to_raw_githubusercontent_through_the_proxy(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("appendix-database", "# Database\n")

    make_source().fetch("appendix-database")

    assert origin_monkeypatch.proxy.targets == ["raw.githubusercontent.com:443"]
    (request,) = origin_monkeypatch.requests
    assert request.method == "GET"
    assert request.path == "/kinetis-dev/kinetis/main/docs/appendix-database.md"
    assert request.headers["host"] == "raw.githubusercontent.com"
    assert request.headers["user-agent"] == f"kinetis-mcp-docs/{__version__}"


# Success


def test_a_page_is_returned_exactly_as_served(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    text = "# Überblick\r\n\n½ — 動的なドキュメント 🚀\nno newline at the end"
    origin_monkeypatch.serve_page("index", text)

    assert make_source().fetch("index") == text


def test_an_empty_page_is_an_empty_string(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("empty", "")

    assert make_source().fetch("empty") == ""


def test_a_gzip_body_is_decoded(origin_monkeypatch: DocsOrigin, make_source: MakeSource) -> None:
    text = "# Überblick\n" * 1000
    origin_monkeypatch.serve(page_path("index"), body=text.encode(), gzip=True)

    assert make_source().fetch("index") == text


def test_only_gzip_and_deflate_are_asked_for(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("index", "# Index\n")

    make_source().fetch("index")

    (request,) = origin_monkeypatch.requests
    assert request.headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize(
    ("content_encoding", "encode"),
    [
        ("deflate", zlib.compress),
        ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data))),
        ("deflate, gzip", lambda data: gzip.compress(zlib.compress(data))),
    ],
    ids=["deflate", "gzip-gzip", "deflate-gzip"],
)
def test_deflate_and_stacked_codings_are_decoded(
    origin_monkeypatch: DocsOrigin,
    make_source: MakeSource,
    content_encoding: str,
    encode: Callable[[bytes], bytes],
) -> None:
    text = "# Überblick\n" * 1000
    origin_monkeypatch.serve(
        page_path("index"), body=encode(text.encode()), content_encoding=content_encoding
    )

    assert make_source().fetch("index") == text


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br"])
def test_a_coding_that_was_not_asked_for_is_refused_even_when_the_body_reads_as_text(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, coding: str
) -> None:
    origin_monkeypatch.serve(page_path("index"), body=b"# Index\n", content_encoding=coding)

    error = fetch_failure(make_source(), "index")

    assert error.reason.startswith("Content-Encoding ")
    assert error.reason.endswith(" was not asked for")


@pytest.mark.parametrize(("content_encoding", "make_bomb"), GZIP_BOMBS)
def test_a_compression_bomb_is_refused_by_its_ratio_long_before_the_cap(
    origin_monkeypatch: DocsOrigin,
    make_source: MakeSource,
    content_encoding: str,
    make_bomb: Callable[[int], bytes],
) -> None:
    bomb = make_bomb(256 * MIB)
    origin_monkeypatch.serve(page_path("bomb"), body=bomb, content_encoding=content_encoding)

    error = fetch_failure(make_source(), "bomb")

    assert error.reason.startswith("the body decodes to more than 100 times its size (65537 bytes")
    assert error.reason.endswith("): a compression bomb")


def test_nothing_is_cached_between_fetches(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    source = make_source()
    origin_monkeypatch.serve_page("index", "first\n")
    assert source.fetch("index") == "first\n"

    origin_monkeypatch.serve_page("index", "second\n")

    assert source.fetch("index") == "second\n"
    assert len(origin_monkeypatch.requests_for(page_path("index"))) == 2


# Statuses and redirects


@pytest.mark.parametrize("status", [203, 404, 500, 503])
def test_any_status_but_200_fails_with_that_status(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, status: int
) -> None:
    origin_monkeypatch.serve(page_path("index"), status=status, body=b"# a page\n")

    assert fetch_failure(make_source(), "index").reason == f"HTTP {status}"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, status: int
) -> None:
    target = ORIGIN_PREFIX + "moved.md"
    origin_monkeypatch.serve(page_path("index"), status=status, headers={"Location": target})
    origin_monkeypatch.serve_page("moved", "# Moved\n")

    error = fetch_failure(make_source(), "index")

    assert error.reason == f"HTTP {status}: redirect to {target} not followed"
    assert origin_monkeypatch.requests_for(page_path("moved")) == []


# The size cap


def test_a_body_of_exactly_4_mib_is_accepted(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve(page_path("big"), body=b"a" * (4 * MIB))

    assert len(make_source().fetch("big")) == 4 * MIB


def test_a_body_of_4_mib_and_one_byte_is_refused(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve(page_path("big"), body=b"a" * (4 * MIB + 1))

    assert fetch_failure(make_source(), "big").reason == "body exceeds 4 MiB"


def test_an_endless_body_is_abandoned_soon_after_the_cap(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve(page_path("endless"), generated_size=200 * MIB)
    started = time.monotonic()

    error = fetch_failure(make_source(), "endless")

    assert error.reason == "body exceeds 4 MiB"
    assert time.monotonic() - started < 10
    answered = origin_monkeypatch.wait_for_finished(page_path("endless"))
    assert answered.outcome == CLIENT_GONE
    assert answered.body_bytes_sent < 64 * MIB


def test_the_cap_counts_decoded_bytes_of_a_gzip_body(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    # Hexadecimal text compresses about twice, like prose: well inside the ratio bound.
    body = random.Random(5).randbytes(2 * MIB + 1).hex().encode()[: 4 * MIB + 1]
    origin_monkeypatch.serve(page_path("big"), body=body, gzip=True)

    error = fetch_failure(make_source(), "big")

    assert error.reason == "body exceeds 4 MiB"


def test_a_smaller_cap_is_reported_in_bytes(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("index", "x" * 1001)
    source = make_source(FetchBounds(max_body_bytes=1000))

    assert fetch_failure(source, "index").reason == "body exceeds 1000 bytes"


# Encoding


@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b"ok\n\xffrest\n", 3),
        ("déjà".encode()[:-1], 4),  # a multi-byte character cut short at the end
    ],
)
def test_a_body_that_is_not_utf8_is_refused(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, body: bytes, offset: int
) -> None:
    origin_monkeypatch.serve(page_path("index"), body=body)

    assert fetch_failure(make_source(), "index").reason == f"not valid UTF-8 at byte {offset}"


# Time bounds


@pytest.mark.parametrize(
    ("slug", "behaviour"),
    [
        ("stalled", {"body": b"# Half a page\n" * 10, "stall_after": 20}),
        ("silent", {"body": b"late\n", "delay": 60}),
    ],
    ids=["a-body-that-stalls", "a-response-that-never-starts"],
)
def test_silence_fails_after_the_idle_timeout(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, slug: str, behaviour: dict[str, Any]
) -> None:
    origin_monkeypatch.serve(page_path(slug), **behaviour)
    started = time.monotonic()

    error = fetch_failure(make_source(QUICK), slug)

    assert error.reason == "no data for 0.5 s"
    assert 0.5 <= time.monotonic() - started < 5


def test_a_trickling_body_fails_at_the_total_deadline(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    # One byte every 50 ms never trips the 1 s idle timeout; the whole body takes 10 s.
    origin_monkeypatch.serve(page_path("trickle"), body=b"x" * 200, chunk_size=1, chunk_delay=0.05)
    source = make_source(FetchBounds(idle_timeout=1.0, total_deadline=1.5))
    started = time.monotonic()

    error = fetch_failure(source, "trickle")

    assert error.reason == "total deadline of 1.5 s passed"
    # The whole body would take 10 s: the margin is for a loaded machine.
    assert 1.5 <= time.monotonic() - started < 6
    # The abandoned connection is closed at the deadline, not left to trickle on.
    answered = origin_monkeypatch.wait_for_finished(page_path("trickle"), timeout=5)
    assert answered.outcome == CLIENT_GONE
    assert answered.body_bytes_sent < 200


def test_slow_response_headers_fail_at_the_total_deadline_and_free_the_connection(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve(page_path("slow"), body=b"late\n", delay=60)
    source = make_source(FetchBounds(idle_timeout=20.0, total_deadline=1.0))
    started = time.monotonic()

    error = fetch_failure(source, "slow")

    assert error.reason == "total deadline of 1 s passed"
    # The idle timeout alone would take 20 s: the margin is for a loaded machine.
    assert 1.0 <= time.monotonic() - started < 10
    # Its worker was not left blocked for the 20 s idle timeout: close() has nothing to wait for.
    closing = time.monotonic()
    source.close()
    assert time.monotonic() - closing < 10


def _fetch_workers() -> list[str]:
    # Named for the page fetched: another test's fetch threads, if any linger, are not this one.
    return [t.name for t in threading.enumerate() if t.name == "kinetis-mcp-docs fetch drip"]


def test_a_pooled_connection_dripping_its_head_is_closed_at_the_deadline_and_its_worker_ends(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("index", "# Index\n")
    # About 40 bytes of head, one every half second: never idle, and 20 s to finish.
    origin_monkeypatch.serve(page_path("drip"), body=b"late\n", head_drip=0.5)
    source = make_source(FetchBounds(idle_timeout=5.0, total_deadline=1.5))
    source.fetch("index")  # leaves an idle connection in the pool, which the next fetch takes

    error = fetch_failure(source, "drip")

    assert error.reason == "total deadline of 1.5 s passed"
    answered = origin_monkeypatch.wait_for_finished(page_path("drip"), timeout=10)
    assert answered.connection == 1  # the pooled connection, not a new one
    assert answered.outcome == CLIENT_GONE
    wait_for(lambda: not _fetch_workers(), "the abandoned fetch's worker to end", timeout=10)


@pytest.mark.slow
def test_a_stalled_body_fails_after_10_seconds_by_default(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve(page_path("stalled"), body=b"# Half a page\n" * 10, stall_after=20)
    started = time.monotonic()

    error = fetch_failure(make_source(), "stalled")

    assert error.reason == "no data for 10 s"
    assert 10 <= time.monotonic() - started < 20


# TLS


def test_an_origin_offering_only_tls_1_1_is_refused(
    tls_1_1_docs_origin: DocsOrigin, monkeypatch: pytest.MonkeyPatch, make_source: MakeSource
) -> None:
    tls_1_1_docs_origin.apply_environ(monkeypatch)
    tls_1_1_docs_origin.serve_page("index", "# Index\n")

    error = fetch_failure(make_source(), "index")

    assert error.reason.startswith("TLS handshake failed: ")
    assert "certificate" not in error.reason
    assert tls_1_1_docs_origin.handshakes == 0
    assert tls_1_1_docs_origin.requests == []


def test_a_certificate_from_an_untrusted_ca_is_refused(
    origin_monkeypatch: DocsOrigin,
    monkeypatch: pytest.MonkeyPatch,
    make_source: MakeSource,
    tmp_path: Path,
) -> None:
    origin_monkeypatch.serve_page("index", "# Index\n")
    other_ca = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other_ca))
    monkeypatch.setenv("SSL_CERT_FILE", str(other_ca))

    error = fetch_failure(make_source(), "index")

    assert error.reason.startswith("TLS handshake failed: certificate verify failed: ")
    assert origin_monkeypatch.handshakes == 0
    assert origin_monkeypatch.requests == []


def test_a_certificate_for_another_host_name_is_refused(
    docs_ca: trustme.CA,
    monkeypatch: pytest.MonkeyPatch,
    make_source: MakeSource,
    tmp_path: Path,
) -> None:
    cert = docs_ca.issue_cert("docs.example.org")
    with running_docs_origin(docs_ca, cert, tmp_path / "elsewhere") as origin:
        origin.apply_environ(monkeypatch)
        origin.serve_page("index", "# Index\n")

        error = fetch_failure(make_source(), "index")

        assert error.reason.startswith("TLS handshake failed: certificate verify failed: ")
        assert "raw.githubusercontent.com" in error.reason
        assert origin.requests == []


def test_an_unreadable_ssl_cert_file_fails_the_fetch(
    origin_monkeypatch: DocsOrigin,
    monkeypatch: pytest.MonkeyPatch,
    make_source: MakeSource,
    tmp_path: Path,
) -> None:
    origin_monkeypatch.serve_page("index", "# Index\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))

    fetch_failure(make_source(), "index")

    assert origin_monkeypatch.requests == []


def test_a_client_that_could_not_be_set_up_is_set_up_again_on_the_next_fetch(
    origin_monkeypatch: DocsOrigin, monkeypatch: pytest.MonkeyPatch, make_source: MakeSource
) -> None:
    origin_monkeypatch.serve_page("index", "# Index\n")
    monkeypatch.setenv("HTTPS_PROXY", "ftp://127.0.0.1:21")
    source = make_source()

    error = fetch_failure(source, "index")

    assert error.reason.startswith("the HTTPS client could not be set up from the environment")
    assert "Unknown scheme for proxy URL" in error.reason
    monkeypatch.setenv("HTTPS_PROXY", origin_monkeypatch.proxy.url)
    assert source.fetch("index") == "# Index\n"


# Connections


def test_sequential_fetches_reuse_one_connection(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    slugs = [f"page-{number}" for number in range(5)]
    for slug in slugs:
        origin_monkeypatch.serve_page(slug, f"# {slug}\n")
    source = make_source()

    assert [source.fetch(slug) for slug in slugs] == [f"# {slug}\n" for slug in slugs]

    assert origin_monkeypatch.proxy.connects == 1
    assert origin_monkeypatch.handshakes == 1
    assert [request.connection for request in origin_monkeypatch.requests] == [1] * 5


def test_concurrent_fetches_from_several_threads_all_succeed(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource
) -> None:
    workers = 6
    text = "# Shared\n" * 100
    # No answer leaves the origin until all six requests are in flight at once.
    origin_monkeypatch.serve(
        page_path("shared"), body=text.encode(), rendezvous=threading.Barrier(workers)
    )
    source = make_source()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(source.fetch, "shared") for _ in range(workers)]
        results = [future.result(timeout=30) for future in futures]

    assert results == [text] * workers
    assert origin_monkeypatch.handshakes == workers


def test_a_fetch_after_close_fails(make_source: MakeSource) -> None:
    source = make_source()
    source.close()
    source.close()

    assert fetch_failure(source, "index").reason == "the page source is closed"


def test_a_fetch_with_no_memory_left_to_make_its_thread_fails_and_the_next_one_reads(
    origin_monkeypatch: DocsOrigin, make_source: MakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At its address-space limit a process may fail to allocate a thread's locks before
    # it ever asks to start the thread: that read fails as unreadable, not as a bug.
    origin_monkeypatch.serve_page("index", "# Index\n")
    source = make_source()

    def out_of_memory(*args: object, **kwargs: object) -> threading.Thread:
        raise MemoryError

    with monkeypatch.context() as patch:
        patch.setattr(threading, "Thread", out_of_memory)
        failure = fetch_failure(source, "index")
    assert "no thread could be started for the request (out of memory)" in str(failure)
    assert source.fetch("index") == "# Index\n"


# Bounds


@pytest.mark.parametrize(
    "bounds",
    [
        {"idle_timeout": 0},
        {"idle_timeout": -1},
        {"total_deadline": 0},
        {"max_body_bytes": -1},
    ],
)
def test_bounds_must_be_positive(bounds: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        FetchBounds(**bounds)  # type: ignore[arg-type]


def test_the_default_bounds_are_the_contract() -> None:
    assert FetchBounds() == FetchBounds(
        idle_timeout=10.0, total_deadline=30.0, max_body_bytes=4 * MIB
    )


# The one translation boundary


def _chained(error: Exception, cause: BaseException) -> Exception:
    error.__cause__ = cause
    return error


def _cert_error(message: str) -> ssl.SSLCertVerificationError:
    error = ssl.SSLCertVerificationError(1, "certificate verify failed")
    error.verify_message = message
    return error


SETUP = "the HTTPS client could not be set up from the environment (SSL_CERT_FILE, SSL_CERT_DIR, "


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (httpx.ConnectTimeout("timed out"), "could not connect within 10 s"),
        (httpx.ReadTimeout("timed out"), "no data for 10 s"),
        (httpx.WriteTimeout("timed out"), "could not send the request for 10 s"),
        (httpx.PoolTimeout("timed out"), "no free connection within 10 s"),
        (
            httpx.ConnectError("[Errno 111] Connection refused"),
            "could not connect: [Errno 111] Connection refused",
        ),
        (
            _chained(
                httpx.ConnectError("verify failed"),
                _chained(httpx.ConnectError("inner"), _cert_error("Hostname mismatch")),
            ),
            "TLS handshake failed: certificate verify failed: Hostname mismatch",
        ),
        (
            _chained(
                httpx.ConnectError("wrong version"),
                ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)"),
            ),
            "TLS handshake failed: [SSL: WRONG_VERSION_NUMBER] wrong version number",
        ),
        (httpx.ProxyError("502 Bad Gateway"), "the proxy refused the tunnel: 502 Bad Gateway"),
        (
            BodyRefused("Content-Encoding 'br' was not asked for"),
            "Content-Encoding 'br' was not asked for",
        ),
        (
            httpx.RemoteProtocolError("Server disconnected without sending a response."),
            "the origin broke HTTP/1.1: Server disconnected without sending a response.",
        ),
        (httpx.ReadError("reset"), "the connection failed: reset"),
        (httpx.WriteError(""), "the connection failed: WriteError"),
        (httpx.UnsupportedProtocol("no scheme"), "UnsupportedProtocol: no scheme"),
        (httpx.LocalProtocolError("bad header"), "LocalProtocolError: bad header"),
        (httpx.InvalidURL("bad url"), "InvalidURL: bad url"),
        (
            UnicodeDecodeError("utf-8", b"ab\xff", 2, 3, "invalid start byte"),
            "not valid UTF-8 at byte 2",
        ),
        (
            ssl.SSLError(9, "[X509: PEM_LIB] no PEM data (_ssl.c:4154)"),
            "the TLS settings could not be loaded: [X509: PEM_LIB] no PEM data",
        ),
        (FileNotFoundError(2, "No such file"), SETUP + "*_PROXY): [Errno 2] No such file"),
        (
            ValueError("Unknown scheme for proxy URL"),
            SETUP + "*_PROXY): Unknown scheme for proxy URL",
        ),
        (ImportError("socksio is not installed"), SETUP + "*_PROXY): socksio is not installed"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else "",
)
def test_every_library_exception_becomes_a_page_fetch_error_with_a_reason(
    error: Exception, reason: str
) -> None:
    with (
        pytest.raises(PageFetchError) as caught,
        fetcher._translated_errors("https://example.test/x.md", fetcher.DEFAULT_BOUNDS),
    ):
        raise error

    assert caught.value.reason == reason
    assert caught.value.url == "https://example.test/x.md"
    assert caught.value.__cause__ is error


def test_an_exception_that_is_not_a_library_failure_is_not_translated() -> None:
    with (
        pytest.raises(RuntimeError, match="a bug"),
        fetcher._translated_errors("https://example.test/x.md", fetcher.DEFAULT_BOUNDS),
    ):
        raise RuntimeError("a bug")
