"""Fixtures shared by every test: the local HTTPS documentation origin and its proxy.

See `tests.support.origin` for what the origin can be scripted to do.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from tests.support.origin import (
    ORIGIN_HOSTS,
    DocsOrigin,
    running_docs_origin,
    tls_1_1_unavailable,
)


@pytest.fixture(scope="session")
def docs_ca() -> trustme.CA:
    """The certificate authority the test origin's certificate comes from."""
    return trustme.CA()


@pytest.fixture(scope="session")
def docs_cert(docs_ca: trustme.CA) -> trustme.LeafCert:
    """The origin's certificate: valid for `raw.githubusercontent.com` (and localhost)."""
    return docs_ca.issue_cert(*ORIGIN_HOSTS)


@pytest.fixture
def docs_origin(
    docs_ca: trustme.CA, docs_cert: trustme.LeafCert, tmp_path: Path
) -> Iterator[DocsOrigin]:
    """A running HTTPS origin for `raw.githubusercontent.com`, behind a CONNECT proxy.

    Script it with `docs_origin.serve(path, body=...)`, `serve_page(slug, text)` or
    `serve_docs()` (every page of this repository's `docs/`). Nothing reaches it until an
    environment points there: `origin_env` for a subprocess, `origin_monkeypatch` for this
    process. Stopped at teardown, every thread joined.
    """
    with running_docs_origin(docs_ca, docs_cert, tmp_path / "docs-origin") as origin:
        yield origin


@pytest.fixture
def origin_env(docs_origin: DocsOrigin) -> dict[str, str]:
    """An environment for a subprocess that fetches its pages from `docs_origin`.

    This process's environment without its proxy and CA variables, plus `HTTPS_PROXY`
    (the local proxy), `SSL_CERT_FILE` (the test CA) and `SSL_CERT_DIR` (an empty
    directory). Pass it whole as the subprocess's `env`.
    """
    return docs_origin.environ()


@pytest.fixture
def origin_monkeypatch(docs_origin: DocsOrigin, monkeypatch: pytest.MonkeyPatch) -> DocsOrigin:
    """`docs_origin`, with this process's environment pointed at it for the test."""
    docs_origin.apply_environ(monkeypatch)
    return docs_origin


@pytest.fixture
def tls_1_1_docs_origin(
    docs_ca: trustme.CA, docs_cert: trustme.LeafCert, tmp_path: Path
) -> Iterator[DocsOrigin]:
    """Like `docs_origin`, but offering TLS 1.1 and nothing newer.

    Skips the test when this Python's OpenSSL cannot offer TLS 1.1 at all. Not applied to
    the environment: call `tls_1_1_docs_origin.apply_environ(monkeypatch)`.
    """
    reason = tls_1_1_unavailable(docs_ca, docs_cert)
    if reason is not None:
        pytest.skip(reason)
    directory = tmp_path / "tls-1-1-origin"
    with running_docs_origin(docs_ca, docs_cert, directory, tls_1_1_only=True) as origin:
        yield origin


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A local port that refuses every connection for as long as the test runs: a socket
    bound to it and never listening, held, so that no other process (a test beside this
    one, under xdist) can be given it and answer there."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


# The tests of the parts each of the package's own dependencies serves, which
# `nox -s tests_lowest` runs at the lowest versions the ranges admit: the whole server
# (httpx, uvicorn, httptools, uvloop, limits, redis, prometheus_client, tantivy,
# zstandard), the CLI (click), the update lock (filelock), the install directory's default
# (platformdirs) and the environments pip builds (pip); with the `interpreter` tests, which
# hold the installer's smoke scenarios, setup and the daily update through that pip. The
# installer's scenario matrices test the installer's own logic, the same at any version.
DEPENDENCY_TESTS = (
    "server/",
    "installer/test_cli_help_e2e.py",
    "installer/test_lock.py",
    "installer/test_directory.py",
    "installer/test_environment.py",
)
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(TESTS).as_posix().startswith(DEPENDENCY_TESTS):
            item.add_marker(pytest.mark.dependencies)
