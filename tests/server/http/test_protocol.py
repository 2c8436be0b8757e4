"""The route's JSON-RPC and HTTP rules, over real sockets to `kinetis-docs serve --http`."""

from __future__ import annotations

import base64
import gzip
import json
import socket
from typing import Any

import pytest

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.server.http.envelope import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION
from kinetis_mcp_docs.server.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from tests.support.http import TIMEOUT, HttpServer

SUPPORTED = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SERVER_INFO = {"name": "kinetis-mcp-docs", "version": __version__}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _error(response: Any, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert "result" not in body
    assert body["error"]["code"] == code
    error: dict[str, Any] = body["error"]
    return error


def test_tools_list_is_exactly_the_two_tools_of_the_contract(tree_server: HttpServer) -> None:
    response = tree_server.rpc("tools/list", request_id=2)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            "resultType": "complete",
            "tools": [
                {
                    "name": "search_docs",
                    "description": (
                        "Search Kinetis documentation by free-text query. Returns matching "
                        "pages with title, URL, and snippet."
                    ),
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": "Free-text search query."},
                            "limit": {
                                "type": "number",
                                "description": "Maximum number of results to return.",
                                "default": 5,
                            },
                        },
                        "required": ["query"],
                    },
                },
                {
                    "name": "fetch_page",
                    "description": (
                        "Fetch the raw MDX content of a documentation page by URL path (for "
                        'example, "/getting-started/introduction"). With startLine or '
                        "lineCount, only a window of whole lines (at most 200 lines and 32 KiB)."
                    ),
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "url": {
                                "type": "string",
                                "description": 'Page path starting with "/" or relative.',
                            },
                            "startLine": {
                                "type": "integer",
                                "minimum": 1,
                                "default": 1,
                                "description": (
                                    "First line to return, from 1 (a search result's `line`). "
                                    "With startLine or lineCount, a window of whole lines comes "
                                    "back instead of the whole file."
                                ),
                            },
                            "lineCount": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 200,
                                "default": 200,
                                "description": (
                                    "Most lines to return, 1 to 200; the window also stops "
                                    "before 32 KiB, never splitting a line. Continue at "
                                    "endLine + 1 while hasMore is true."
                                ),
                            },
                        },
                        "required": ["url"],
                    },
                },
            ],
            "ttlMs": 60000,
            "cacheScope": "public",
        },
    }


def test_server_discover_reports_versions_capabilities_and_server_info(
    tree_server: HttpServer,
) -> None:
    result = tree_server.rpc("server/discover", {"_meta": MODERN_META}).json()["result"]
    assert result == {
        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        "resultType": "complete",
        "supportedVersions": SUPPORTED,
        "capabilities": {"tools": {"listChanged": False}},
        "ttlMs": 60000,
        "cacheScope": "public",
    }


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2026-07-28"),
        ("2099-01-01", "2026-07-28"),
        (None, "2026-07-28"),
    ],
)
def test_initialize_echoes_a_supported_version_and_answers_the_newest_otherwise(
    tree_server: HttpServer, asked: str | None, answered: str
) -> None:
    params: dict[str, object] = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if asked is not None:
        params["protocolVersion"] = asked
    result = tree_server.rpc("initialize", params).json()["result"]
    assert result["protocolVersion"] == answered
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == SERVER_INFO


def test_ping_is_an_empty_result_and_no_method_needs_an_earlier_initialize(
    tree_server: HttpServer,
) -> None:
    assert tree_server.rpc("ping").json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    result = tree_server.call_tool("fetch_page", {"url": "/"})
    assert result["resultType"] == "complete"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search_docs"}},
    ],
)
def test_a_notification_is_accepted_with_202_and_an_empty_body(
    tree_server: HttpServer, message: dict[str, Any]
) -> None:
    response = tree_server.post(message)
    assert response.status_code == 202
    assert response.content == b""


def test_an_unknown_method_is_32601_with_404(tree_server: HttpServer) -> None:
    for method in ("resources/list", "prompts/list", "nope"):
        _error(tree_server.rpc(method), 404, METHOD_NOT_FOUND)


def test_a_batch_is_refused_whole(tree_server: HttpServer) -> None:
    response = tree_server.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    error = _error(response, 400, INVALID_REQUEST)
    assert error["message"] == "Batch requests are not supported"
    assert response.json()["id"] is None


def _ping_holding(value: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"ignored":%s}}' % value.encode()


def test_a_body_holding_more_values_than_any_request_needs_is_refused_before_it_is_parsed(
    tree_server: HttpServer,
) -> None:
    # Every `[`, `{` and `,` counts, wherever it stands: 10,001 of them are refused.
    nested = _ping_holding("[" + ",".join(["[" * 10 + "]" * 10] * 90_000) + "]")
    commas_in_a_string = _ping_holding('"' + "," * 10_001 + '"')
    for body in (nested, commas_in_a_string):
        response = tree_server.post(body)
        error = _error(response, 400, INVALID_REQUEST)
        assert error["message"] == (
            "Invalid Request: more than 10000 of the characters [, { and , in one message."
        )
        assert response.json()["id"] is None
    # 10,000 are read as any request is: the envelope's five, and 4,998 arrays with 4,997
    # commas between them.
    admitted = _ping_holding("[" + ",".join(["[]"] * 4_997) + ",0]")
    assert admitted.count(b"[") + admitted.count(b"{") + admitted.count(b",") == 10_000
    response = tree_server.post(admitted)
    assert response.status_code == 200, response.text
    assert response.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0",', b"", b"\xff\xfe", b"NaN", b"{} {}"])
def test_a_body_that_is_not_one_json_value_is_32700(tree_server: HttpServer, body: bytes) -> None:
    response = tree_server.post(body)
    assert _error(response, 400, PARSE_ERROR)["message"] == "Parse error"
    assert response.json()["id"] is None


@pytest.mark.parametrize(
    ("message", "answered_id"),
    [
        ({"jsonrpc": "1.0", "id": 7, "method": "ping"}, 7),
        ({"id": 7, "method": "ping"}, 7),
        ({"jsonrpc": "2.0", "id": "s", "method": ""}, "s"),
        ({"jsonrpc": "2.0", "id": 7}, 7),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
    ],
)
def test_an_invalid_envelope_with_an_id_is_32600(
    tree_server: HttpServer, message: dict[str, Any], answered_id: object
) -> None:
    response = tree_server.post(message)
    _error(response, 400, INVALID_REQUEST)
    assert response.json()["id"] == answered_id


def test_params_that_are_not_an_object_are_32602(tree_server: HttpServer) -> None:
    _error(tree_server.rpc("tools/list", [1]), 400, INVALID_PARAMS)


def test_a_2026_request_carries_its_version_in_meta_and_a_legacy_one_need_not(
    tree_server: HttpServer,
) -> None:
    params = {"_meta": MODERN_META, "name": "fetch_page", "arguments": {"url": "/"}}
    headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "fetch_page",
    }
    assert tree_server.rpc("tools/call", params, headers).status_code == 200
    # Claude Code and Codex send `_meta` on tools/call without the version key.
    legacy = {"_meta": {"progressToken": 3}, "name": "fetch_page", "arguments": {"url": "/"}}
    assert tree_server.rpc("tools/call", legacy).status_code == 200


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("tools/list", {"_meta": MODERN_META}, {"MCP-Protocol-Version": "2025-06-18"}),
        ("tools/list", {}, {"Mcp-Method": "tools/call"}),
        ("tools/call", {"name": "search_docs", "arguments": {}}, {"Mcp-Name": "fetch_page"}),
        (
            "tools/call",
            {"name": "search_docs", "arguments": {}},
            {"Mcp-Method": "tools/call", "Mcp-Name": "search-docs"},
        ),
    ],
)
def test_a_header_that_disagrees_with_the_body_is_32020_with_400(
    tree_server: HttpServer, method: str, params: dict[str, Any], headers: dict[str, str]
) -> None:
    _error(tree_server.rpc(method, params, headers), 400, HEADER_MISMATCH)


def test_headers_that_agree_or_are_absent_pass_and_mcp_name_binds_tools_call_only(
    tree_server: HttpServer,
) -> None:
    headers = {"MCP-Protocol-Version": "2025-06-18", "Mcp-Method": "tools/list", "Mcp-Name": "x"}
    assert tree_server.rpc("tools/list", {}, headers).status_code == 200


def test_an_unsupported_version_header_is_32022_naming_supported_and_requested(
    tree_server: HttpServer,
) -> None:
    response = tree_server.rpc("tools/list", None, {"MCP-Protocol-Version": "1999-01-01"})
    error = _error(response, 400, UNSUPPORTED_PROTOCOL_VERSION)
    assert response.json()["id"] is None
    assert error == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": SUPPORTED, "requested": "1999-01-01"},
    }


def test_an_unsupported_version_header_is_answered_before_the_body_is_sent(
    tree_server: HttpServer,
) -> None:
    # As the error table says: the route once waited for the whole body (up to the body
    # timeout) to refuse what the head had already told it.
    head = (
        b"POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"MCP-Protocol-Version: 1999-01-01\r\nContent-Length: 1000000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", tree_server.port), timeout=TIMEOUT) as sock:
        sock.sendall(head + b'{"jsonrpc":"2.0",')  # and never the rest
        answer = b""
        while not answer.endswith(b"}}"):
            read = sock.recv(65536)
            assert read, answer
            answer += read
    head_part, _, body = answer.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 400 ")
    message = json.loads(body)
    assert message["id"] is None
    assert message["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION


def test_an_unsupported_version_in_meta_alone_is_32022_under_the_request_id(
    tree_server: HttpServer,
) -> None:
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2030-01-01"}
    response = tree_server.rpc("tools/list", {"_meta": meta}, request_id=9)
    error = _error(response, 400, UNSUPPORTED_PROTOCOL_VERSION)
    assert response.json()["id"] == 9
    assert error["data"]["requested"] == "2030-01-01"


def test_get_is_405_and_options_is_204_allowing_post_and_options(tree_server: HttpServer) -> None:
    got = tree_server.client.get(tree_server.url)
    assert got.status_code == 405
    assert got.headers["allow"] == "POST, OPTIONS"
    options = tree_server.client.options(tree_server.url)
    assert options.status_code == 204
    assert options.headers["allow"] == "POST, OPTIONS"
    assert options.content == b""


def test_another_path_is_404(tree_server: HttpServer) -> None:
    other = tree_server.url.replace("/api/mcp", "/api/other")
    assert tree_server.client.post(other, json={}).status_code == 404


def test_a_body_that_is_not_json_by_its_content_type_is_415(tree_server: HttpServer) -> None:
    response = tree_server.client.post(
        tree_server.url, content=b"{}", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    assert response.json() == {"error": "Content-Type must be application/json"}


@pytest.mark.parametrize(
    ("lines", "coded"),
    [
        ([("Content-Encoding", "gzip")], True),
        ([("Content-Encoding", "GZIP")], True),
        ([("Content-Encoding", "deflate")], True),
        ([("Content-Encoding", "br")], True),
        ([("Content-Encoding", "identity, gzip")], True),
        ([("Content-Encoding", "identity"), ("Content-Encoding", "gzip")], True),
        ([("Content-Encoding", "gzip"), ("Content-Encoding", "identity")], True),
        ([("Content-Encoding", "identity")], False),
        ([("Content-Encoding", "Identity, identity")], False),
        ([("Content-Encoding", "")], False),
    ],
    ids=[
        "gzip",
        "gzip-uppercase",
        "deflate",
        "br",
        "identity-then-gzip",
        "two-lines",
        "two-lines-gzip-first",
        "identity",
        "identity-twice",
        "empty",
    ],
)
def test_a_body_in_a_content_coding_is_415_naming_identity_and_identity_is_read(
    tree_server: HttpServer, lines: list[tuple[str, str]], coded: bool
) -> None:
    # Once read as plain JSON whatever its coding: a gzip body was answered -32700.
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    body = json.dumps(ping).encode("ascii")
    if coded:
        body = gzip.compress(body)
    response = tree_server.client.post(
        tree_server.url,
        content=body,
        headers=[("Content-Type", "application/json"), *lines],
    )
    if coded:
        assert response.status_code == 415, response.text
        assert response.json() == {"error": "Content-Encoding is not supported"}
        assert response.headers["accept-encoding"] == "identity"
    else:
        assert response.status_code == 200, response.text
        assert response.json()["result"] == {}


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            b"Content-Type: application/json\r\nContent-Encoding: gzip\r\n",
            b"Content-Encoding is not supported",
        ),
        (b"Content-Type: text/plain\r\n", b"Content-Type must be application/json"),
        (b"", b"Content-Type must be application/json"),
    ],
    ids=["content-encoding", "content-type", "no-content-type"],
)
@pytest.mark.parametrize("length", [100_000, 3 * 1024 * 1024], ids=["small", "past-the-cap"])
def test_a_body_the_route_would_refuse_is_refused_415_before_it_is_read(
    tree_server: HttpServer, fields: bytes, error: bytes, length: int
) -> None:
    # The body never comes: the answer must not wait for it (nor for the body timeout). A
    # Content-Type was once checked only after the whole body was in, and a body declared
    # past the cap was 413 although no size would have made it acceptable.
    with socket.create_connection(("127.0.0.1", tree_server.port), timeout=10) as connection:
        connection.sendall(
            b"POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + fields
            + b"Content-Length: "
            + str(length).encode()
            + b"\r\n\r\n\x1f\x8b"
        )
        answer = b""
        while not answer.endswith(b"}"):
            read = connection.recv(65536)
            assert read, answer
            answer += read
    assert answer.startswith(b"HTTP/1.1 415 "), answer
    assert answer.endswith(b'{"error":"' + error + b'"}'), answer


def _raw_answer(server: HttpServer, request: bytes) -> tuple[int, bytes]:
    """The status and body of the answer to `request`, sent as is on a connection of its own."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            read = connection.recv(65536)
            assert read, answer
            answer += read
        head, _, body = answer.partition(b"\r\n\r\n")
        (length,) = [
            int(line.split(b":", 1)[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ]
        while len(body) < length:
            read = connection.recv(65536)
            assert read, answer
            body += read
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        (["Transfer-Encoding: gzip, chunked"], 501),
        (["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"], 501),
        (["Transfer-Encoding: identity, chunked"], 501),
        (["Transfer-Encoding: chunked"], 200),
        (["Transfer-Encoding: Chunked"], 200),
    ],
    ids=["gzip-chunked", "two-lines", "identity-chunked", "chunked", "chunked-capitalised"],
)
def test_a_body_in_a_transfer_coding_other_than_chunked_is_501(
    tree_server: HttpServer, lines: list[str], status: int
) -> None:
    # httptools undoes `chunked` and passed the other codings' bytes on as JSON: a gzip
    # transfer-coded body was answered -32700 (h11 refuses such a request itself, 400).
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    body = gzip.compress(ping) if status == 501 else ping
    head = "\r\n".join(
        ["POST /api/mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", *lines]
    )
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    found, answer = _raw_answer(tree_server, head.encode("ascii") + b"\r\n\r\n" + chunked)
    assert found == status, answer
    if status == 501:
        assert json.loads(answer) == {
            "error": "Transfer-Encoding other than chunked is not supported"
        }
    else:
        assert json.loads(answer)["result"] == {}


def test_a_body_of_2_mib_is_read_and_one_byte_more_is_413(tree_server: HttpServer) -> None:
    padding = 2 * 1024 * 1024 - len(b'{"jsonrpc":"2.0","id":1,"method":"ping","x":""}')
    exact = b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"' + b"a" * padding + b'"}'
    assert len(exact) == 2 * 1024 * 1024
    assert tree_server.post(exact).json()["result"] == {}
    too_big = tree_server.post(exact[:-2] + b'a"}')
    assert too_big.status_code == 413
    assert too_big.json() == {"error": "Request body too large"}


def test_an_endless_chunked_body_is_refused_without_being_read_to_its_end(
    tree_server: HttpServer,
) -> None:
    # Raw HTTP/1.1 with chunked encoding and no Content-Length: the route must answer 413
    # once 2 MiB have arrived, while the client is still sending.
    with socket.create_connection(("127.0.0.1", tree_server.port), timeout=30) as connection:
        connection.sendall(
            b"POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"a" * 65536
        answer = b""
        for _ in range(64 * 16):  # up to 64 MiB, far past the cap
            try:
                connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except OSError:
                break  # the server closed the connection after answering
            connection.setblocking(False)
            try:
                answer += connection.recv(65536)
            except BlockingIOError:
                pass
            finally:
                connection.setblocking(True)
            if answer:
                break
        connection.settimeout(30)
        while b"\r\n\r\n" not in answer:
            answer += connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_a_tool_result_is_the_contract_shape_with_is_error_only_on_errors(
    tree_server: HttpServer,
) -> None:
    found = tree_server.call_tool("search_docs", {"query": "mermaid"})
    assert list(found) == ["resultType", "content"]
    missing = tree_server.call_tool("fetch_page", {"url": "/nope/missing"})
    assert missing == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Page not found: /nope/missing"}],
        "isError": True,
    }


def test_an_unknown_tool_is_an_error_result_not_an_error_code(tree_server: HttpServer) -> None:
    result = tree_server.call_tool("delete_docs", {})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Unknown tool: delete_docs"


@pytest.mark.parametrize(
    ("params", "shown"),
    [
        ({"arguments": {"query": "x"}}, "null"),
        ({"name": None}, "null"),
        ({"name": 5}, "5"),
        ({"name": ["search_docs"]}, '["search_docs"]'),
        ({"name": {"tool": "é"}}, '{"tool": "é"}'),
    ],
)
def test_a_tool_name_missing_or_not_a_string_is_an_unknown_tool_error_result(
    tree_server: HttpServer, params: dict[str, Any], shown: str
) -> None:
    response = tree_server.rpc("tools/call", params)
    assert response.status_code == 200
    assert response.json()["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": f"Unknown tool: {shown}"}],
        "isError": True,
    }


def test_a_tool_name_of_an_integer_too_long_to_convert_is_shown_as_it_was_sent(
    tree_server: HttpServer,
) -> None:
    digits = "12" * 2_500
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%s}}'
    response = tree_server.post(body % digits.encode())
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == f"Unknown tool: {digits}"


def test_the_search_result_text_is_the_contract_json_document(tree_server: HttpServer) -> None:
    text = tree_server.call_tool("search_docs", {"query": "mermaid"})["content"][0]["text"]
    assert text == json.dumps(
        {
            "query": "mermaid",
            "results": [
                {
                    "title": "Mermaid Diagrams",
                    "url": "/features/diagrams/mermaid",
                    "snippet": "Flowcharts, sequence diagrams, and state charts.",
                }
            ],
        },
        indent=2,
    )


@pytest.mark.parametrize("method", ["tools/list", "ping", "no/such/method"])
def test_an_integer_id_too_long_to_convert_is_echoed_as_it_was_written(
    tree_server: HttpServer, method: str
) -> None:
    literal = "9" * 5000
    body = b'{"jsonrpc":"2.0","id":%s,"method":"%s"}' % (literal.encode(), method.encode())
    response = tree_server.post(body)
    assert response.content.startswith(b'{"jsonrpc":"2.0","id":' + literal.encode() + b",")
    # The answer is still one JSON document the client can read.
    assert response.content.count(b"{") == response.content.count(b"}")


def _post_lines(server: HttpServer, message: object, lines: list[tuple[str, str]]) -> Any:
    """POST `message` with `lines` as header lines, a name repeated as often as it is listed."""
    return server.client.post(
        server.url,
        content=json.dumps(message).encode(),
        headers=[("Content-Type", "application/json"), *lines],
    )


SEARCH_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {
        "name": "search_docs",
        "arguments": {"query": "mermaid"},
        "_meta": MODERN_META,
    },
}


@pytest.mark.parametrize(
    ("name", "agreeing", "other"),
    [
        ("MCP-Protocol-Version", "2026-07-28", "2025-06-18"),
        ("MCP-Protocol-Version", "2026-07-28", "2026-07-28"),
        ("Mcp-Method", "tools/call", "tools/list"),
        ("Mcp-Name", "search_docs", "fetch_page"),
        ("Mcp-Name", "search_docs", "search_docs"),
    ],
)
def test_a_routing_header_sent_twice_is_32020_whichever_copy_comes_first(
    tree_server: HttpServer, name: str, agreeing: str, other: str
) -> None:
    for lines in ([(name, agreeing), (name, other)], [(name, other), (name, agreeing)]):
        response = _post_lines(tree_server, SEARCH_CALL, lines)
        error = _error(response, 400, HEADER_MISMATCH)
        assert error["message"] == f"Header mismatch: {name} appears more than once"
        assert response.json()["id"] == 3


def _encoded(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def test_an_encoded_mcp_name_or_mcp_method_is_decoded_before_it_is_compared(
    tree_server: HttpServer,
) -> None:
    lines = [("Mcp-Method", _encoded("tools/call")), ("Mcp-Name", _encoded("search_docs"))]
    assert _post_lines(tree_server, SEARCH_CALL, lines).status_code == 200
    # A tool name that is not plain ASCII reaches the tool, which does not know it.
    call = {**SEARCH_CALL, "params": {"name": "recherche_é", "arguments": {}}}
    response = _post_lines(tree_server, call, [("Mcp-Name", _encoded("recherche_é"))])
    assert response.json()["result"]["content"][0]["text"] == "Unknown tool: recherche_é"


@pytest.mark.parametrize(
    "value",
    [
        "=?base64?c2VhcmNoX2RvY3M?=",  # padding missing
        "=?base64?c2VhcmNoX2RvY3N=?=",  # not canonical: trailing bits set
        "=?base64?!!!!?=",
        "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?=",  # not UTF-8
        "=?BASE64?" + base64.b64encode(b"search_docs").decode() + "?=",  # markers are lowercase
    ],
)
def test_a_malformed_encoded_mcp_name_matches_nothing(tree_server: HttpServer, value: str) -> None:
    _error(_post_lines(tree_server, SEARCH_CALL, [("Mcp-Name", value)]), 400, HEADER_MISMATCH)
