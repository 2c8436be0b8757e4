"""Fixtures for the HTTP route: real `kinetis-docs serve --http` subprocesses, always stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.http import HttpServer, clean_environ, serve_http_argv, write_tree

StartHttp = Callable[..., HttpServer]
UNLIMITED = ("--rate-limit", "1000000")

# A small tree in the shape the contract describes: frontmatter, MDX, index fallbacks.
TREE: dict[str, str | bytes] = {
    "index.mdx": "---\ntitle: Home\ndescription: Where it all starts.\n---\n\n# Welcome\n\nHi.\n",
    "getting-started/introduction.mdx": (
        "---\ntitle: Introduction\n---\n\n# Introduction\n\nThe first steps with Kinetis.\n"
    ),
    "features/diagrams/mermaid.md": (
        "# Mermaid Diagrams\n\nFlowcharts, sequence diagrams, and state charts.\n"
    ),
    "features/index.md": "# Features\r\n\r\nEverything Kinetis does.\r\n",
    "guides/deploy.md": "Deploying behind a proxy. No heading here at all.\n",
}


@pytest.fixture
def start_http() -> Iterator[StartHttp]:
    """Start `kinetis-docs serve --http --port 0 OPTIONS...`; stopped at teardown.

    Its environment is `env` (this process's by default) without any route setting, plus
    `settings` (`MCP_BEARER_TOKEN=...`, say)."""
    started: list[HttpServer] = []

    def start(
        *options: str,
        env: Mapping[str, str] | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> HttpServer:
        workers = int(options[options.index("--workers") + 1]) if "--workers" in options else 1
        environ = {**clean_environ(env), **(settings or {})}
        server = HttpServer(serve_http_argv(*options), environ, workers=workers)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def docs_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("tree"), TREE)


@pytest.fixture(scope="module")
def tree_server(docs_tree: Path) -> Iterator[HttpServer]:
    """One public route over `docs_tree`, without a token, shared by a module's tests."""
    server = HttpServer(serve_http_argv("--docs-dir", str(docs_tree), *UNLIMITED), clean_environ())
    yield server
    server.stop()
