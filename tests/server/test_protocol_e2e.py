"""The protocol as a client sees it: a real `kinetis-docs serve` over pipes.

Nothing here reaches a docs origin: every case is answered before any fetch, which
the server proves by answering with no origin reachable at all.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import subprocess
import termios
from typing import Any

import pytest

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.server.core.catalogue import PAGES
from kinetis_mcp_docs.server.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
)
from tests.server.conftest import SpawnServer
from tests.support.processes import peak_rss_kib, wait_for
from tests.support.stdio import (
    INITIALIZE_PARAMS,
    ServerProcess,
    assert_only_frames,
    module_argv,
    serve_argv,
)

# The stdio server as a client spawns it: a smoke of each interpreter.
pytestmark = pytest.mark.interpreter


def _error_code(response: dict[str, Any]) -> int:
    assert "result" not in response, response
    code = response["error"]["code"]
    assert isinstance(code, int)
    return code


def test_initialize_answers_2025_06_18_whatever_revision_was_asked(server: ServerProcess) -> None:
    for asked in ("2025-06-18", "2024-11-05", "2099-01-01"):
        params = {**INITIALIZE_PARAMS, "protocolVersion": asked}
        result = server.request("initialize", params)["result"]
        assert result["protocolVersion"] == "2025-06-18"
        assert result["capabilities"] == {"tools": {}, "resources": {}}
        assert result["serverInfo"] == {"name": "kinetis-mcp-docs", "version": __version__}
        instructions = result["instructions"]
        for phrase in ("kinetis://docs/agent-workflow", "kinetis_read_doc", "kinetis_search_doc"):
            assert phrase in instructions
        assert "resources/read" in instructions


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        {**INITIALIZE_PARAMS, "protocolVersion": ""},
        {**INITIALIZE_PARAMS, "protocolVersion": 20250618},
        {**INITIALIZE_PARAMS, "capabilities": []},
        {**INITIALIZE_PARAMS, "capabilities": None},
        {"protocolVersion": "2025-06-18", "clientInfo": {"name": "c", "version": "1"}},
        {"protocolVersion": "2025-06-18", "capabilities": {}},
        {**INITIALIZE_PARAMS, "clientInfo": "client"},
        {**INITIALIZE_PARAMS, "clientInfo": {"version": "1"}},
        {**INITIALIZE_PARAMS, "clientInfo": {"name": "", "version": "1"}},
        {**INITIALIZE_PARAMS, "clientInfo": {"name": "c"}},
        {**INITIALIZE_PARAMS, "clientInfo": {"name": "c", "version": 1}},
    ],
)
def test_initialize_without_valid_version_capabilities_or_client_info_is_invalid_params(
    server: ServerProcess, params: dict[str, Any]
) -> None:
    assert _error_code(server.request("initialize", params)) == INVALID_PARAMS


def test_no_method_depends_on_an_earlier_initialize(server: ServerProcess) -> None:
    assert server.request("ping")["result"] == {}
    assert len(server.request("resources/list")["result"]["resources"]) == len(PAGES)
    assert len(server.request("tools/list")["result"]["tools"]) == 2


def test_ping_answers_an_empty_result_with_or_without_params(server: ServerProcess) -> None:
    assert server.request("ping")["result"] == {}
    assert server.request("ping", {"_meta": {"progressToken": 1}})["result"] == {}


def test_tools_list_gives_both_tools_in_order(server: ServerProcess) -> None:
    tools = server.request("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["kinetis_read_doc", "kinetis_search_doc"]
    read, search = (tool["inputSchema"] for tool in tools)
    assert set(read["properties"]) == {"uri", "startLine", "lineCount"}
    assert set(search["properties"]) == {"uri", "query", "startLine"}
    assert read["additionalProperties"] is False
    assert search["additionalProperties"] is False


def test_resources_list_gives_the_whole_catalogue_at_once(server: ServerProcess) -> None:
    result = server.request("resources/list")["result"]
    assert "nextCursor" not in result
    assert [entry["uri"] for entry in result["resources"]] == [
        f"kinetis://docs/{slug}" for slug, *_ in PAGES
    ]
    for entry in result["resources"]:
        assert set(entry) == {"uri", "name", "description", "mimeType"}
        assert entry["mimeType"] == "text/markdown"


@pytest.mark.parametrize("method", ["tools/list", "resources/list"])
@pytest.mark.parametrize("cursor", ["", "next", None, 1])
def test_a_list_request_carrying_a_cursor_is_invalid_params(
    server: ServerProcess, method: str, cursor: object
) -> None:
    assert _error_code(server.request(method, {"cursor": cursor})) == INVALID_PARAMS


@pytest.mark.parametrize("params", [{}, {"uri": ""}, {"uri": 5}, {"uri": None}, {"url": "x"}])
def test_resources_read_without_a_uri_is_invalid_params(
    server: ServerProcess, params: dict[str, Any]
) -> None:
    assert _error_code(server.request("resources/read", params)) == INVALID_PARAMS


def test_resources_read_outside_the_catalogue_is_not_found_with_the_uri(
    server: ServerProcess,
) -> None:
    uri = "kinetis://docs/does-not-exist"
    response = server.request("resources/read", {"uri": uri})
    assert _error_code(response) == RESOURCE_NOT_FOUND
    assert response["error"]["data"] == {"uri": uri}


def test_an_unknown_tool_is_invalid_params(server: ServerProcess) -> None:
    response = server.call_tool("kinetis_delete_doc", {"uri": "kinetis://docs/index"})
    assert _error_code(response) == INVALID_PARAMS
    assert _error_code(server.request("tools/call", {"arguments": {}})) == INVALID_PARAMS


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("kinetis_read_doc", None),
        ("kinetis_read_doc", []),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": True}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": 2.0}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 201}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "start_line": 2}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "x" * 257}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "x", "lineCount": 1}),
    ],
)
def test_tool_arguments_outside_the_schema_are_invalid_params(
    server: ServerProcess, name: str, arguments: object
) -> None:
    params: dict[str, object] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    assert _error_code(server.request("tools/call", params)) == INVALID_PARAMS


def test_a_tool_naming_a_page_outside_the_catalogue_is_refused_as_a_result(
    server: ServerProcess,
) -> None:
    result = server.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/nope"})["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == {"status": "resource_unknown"}
    assert result["content"] == [{"type": "text", "text": '{"status":"resource_unknown"}'}]


@pytest.mark.parametrize("params", [[], [1, 2], "x", 3, None, True])
def test_params_that_are_not_an_object_are_invalid_params(
    server: ServerProcess, params: object
) -> None:
    server.send({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": params})
    response = server.receive()
    assert response["id"] == 7
    assert _error_code(response) == INVALID_PARAMS


@pytest.mark.parametrize(
    "method", ["notifications/initialized", "prompts/list", "resources/subscribe", "PING"]
)
def test_a_method_outside_the_table_is_method_not_found_under_its_id(
    server: ServerProcess, method: str
) -> None:
    server.send({"jsonrpc": "2.0", "id": "abc", "method": method})
    response = server.receive()
    assert response["id"] == "abc"
    assert _error_code(response) == METHOD_NOT_FOUND


@pytest.mark.parametrize(
    "payload",
    [b"{", b"not json", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe{}", b"NaN"],
)
def test_a_line_that_is_not_json_is_a_parse_error_under_a_null_id(
    server: ServerProcess, payload: bytes
) -> None:
    server.send_raw(payload + b"\n")
    response = server.receive()
    assert response["id"] is None
    assert _error_code(response) == PARSE_ERROR


def test_nan_and_infinity_are_not_json(server: ServerProcess) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}\n')
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, PARSE_ERROR)


HUGE = b"9" * 5000  # more digits than Python converts to an int (4,300)


@pytest.mark.parametrize("literal", [HUGE, b"-" + HUGE])
def test_an_id_of_thousands_of_digits_is_echoed_as_sent(
    server: ServerProcess, literal: bytes
) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % literal)
    assert server.receive_line() == b'{"jsonrpc":"2.0","id":%s,"result":{}}\n' % literal

    server.send_raw(b'{"jsonrpc":"2.0","id":%s,"method":"nope"}\n' % literal)
    error = json.loads(server.receive_line(), parse_int=_long_integer_as_text)
    assert (error["id"], _error_code(error)) == (literal.decode(), METHOD_NOT_FOUND)


def _long_integer_as_text(literal: str) -> int | str:
    return literal if len(literal) > 4300 else int(literal)


@pytest.mark.parametrize(
    "arguments",
    [
        b'{"uri":"kinetis://docs/index","lineCount":%s}' % HUGE,
        b'{"uri":"kinetis://docs/index","startLine":-%s}' % HUGE,
    ],
)
def test_an_argument_of_thousands_of_digits_is_out_of_range(
    server: ServerProcess, arguments: bytes
) -> None:
    server.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"kinetis_read_doc","arguments":%s}}\n' % arguments
    )
    response = server.receive()
    assert (response["id"], _error_code(response)) == (1, INVALID_PARAMS)
    assert "must be an integer" in response["error"]["message"]


def test_nesting_deeper_than_the_parser_goes_is_a_parse_error(server: ServerProcess) -> None:
    # Deeper than every supported Python's parser goes (1,000 to 10,000 levels).
    deep = b"[" * 50_000 + b"]" * 50_000
    server.send_raw(deep + b"\n")
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, PARSE_ERROR)
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":%s}}\n' % deep)
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, PARSE_ERROR)


@pytest.mark.parametrize(
    ("payload", "answer_id"),
    [
        (b"[]", None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None),
        (b'"ping"', None),
        (b"42", None),
        (b"null", None),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', 1),
        (b'{"id":2,"method":"ping"}', 2),
        (b'{"jsonrpc":"2.0","id":3}', 3),
        (b'{"jsonrpc":"2.0","id":"s","method":""}', "s"),
        (b'{"jsonrpc":"2.0","id":4,"method":7}', 4),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","method":""}', None),
        (b'{"jsonrpc":"2.0"}', None),
        (b'{"method":"notifications/initialized"}', None),
    ],
)
def test_an_invalid_envelope_is_invalid_request(
    server: ServerProcess, payload: bytes, answer_id: object
) -> None:
    server.send_raw(payload + b"\n")
    response = server.receive()
    assert response["id"] == answer_id
    assert _error_code(response) == INVALID_REQUEST


def test_notifications_are_never_answered_whatever_their_method_or_params(
    server: ServerProcess,
) -> None:
    for notification in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "no/such/method"},
        {"jsonrpc": "2.0", "method": "ping", "params": [1]},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "method": "initialize", "params": None},
    ):
        server.send(notification)
    assert server.request("ping")["result"] == {}
    server.finish()
    assert server.remaining_frames() == []


def test_a_client_response_is_ignored(server: ServerProcess) -> None:
    server.send({"jsonrpc": "2.0", "id": 9, "result": {}})
    server.send({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "no"}})
    server.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}})
    assert server.request("ping")["result"] == {}


def test_a_malformed_client_response_is_invalid_request(server: ServerProcess) -> None:
    server.send({"jsonrpc": "2.0", "id": 9, "result": {}, "error": {"code": 1, "message": "x"}})
    response = server.receive()
    assert (response["id"], _error_code(response)) == (9, INVALID_REQUEST)


def test_a_blank_line_draws_no_answer(server: ServerProcess) -> None:
    server.send_raw(b"\n\r\n\n")
    assert server.request("ping")["result"] == {}
    server.finish()
    assert server.remaining_frames() == []


def test_only_carriage_returns_and_newlines_are_stripped(server: ServerProcess) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n')
    assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    server.send_raw(b'\t{"jsonrpc":"2.0","id":2,"method":"ping"}  \n')
    assert server.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.send_raw(b"   \n")
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, PARSE_ERROR)


def _ping_of_size(size: int, request_id: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % request_id
    tail = b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def test_a_frame_of_exactly_two_mebibytes_is_accepted(server: ServerProcess) -> None:
    server.send_raw(_ping_of_size(2 * 1024 * 1024, 1) + b"\r\n")
    assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def _unread_bytes(fd: int) -> int:
    """Bytes written into the pipe `fd` belongs to that its reader has not read yet."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def test_a_two_mebibyte_payload_is_accepted_when_its_line_ends_in_a_later_read(
    server: ServerProcess,
) -> None:
    # `\r`s are stripped from a payload however many there are, and whenever they arrive.
    server.send_raw(_ping_of_size(2 * 1024 * 1024, 1) + b"\r\r")
    assert server.process.stdin is not None
    stdin = server.process.stdin.fileno()
    wait_for(lambda: _unread_bytes(stdin) == 0, "the server to read every byte", timeout=20)

    server.send_raw(b"\n")

    assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_frame_over_two_mebibytes_is_refused_and_the_stream_goes_on(
    server: ServerProcess,
) -> None:
    server.send_raw(_ping_of_size(2 * 1024 * 1024 + 1, 1) + b"\n")
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, INVALID_REQUEST)
    assert "2 MiB" in response["error"]["message"]
    assert server.request("ping")["result"] == {}


def test_a_huge_line_is_skipped_without_being_buffered(server: ServerProcess) -> None:
    chunk = b"y" * (1024 * 1024)
    for _ in range(64):
        server.send_raw(chunk)
    server.send_raw(b"\n")
    response = server.receive()
    assert (response["id"], _error_code(response)) == (None, INVALID_REQUEST)
    rss_kib = peak_rss_kib(server.process.pid)
    assert rss_kib < 64 * 1024, f"server holds {rss_kib} KiB after a 64 MiB line"
    assert server.request("ping")["result"] == {}


def test_end_of_input_exits_zero(server: ServerProcess) -> None:
    assert server.request("ping")["result"] == {}
    assert server.finish() == 0


def test_a_final_line_without_a_newline_is_still_answered(server: ServerProcess) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"ping"}')
    assert server.finish() == 0
    assert server.remaining_frames() == [{"jsonrpc": "2.0", "id": 5, "result": {}}]


def test_a_closed_stdout_ends_the_server_with_exit_one_and_a_message() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read what the server writes
    with subprocess.Popen(
        serve_argv(), stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE
    ) as process:
        os.close(write_end)
        _, stderr = process.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', timeout=20)
    assert process.returncode == 1
    assert b"stdout" in stderr
    assert stderr.count(b"\n") == 1


def test_many_pipelined_requests_are_each_answered_once_in_order(server: ServerProcess) -> None:
    burst = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % request_id for request_id in range(2000)
    )
    server.send_raw(burst)
    assert server.finish() == 0
    frames = server.remaining_frames()
    assert [frame["id"] for frame in frames] == list(range(2000))
    assert_only_frames(server.lines)


def test_the_module_entry_point_serves_the_same_protocol(spawn_server: SpawnServer) -> None:
    server = spawn_server(module_argv())
    assert server.request("initialize", INITIALIZE_PARAMS)["result"]["serverInfo"]["version"] == (
        __version__
    )
    assert server.finish() == 0
