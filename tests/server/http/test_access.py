"""Who may use the route: the bearer token, private mode, the DNS-rebinding guard."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import TIMEOUT, HttpServer, clean_environ, raw_status, serve_http_argv

TOKEN = "s3cret-token-\u00e9"  # non-ASCII on purpose: compared as bytes
CHALLENGE = 'Bearer realm="kinetis-mcp-docs"'
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _unauthorized(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == CHALLENGE
    assert response.json() == {"error": reason}


@pytest.fixture
def token_server(start_http: StartHttp, docs_tree: Path) -> HttpServer:
    return start_http(
        "--docs-dir", str(docs_tree), *UNLIMITED, settings={"MCP_BEARER_TOKEN": TOKEN}
    )


def _post_with_authorization(server: HttpServer, authorization: str) -> httpx.Response:
    return server.client.post(
        server.url,
        content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        headers={b"content-type": b"application/json", b"authorization": authorization.encode()},
    )


def test_a_set_token_is_required_and_a_missing_or_wrong_one_is_401(
    token_server: HttpServer,
) -> None:
    _unauthorized(token_server.rpc("tools/list"), "Missing bearer token")
    _unauthorized(token_server.rpc("tools/list", token="wrong"), "Invalid bearer token")
    _unauthorized(token_server.rpc("tools/list", token=TOKEN + "x"), "Invalid bearer token")
    _unauthorized(_post_with_authorization(token_server, f"Basic {TOKEN}"), "Missing bearer token")
    _unauthorized(token_server.client.get(token_server.url), "Missing bearer token")
    assert token_server.rpc("tools/list", token=TOKEN).status_code == 200
    assert _post_with_authorization(token_server, f"bearer  {TOKEN}").status_code == 200


@pytest.mark.parametrize(
    "token",
    [
        "team-\u00e0",  # UTF-8 ends in byte A0, which Latin-1 reads as a no-break space
        "team-\u00c5",  # ... in byte 85, which Latin-1 reads as a next-line character
        "team-\u0160",  # ... C5 A0
        "\u00a0team\u0085",  # no-break space and next line themselves: not HTTP's whitespace
    ],
)
def test_a_token_whose_utf8_ends_in_bytes_latin1_calls_whitespace_authenticates(
    start_http: StartHttp, docs_tree: Path, token: str
) -> None:
    server = start_http(
        "--docs-dir", str(docs_tree), *UNLIMITED, settings={"MCP_BEARER_TOKEN": token}
    )
    assert server.rpc("tools/list", token=token).status_code == 200
    _unauthorized(server.rpc("tools/list", token=token[:-1]), "Invalid bearer token")
    # HTTP's own whitespace around the value is no part of the token; sent as raw bytes,
    # since client libraries refuse a header value that ends in whitespace.
    sent = f"Authorization: Bearer \t{token} \t".encode().decode("latin-1")
    assert raw_status(server.port, ["Host: 127.0.0.1", sent], PING) == 200


def test_a_token_that_is_not_utf8_is_refused_at_start_with_one_line_that_hides_it(
    tmp_path: Path,
) -> None:
    environ = {os.fsencode(name): os.fsencode(value) for name, value in clean_environ().items()}
    environ[b"MCP_BEARER_TOKEN"] = b"s3cret-\xff\xfe-token"  # os.environ: surrogate escapes
    started = subprocess.run(
        serve_http_argv("--docs-dir", str(tmp_path)),
        env=environ,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert started.returncode == 2
    said = started.stderr.decode("utf-8", "replace")
    assert said.count("\n") == 1, said
    assert "MCP_BEARER_TOKEN" in said
    assert "UTF-8" in said
    assert "s3cret" not in said
    assert "Traceback" not in said


def test_the_token_never_reaches_a_log_line(token_server: HttpServer) -> None:
    token_server.rpc("tools/list", token=TOKEN)
    token_server.rpc("tools/list", token="guessed-wrong")
    token_server.stop()
    assert "s3cret" not in token_server.output
    assert "guessed-wrong" not in token_server.output
    assert "POST /api/mcp" in token_server.output  # the access log is there, without tokens


def test_options_needs_no_token(token_server: HttpServer) -> None:
    assert token_server.client.options(token_server.url).status_code == 204


@pytest.mark.parametrize(
    ("settings", "open_"),
    [
        ({}, False),
        ({"MCP_ENABLED": "true"}, False),
        ({"MCP_BEARER_TOKEN": TOKEN}, False),
        ({"MCP_ENABLED": "false", "MCP_BEARER_TOKEN": TOKEN}, False),
        ({"MCP_ENABLED": "true", "MCP_BEARER_TOKEN": TOKEN}, True),
    ],
)
def test_private_mode_is_dark_until_enabled_with_a_token(
    start_http: StartHttp, docs_tree: Path, settings: dict[str, str], open_: bool
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--private", *UNLIMITED, settings=settings)
    answers = [
        server.rpc("tools/list", token=TOKEN).status_code,
        server.client.get(server.url).status_code,
        server.client.options(server.url).status_code,
        # A foreign name or origin: dark is 404 to these too, or a probe learns it exists.
        server.rpc("tools/list", None, {"Host": "evil.example"}, token=TOKEN).status_code,
        server.rpc("tools/list", None, {"Origin": "https://evil.example"}, token=TOKEN).status_code,
        raw_status(server.port, ["Host: 127.0.0.1", "Host: evil.example"], PING),
    ]
    dark = "kinetis-docs: --private: the route is dark, every request answered 404, until"
    if open_:
        assert answers == [200, 401, 204, 421, 403, 421]
        _unauthorized(server.rpc("tools/list"), "Missing bearer token")
        assert dark not in server.output
    else:
        assert answers == [404, 404, 404, 404, 404, 404]
        # Said at start, with what is missing: a dark route must not be a silent one.
        missing = [
            *([] if settings.get("MCP_ENABLED") == "true" else ["MCP_ENABLED=true"]),
            *([] if "MCP_BEARER_TOKEN" in settings else ["MCP_BEARER_TOKEN"]),
        ]
        server.wait_for_output(
            f"{dark} MCP_ENABLED=true and MCP_BEARER_TOKEN are both set in its environment "
            f"(missing: {', '.join(missing)}).\n"
        )


def test_public_mode_without_a_token_is_open(tree_server: HttpServer) -> None:
    assert tree_server.rpc("tools/list").status_code == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "evil.example:8000"}, 421),
        ({"Host": "127.0.0.1.evil.example"}, 421),
        ({"Host": "localhost", "Origin": "https://evil.example"}, 403),
        ({"Host": "localhost", "Origin": "http://localhost.evil.example"}, 403),
        ({"Host": "localhost:9", "Origin": "http://localhost:3000"}, 200),
        ({"Host": "[::1]:9", "Origin": "http://127.0.0.1"}, 200),
        ({"Host": "127.0.0.1"}, 200),
    ],
)
def test_a_loopback_connection_naming_another_host_or_origin_is_refused(
    tree_server: HttpServer, headers: dict[str, str], status: int
) -> None:
    assert tree_server.rpc("ping", None, headers).status_code == status


def test_allowed_hosts_and_origins_pass_the_guard(start_http: StartHttp, docs_tree: Path) -> None:
    server = start_http(
        "--docs-dir",
        str(docs_tree),
        "--allowed-host",
        "docs.example.com",
        "--allowed-origin",
        "https://app.example.com",
        *UNLIMITED,
    )
    headers = {"Host": "docs.example.com", "Origin": "https://app.example.com"}
    assert server.rpc("ping", None, headers).status_code == 200
    assert server.rpc("ping", None, {"Host": "other.example.com"}).status_code == 421


def test_binding_beyond_loopback_without_a_token_prints_a_warning(
    start_http: StartHttp, docs_tree: Path
) -> None:
    everywhere = "0.0.0.0"  # noqa: S104 - bound, but only loopback traffic is sent
    open_ = start_http("--host", everywhere, "--docs-dir", str(docs_tree))
    # The port it got, not the 0 it was given.
    open_.wait_for_output(
        f"kinetis-docs: warning: serving 0.0.0.0:{open_.port} beyond loopback without "
        "MCP_BEARER_TOKEN"
    )
    guarded = start_http(
        "--host",
        everywhere,
        "--docs-dir",
        str(docs_tree),
        settings={"MCP_BEARER_TOKEN": TOKEN},
    )
    local = start_http("--docs-dir", str(docs_tree))
    for server in (guarded, local):
        assert "warning" not in server.output


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        (["Host: 127.0.0.1", "Host: evil.example"], 421),
        (["Host: evil.example", "Host: 127.0.0.1"], 421),
        (["Host: 127.0.0.1", "Host: 127.0.0.1"], 421),
        (["Host: 127.0.0.1", "Origin: http://localhost", "Origin: https://evil.example"], 403),
        (["Host: 127.0.0.1", "Origin: https://evil.example", "Origin: http://localhost"], 403),
        (["Host: 127.0.0.1", "Origin: http://localhost"], 200),
    ],
)
def test_a_host_or_origin_sent_twice_is_refused_whichever_copy_comes_first(
    tree_server: HttpServer, lines: list[str], status: int
) -> None:
    assert raw_status(tree_server.port, lines, PING) == status


def test_authorization_sent_twice_is_401_even_when_one_copy_carries_the_token(
    token_server: HttpServer,
) -> None:
    for pair in ([TOKEN, "wrong"], ["wrong", TOKEN], [TOKEN, TOKEN]):
        response = token_server.client.post(
            token_server.url,
            content=PING,
            headers=[
                (b"content-type", b"application/json"),
                *[(b"authorization", f"Bearer {token}".encode()) for token in pair],
            ],
        )
        _unauthorized(response, "More than one Authorization header")


def _dual_stack_loopback() -> str | None:
    """Why IPv4 cannot reach a socket bound to `::` here, or None when it can."""
    if not socket.has_ipv6:
        return "this Python has no IPv6"
    try:
        # Bound as uvicorn binds for several workers: the system's default, dual-stack on
        # Linux unless net.ipv6.bindv6only is set.
        with socket.socket(socket.AF_INET6) as listener:
            listener.bind(("::", 0))
            listener.listen()
            with socket.create_connection(("127.0.0.1", listener.getsockname()[1]), timeout=5):
                pass
    except OSError as error:
        return f"no dual-stack IPv6 socket here: {error}"
    return None


def test_an_ipv4_connection_to_a_dual_stack_socket_is_guarded_as_loopback(
    start_http: StartHttp, docs_tree: Path
) -> None:
    reason = _dual_stack_loopback()
    if reason is not None:
        pytest.skip(reason)
    # With several workers uvicorn binds the socket itself, dual-stack (with one, asyncio
    # binds `::` for IPv6 alone); gunicorn and socket activation bind dual-stack too.
    options = ("--host", "::", "--workers", "2", "--docs-dir", str(docs_tree), *UNLIMITED)
    server = start_http(*options)
    # The connection arrives on ::ffff:127.0.0.1: loopback, so a foreign name is refused.
    assert server.rpc("ping", None, {"Host": "evil.example"}).status_code == 421
    assert server.rpc("ping", None, {"Origin": "https://evil.example"}).status_code == 403
    assert server.rpc("ping").status_code == 200


def test_binding_another_loopback_address_accepts_its_own_host_and_no_other(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--host", "127.0.0.2", "--docs-dir", str(docs_tree), *UNLIMITED)
    url = f"http://127.0.0.2:{server.port}/api/mcp"
    response = server.client.post(url, content=PING, headers={"Content-Type": "application/json"})
    assert response.status_code == 200  # Host: 127.0.0.2:<port>, as every client sends it
    assert raw_status(server.port, ["Host: 127.0.0.2"], PING, host="127.0.0.2") == 200
    assert raw_status(server.port, ["Host: 127.0.0.3"], PING, host="127.0.0.2") == 421
    assert raw_status(server.port, ["Host: evil.example"], PING, host="127.0.0.2") == 421
