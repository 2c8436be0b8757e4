"""The test origin and proxy themselves, driven by a plain httpx client (not the fetcher)."""

from __future__ import annotations

import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from tests.support.origin import (
    CLIENT_GONE,
    COMPLETE,
    STOPPED,
    DocsOrigin,
    page_path,
    running_docs_origin,
    tls_1_1_unavailable,
)

RAW = "https://raw.githubusercontent.com"


def client_for(origin: DocsOrigin) -> httpx.Client:
    """A client that reaches `origin` only through its proxy and trusts only its CA."""
    return httpx.Client(
        proxy=origin.proxy.url,
        verify=ssl.create_default_context(cafile=str(origin.ca_file)),
        trust_env=False,
        timeout=10,
    )


@pytest.fixture
def client(docs_origin: DocsOrigin) -> Iterator[httpx.Client]:
    with client_for(docs_origin) as client:
        yield client


def test_serve_docs_serves_every_page_of_a_docs_directory_under_its_slug(
    docs_origin: DocsOrigin, client: httpx.Client, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_bytes("# Index\r\nÜber\n".encode())
    (docs / "agent-workflow.md").write_bytes(b"# Workflow")
    (docs / "notes.txt").write_bytes(b"not a page")

    assert docs_origin.serve_docs(docs) == ["agent-workflow", "index"]

    assert client.get(RAW + page_path("index")).content == "# Index\r\nÜber\n".encode()
    assert client.get(RAW + page_path("agent-workflow")).content == b"# Workflow"
    assert client.get(RAW + "/kinetis-dev/kinetis/main/docs/notes.txt").status_code == 404


def test_a_path_never_served_answers_404(docs_origin: DocsOrigin, client: httpx.Client) -> None:
    assert client.get(RAW + page_path("missing")).status_code == 404
    assert docs_origin.wait_for_finished(page_path("missing")).outcome == COMPLETE


def test_every_host_is_tunnelled_to_the_origin(
    docs_origin: DocsOrigin, client: httpx.Client
) -> None:
    docs_origin.serve("/anything", body=b"here")

    assert client.get("https://localhost:8443/anything").content == b"here"
    assert docs_origin.proxy.targets == ["localhost:8443"]


def test_the_proxy_refuses_anything_but_connect(docs_origin: DocsOrigin) -> None:
    with httpx.Client(proxy=docs_origin.proxy.url, trust_env=False, timeout=10) as plain:
        assert plain.get("http://raw.githubusercontent.com/").status_code == 405
    assert docs_origin.proxy.connects == 0


def test_environ_replaces_the_machines_proxy_and_ca_variables(docs_origin: DocsOrigin) -> None:
    machine = {
        "PATH": "bin",
        "https_proxy": "http://corporate-proxy:3128",
        "ALL_PROXY": "socks5://corporate-proxy:1080",
        "NO_PROXY": "raw.githubusercontent.com",
        "SSL_CERT_FILE": "corporate-ca.pem",
        "SSL_CERT_DIR": "corporate-certs",
        "REQUESTS_CA_BUNDLE": "corporate-ca.pem",
        "PIP_FIND_LINKS": "wheels",
    }

    assert docs_origin.environ(machine) == {
        "PATH": "bin",
        "PIP_FIND_LINKS": "wheels",
        "HTTPS_PROXY": docs_origin.proxy.url,
        "SSL_CERT_FILE": str(docs_origin.ca_file),
        "SSL_CERT_DIR": str(docs_origin.empty_cert_dir),
    }
    assert list(docs_origin.empty_cert_dir.iterdir()) == []


def test_a_subprocess_given_origin_env_fetches_from_the_origin(
    docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> None:
    docs_origin.serve_page("index", "# Index\n")
    script = (
        "from kinetis_mcp_docs.server.sources.fetcher import HttpPageSource\n"
        "print(HttpPageSource().fetch('index'), end='')\n"
    )

    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=origin_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert completed.stdout == "# Index\n"
    assert docs_origin.proxy.targets == ["raw.githubusercontent.com:443"]


def test_connections_handshakes_and_requests_are_counted(
    docs_origin: DocsOrigin, client: httpx.Client
) -> None:
    docs_origin.serve_page("index", "# Index\n")

    for _ in range(3):
        client.get(RAW + page_path("index"))

    assert (docs_origin.accepted, docs_origin.handshakes, docs_origin.proxy.connects) == (1, 1, 1)
    assert len(docs_origin.requests) == 3


def test_a_stalled_response_sees_its_client_leave(
    docs_origin: DocsOrigin, client: httpx.Client
) -> None:
    docs_origin.serve(page_path("stalled"), body=b"0123456789", stall_after=4)

    with client.stream("GET", RAW + page_path("stalled")) as response:
        assert response.headers["content-length"] == "10"
        docs_origin.wait_for_received(page_path("stalled"))

    answered = docs_origin.wait_for_finished(page_path("stalled"))
    assert (answered.outcome, answered.body_bytes_sent) == (CLIENT_GONE, 4)


def test_a_body_is_sent_as_given_under_any_content_encoding(
    docs_origin: DocsOrigin, client: httpx.Client
) -> None:
    docs_origin.serve(page_path("index"), body=b"\x00not brotli", content_encoding="br, gzip")

    with client.stream("GET", RAW + page_path("index")) as response:
        raw = b"".join(response.iter_raw())

    assert response.headers["content-encoding"] == "br, gzip"
    assert raw == b"\x00not brotli"


def test_a_dripping_head_arrives_whole_one_byte_at_a_time(
    docs_origin: DocsOrigin, client: httpx.Client
) -> None:
    docs_origin.serve(page_path("index"), body=b"# Index\n", head_drip=0.01)

    response = client.get(RAW + page_path("index"))

    assert (response.status_code, response.content) == (200, b"# Index\n")
    assert docs_origin.wait_for_finished(page_path("index")).outcome == COMPLETE


@pytest.mark.parametrize(
    "route", [{"stall_after": 0}, {"head_drip": 60.0}], ids=["stalled-body", "dripping-head"]
)
def test_the_origin_stops_promptly_while_a_response_stalls(
    docs_ca: trustme.CA, docs_cert: trustme.LeafCert, tmp_path: Path, route: dict[str, Any]
) -> None:
    errors: list[Exception] = []
    with running_docs_origin(docs_ca, docs_cert, tmp_path / "origin") as origin:
        origin.serve(page_path("stalled"), body=b"0123456789", **route)

        def fetch() -> None:
            with client_for(origin) as client:
                try:
                    client.get(RAW + page_path("stalled"))
                except httpx.HTTPError as error:
                    errors.append(error)

        thread = threading.Thread(target=fetch)
        thread.start()
        origin.wait_for_received(page_path("stalled"))
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 5
    thread.join(10)
    assert not thread.is_alive()
    assert len(errors) == 1
    assert origin.requests[0].outcome == STOPPED


def test_a_tls_1_1_origin_is_available_or_says_why(
    docs_ca: trustme.CA, docs_cert: trustme.LeafCert
) -> None:
    reason = tls_1_1_unavailable(docs_ca, docs_cert)

    assert reason is None or "TLS 1.1" in reason
