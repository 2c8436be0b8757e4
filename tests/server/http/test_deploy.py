"""Ways to run the route besides `kinetis-docs serve --http`, and what never reaches the wire."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from kinetis_mcp_docs.server.application import DocsApplication
from kinetis_mcp_docs.server.http import McpRoute, Settings
from tests.server.http.conftest import StartHttp
from tests.support.http import HttpServer, clean_environ, serve_http_argv


def test_the_asgi_factory_runs_under_plain_uvicorn_configured_by_the_environment(
    docs_tree: Path,
) -> None:
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "kinetis_mcp_docs.server.http:create_app",
        "--port",
        "0",
    ]
    env = {
        **clean_environ(),
        "KINETIS_DOCS_PAGES_DIR": str(docs_tree),
        "MCP_BEARER_TOKEN": "factory-token",
    }
    server = HttpServer(argv, env)
    try:
        assert server.rpc("tools/list").status_code == 401
        result = server.call_tool("fetch_page", {"url": "/guides/deploy"}, token="factory-token")
        assert "Deploying behind a proxy" in result["content"][0]["text"]
    finally:
        server.stop()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_one_startup_line_names_the_port_it_got_and_the_endpoints_url(
    start_http: StartHttp, docs_tree: Path, workers: str
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--port", "0", "--workers", workers)

    bound = f"127.0.0.1:{server.port}"
    line = f"kinetis-docs: serving MCP at http://{bound}/api/mcp (bound to {bound})\n"
    server.wait_for_output(line)
    assert server.output.count("kinetis-docs: serving MCP at") == 1
    assert server.url == f"http://{bound}/api/mcp"
    assert server.rpc("ping").status_code == 200


def test_a_host_given_as_a_name_is_named_in_the_url_beside_the_address_bound(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--host", "localhost")
    server.wait_for_output(
        f"kinetis-docs: serving MCP at http://localhost:{server.port}/api/mcp (bound to "
        f"127.0.0.1:{server.port})\n"
    )


@pytest.mark.interpreter
def test_several_workers_serve_the_same_route(start_http: StartHttp, docs_tree: Path) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--workers", "2")
    for _ in range(10):
        assert server.call_tool("fetch_page", {"url": "/"})["resultType"] == "complete"


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        (
            {"KINETIS_DOCS_TRUSTED_PROXIES": "not-an-address"},
            (
                "KINETIS_DOCS_TRUSTED_PROXIES: "
                "'not-an-address' does not appear to be an IPv4 or IPv6 network"
            ),
        ),
        (
            {"KINETIS_DOCS_PRIVATE": "ture"},
            "KINETIS_DOCS_PRIVATE='ture': use true or false (or 1/0, yes/no)",
        ),
        (
            {"MCP_ENABLED": "enabled"},
            "MCP_ENABLED='enabled': use true or false (or 1/0, yes/no)",
        ),
        (
            {"MCP_BEARER_TOKEN": "s3cret-token\n"},
            "MCP_BEARER_TOKEN has whitespace around it; no client could send it",
        ),
        (
            {"MCP_BEARER_TOKEN": " s3cret-token"},
            "MCP_BEARER_TOKEN has whitespace around it; no client could send it",
        ),
        (
            {"MCP_BEARER_TOKEN": "s3cret\x07token"},
            "MCP_BEARER_TOKEN holds a control character; no client could send it",
        ),
        (
            {"KINETIS_DOCS_HEADER_TIMEOUT": "0"},
            "KINETIS_DOCS_HEADER_TIMEOUT='0': not a positive number of seconds",
        ),
        (
            {"KINETIS_DOCS_BODY_TIMEOUT": "inf"},
            "KINETIS_DOCS_BODY_TIMEOUT='inf': not a positive number of seconds",
        ),
        (
            {"KINETIS_DOCS_MAX_CONNECTIONS": "many"},
            "KINETIS_DOCS_MAX_CONNECTIONS='many': not a positive integer",
        ),
        (
            {"KINETIS_DOCS_BODY_MEMORY": "2"},
            (
                "KINETIS_DOCS_BODY_MEMORY='2': not a whole number of MiB from 4 (the largest body "
                "and room for ordinary ones)"
            ),
        ),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_status_2(settings: dict[str, str], line: str) -> None:
    env = {**clean_environ(), **settings}
    done = subprocess.run(
        serve_http_argv(), env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"kinetis-docs: {line}"]
    assert "s3cret" not in done.stderr


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            ["--rate-limit-storage", "memcached://cache:11211"],
            "--rate-limit-storage 'memcached://cache:11211': use memory:// or a redis:// URI",
        ),
        (
            ["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "not-an-address"],
            "--trusted-proxy 'not-an-address': not an IP address or network",
        ),
    ],
)
def test_a_bad_option_is_named_as_typed_not_as_the_variable_it_becomes(
    options: list[str], line: str
) -> None:
    done = subprocess.run(
        serve_http_argv(*options),
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"kinetis-docs: {line}"]
    assert "KINETIS_DOCS_" not in done.stderr


@pytest.mark.parametrize(
    ("private", "enabled", "status"),
    [
        ("TRUE", "Yes", 200),
        ("1", "1", 200),
        ("yes", " true ", 200),
        ("true", "no", 404),
        ("true", "0", 404),
        ("False", "", 200),
        ("no", "false", 200),
        ("", "", 200),
    ],
)
def test_both_switches_read_true_1_yes_and_false_0_no_in_any_case(
    private: str, enabled: str, status: int
) -> None:
    settings = Settings.from_environ(
        {"KINETIS_DOCS_PRIVATE": private, "MCP_ENABLED": enabled, "MCP_BEARER_TOKEN": "t"}
    )
    assert (404 if settings.dark else 200) == status


class _Broken(DocsApplication):
    def site_tools(self) -> Any:
        tools = super().site_tools()

        class Failing:
            def definitions(self) -> list[dict[str, object]]:
                return tools.definitions()

            def call(self, name: object, arguments: object = None) -> object:
                raise RuntimeError(f"secret internals of {name} {arguments}")

        return Failing()


def test_an_unexpected_failure_is_32603_internal_error_without_a_trace_on_the_wire(
    docs_tree: Path, capsys: Any
) -> None:
    route = McpRoute(Settings(), _Broken(pages_root=str(docs_tree)))
    sent: list[dict[str, Any]] = []
    body = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fetch_page"}}'
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/mcp",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    try:
        anyio.run(route, scope, receive, send)
    finally:
        route.close()
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == (
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}'
    )
    assert "secret internals" in capsys.readouterr().err
