"""Reading pages through a real server subprocess from a real local HTTPS origin.

The server reaches the origin the way a user's server reaches GitHub behind a corporate
proxy: `HTTPS_PROXY` names the proxy and `SSL_CERT_FILE` the trusted CA.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS
from kinetis_mcp_docs.server.stdio.framing import FrameWriter
from tests.server.conftest import SpawnServer
from tests.support.bombs import GZIP_BOMBS, MIB, deflate_bomb, raw_deflate_bomb
from tests.support.origin import CLIENT_GONE, DocsOrigin, page_path
from tests.support.processes import peak_rss_kib
from tests.support.stdio import ServerProcess, assert_only_frames

INDEX = "kinetis://docs/index"
SETUP = "kinetis://docs/setup"


@pytest.fixture
def page_server(spawn_server: SpawnServer, origin_env: dict[str, str]) -> ServerProcess:
    return spawn_server(env=origin_env)


def _unreadable(server: ServerProcess, uri: str = INDEX) -> None:
    response = server.request("resources/read", {"uri": uri})
    assert response["error"] == {"code": INTERNAL_ERROR, "message": f'Could not read "{uri}".'}


def test_resources_read_returns_the_live_page(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    page = "# Index\r\nhé 😀\nno final newline"
    docs_origin.serve_page("index", page)
    result = page_server.request("resources/read", {"uri": INDEX})["result"]
    assert result == {"contents": [{"uri": INDEX, "mimeType": "text/markdown", "text": page}]}
    docs_origin.serve_page("index", "changed\n")
    assert page_server.request("resources/read", {"uri": INDEX})["result"]["contents"][0][
        "text"
    ] == ("changed\n")


def test_every_page_of_the_catalogue_is_served_from_docs(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve_docs()
    for entry in page_server.request("resources/list")["result"]["resources"]:
        contents = page_server.request("resources/read", {"uri": entry["uri"]})["result"]
        assert contents["contents"][0]["text"].startswith("# ")


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        ({"status": 404, "body": b"Not Found"}, "HTTP 404"),
        ({"status": 500, "body": b"oops"}, "HTTP 500"),
        ({"status": 302, "headers": {"Location": "https://example.com/x.md"}}, "redirect"),
        ({"body": b"caf\xe9\n"}, "UTF-8"),
        ({"generated_size": 4 * 1024 * 1024 + 1}, "4 MiB"),
        ({"body": b"# Index\n", "content_encoding": "br"}, "Content-Encoding 'br' was not asked"),
    ],
)
def test_a_page_that_cannot_be_read_is_an_internal_error_with_the_reason_on_stderr(
    docs_origin: DocsOrigin,
    page_server: ServerProcess,
    route: dict[str, Any],
    reason: str,
) -> None:
    docs_origin.serve(page_path("index"), **route)
    _unreadable(page_server)
    assert page_server.finish() == 0
    assert reason in page_server.stderr
    assert "https://raw.githubusercontent.com/kinetis-dev/kinetis/main/docs/index.md" in (
        page_server.stderr
    )


def test_a_redirect_target_is_never_requested(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    target = page_path("setup")
    docs_origin.serve(page_path("index"), status=301, headers={"Location": target})
    docs_origin.serve_page("setup", "elsewhere\n")
    _unreadable(page_server)
    assert docs_origin.requests_for(target) == []


def test_a_body_of_exactly_four_mebibytes_is_served(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    body = (b"x" * 1023 + b"\n") * 4096
    docs_origin.serve(page_path("index"), body=body)
    result = page_server.call_tool("kinetis_search_doc", {"uri": INDEX, "query": "xxx"})["result"]
    assert result["structuredContent"]["hasMore"] is True
    assert len(result["structuredContent"]["matches"]) == 50


def test_a_two_hundred_mebibyte_body_is_abandoned_without_being_held(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve(page_path("index"), generated_size=200 * 1024 * 1024)
    _unreadable(page_server)
    record = docs_origin.wait_for_finished(page_path("index"))
    assert record.body_bytes_sent < 64 * 1024 * 1024


BOMBS = [
    *GZIP_BOMBS,
    pytest.param("deflate", deflate_bomb, id="deflate-zlib"),
    pytest.param("deflate", raw_deflate_bomb, id="deflate-raw"),
]
BOMB_BUDGET_KIB = 16 * 1024


def _reads(server: ServerProcess, uri: str, count: int) -> list[dict[str, Any]]:
    """`count` reads of `uri` sent at once, and their answers (in any order)."""
    for request_id in range(count):
        server.send(
            {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": {"uri": uri}}
        )
    return [server.receive(timeout=60) for _ in range(count)]


@pytest.mark.parametrize(("content_encoding", "make_bomb"), BOMBS)
def test_a_compression_bomb_is_unreadable_and_costs_the_server_under_16_mib(
    docs_origin: DocsOrigin,
    page_server: ServerProcess,
    content_encoding: str,
    make_bomb: Callable[[int], bytes],
) -> None:
    bomb = make_bomb(256 * MIB)
    docs_origin.serve_page("index", "# Index\n")
    for _ in range(3):  # the HTTP client imported, a connection open, a read done
        page_server.request("resources/read", {"uri": INDEX})
    before = peak_rss_kib(page_server.process.pid)

    docs_origin.serve(page_path("index"), body=bomb, content_encoding=content_encoding)
    _unreadable(page_server)

    grown = peak_rss_kib(page_server.process.pid) - before
    assert grown <= BOMB_BUDGET_KIB, f"peak RSS grew {grown} KiB"
    assert page_server.finish() == 0
    assert "a compression bomb" in page_server.stderr


@pytest.mark.parametrize(("content_encoding", "make_bomb"), BOMBS)
def test_thirty_two_bombs_in_flight_cost_the_server_under_16_mib_together(
    docs_origin: DocsOrigin,
    page_server: ServerProcess,
    content_encoding: str,
    make_bomb: Callable[[int], bytes],
) -> None:
    bomb = make_bomb(256 * MIB)
    # First 32 ordinary reads at once, so threads and connections for 32 exist already.
    docs_origin.serve(page_path("index"), body=b"# Index\n", rendezvous=threading.Barrier(32))
    assert all("result" in answer for answer in _reads(page_server, INDEX, 32))
    before = peak_rss_kib(page_server.process.pid)

    # The origin holds every bomb until all 32 requests are in: they are decoded together.
    docs_origin.serve(
        page_path("index"),
        body=bomb,
        content_encoding=content_encoding,
        rendezvous=threading.Barrier(32),
    )
    answers = _reads(page_server, INDEX, 32)

    assert all(answer["error"]["code"] == INTERNAL_ERROR for answer in answers)
    grown = peak_rss_kib(page_server.process.pid) - before
    assert grown <= BOMB_BUDGET_KIB, f"peak RSS grew {grown} KiB"


def test_an_origin_offering_only_tls_1_1_is_refused(
    tls_1_1_docs_origin: DocsOrigin, spawn_server: SpawnServer
) -> None:
    tls_1_1_docs_origin.serve_page("index", "old\n")
    server = spawn_server(env=tls_1_1_docs_origin.environ())
    _unreadable(server)
    assert server.finish() == 0
    assert "TLS" in server.stderr


def test_an_untrusted_certificate_is_refused(
    docs_origin: DocsOrigin, spawn_server: SpawnServer, origin_env: dict[str, str]
) -> None:
    docs_origin.serve_page("index", "secret\n")
    env = {**origin_env, "SSL_CERT_FILE": os.devnull}
    server = spawn_server(env=env)
    _unreadable(server)


def test_a_stalled_body_is_an_internal_error_after_the_idle_timeout(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve(page_path("index"), body=b"x" * 1000, stall_after=10)
    started = time.monotonic()
    _unreadable(page_server)
    assert 9 < time.monotonic() - started < 25


@pytest.mark.slow
def test_a_read_past_the_deadline_on_a_pooled_connection_closes_it_and_leaves_nothing_running(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve_page("index", "# Index\n")
    page_server.request("resources/read", {"uri": INDEX})  # a connection, back in the pool
    # A head of about 40 bytes, one a second: never idle for 10 s, never finished in 30 s.
    docs_origin.serve(page_path("setup"), body=b"late\n", head_drip=1.0)

    response = page_server.request("resources/read", {"uri": SETUP}, timeout=45)

    assert response["error"] == {"code": INTERNAL_ERROR, "message": f'Could not read "{SETUP}".'}
    dripped = docs_origin.wait_for_finished(page_path("setup"), timeout=10)
    assert (dripped.connection, dripped.outcome) == (1, CLIENT_GONE)
    assert "total deadline of 30 s passed" in page_server.stderr
    # No abandoned worker is left to wait for: end of input exits well inside the 10 s
    # that a worker blocked on the idle timeout would hold it.
    assert page_server.finish(timeout=8) == 0


def test_a_window_names_no_page_without_fetching(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    result = page_server.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/zzz"})["result"]
    assert result["structuredContent"] == {"status": "resource_unknown"}
    response = page_server.call_tool("kinetis_read_doc", {"uri": INDEX, "lineCount": 0})
    assert response["error"]["code"] == INVALID_PARAMS
    response = page_server.request("resources/read", {"uri": "kinetis://docs/zzz"})
    assert "error" in response
    assert docs_origin.requests == []


def test_a_start_line_of_thousands_of_digits_is_past_the_last_line(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve_page("index", "# Index\n")
    page_server.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kinetis_read_doc",'
        b'"arguments":{"uri":"kinetis://docs/index","startLine":%s}}}\n' % (b"9" * 5000)
    )
    result = page_server.receive()["result"]
    assert (result["isError"], result["structuredContent"]) == (
        True,
        {"status": "line_out_of_range"},
    )


def test_successive_windows_through_the_server_rebuild_the_page_byte_for_byte(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    lines = [f"line {n} {'é' * (n % 7)}{'😀' * (n % 3)}" for n in range(3000)]
    page = "\r\n".join(lines[:1000]) + "\n\n" + "\n".join(lines[1000:]) + "\n" + "w" * 40_000
    docs_origin.serve_page("tools", page)
    parts: list[str] = []
    start = 1
    while True:
        document = page_server.call_tool(
            "kinetis_read_doc", {"uri": "kinetis://docs/tools", "startLine": start}
        )["result"]["structuredContent"]
        parts.append(document["content"])
        assert (
            len(document["content"].encode()) <= 32_768
            or document["startLine"] == (document["endLine"])
        )
        if not document["hasMore"]:
            break
        start = document["endLine"] + 1
    assert "".join(parts).encode() == page.encode()
    past = page_server.call_tool(
        "kinetis_read_doc", {"uri": "kinetis://docs/tools", "startLine": start + 1}
    )["result"]
    assert (past["isError"], past["structuredContent"]) == (True, {"status": "line_out_of_range"})
    # One connection carried every read: reuse, with the page fetched again each time.
    assert docs_origin.handshakes == 1
    assert len(docs_origin.requests_for(page_path("tools"))) == len(parts) + 1


def test_a_ping_is_answered_while_a_slow_read_is_in_flight(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve_page("setup", "fast\n")
    docs_origin.serve(page_path("index"), body=b"slow\n", delay=3.0)
    page_server.send(
        {"jsonrpc": "2.0", "id": "slow", "method": "resources/read", "params": {"uri": INDEX}}
    )
    docs_origin.wait_for_received(page_path("index"))
    page_server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    page_server.send(
        {
            "jsonrpc": "2.0",
            "id": "fast",
            "method": "resources/read",
            "params": {"uri": "kinetis://docs/setup"},
        }
    )
    answered = [page_server.receive()["id"] for _ in range(3)]
    assert answered == ["ping", "fast", "slow"]


def test_concurrent_reads_are_answered_together_each_frame_whole(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve(page_path("index"), body=("é" * 30_000 + "\n").encode() * 40, delay=1.0)
    for request_id in range(16):
        page_server.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "kinetis_read_doc", "arguments": {"uri": INDEX}},
            }
        )
    started = time.monotonic()
    answers = [page_server.receive(timeout=30) for _ in range(16)]
    elapsed = time.monotonic() - started
    assert sorted(answer["id"] for answer in answers) == list(range(16))
    assert all(answer["result"]["isError"] is False for answer in answers)
    # Sixteen reads of a second each, one after another, would take sixteen.
    assert elapsed < 8
    assert page_server.finish() == 0
    assert_only_frames(page_server.lines)


def test_end_of_input_lets_reads_in_flight_finish(
    docs_origin: DocsOrigin, page_server: ServerProcess
) -> None:
    docs_origin.serve(page_path("index"), body=b"late\n", delay=1.0)
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": INDEX}}
    page_server.send(read)
    docs_origin.wait_for_received(page_path("index"))
    assert page_server.finish() == 0
    (frame,) = page_server.remaining_frames()
    assert frame["result"]["contents"][0]["text"] == "late\n"


STRAY_WRITER = """
import os, subprocess, sys, warnings
from kinetis_mcp_docs.server.stdio.serve import reserve_stdout
frames = reserve_stdout()
print("a stray print")
warnings.warn("a warning")
subprocess.run([sys.executable, "-c", "print('a child writes to its stdout')"], check=True)
os.system("echo a shell child")
os.write(frames, b'{"jsonrpc":"2.0","id":1,"result":{}}\\n')
"""


def test_nothing_but_frames_reaches_stdout_whatever_else_writes_to_it() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", STRAY_WRITER], capture_output=True, timeout=30, check=True
    )
    assert completed.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    for text in (b"a stray print", b"a warning", b"a child writes", b"a shell child"):
        assert text in completed.stderr
    assert json.loads(completed.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_the_frame_writer_is_shared_safely_between_threads() -> None:
    # Many threads answering at once must never interleave bytes of two frames.
    read_end, write_end = os.pipe()
    writer = FrameWriter(write_end)
    payloads = [json.dumps({"n": n, "pad": "p" * 70_000}).encode() for n in range(32)]
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    writers = [threading.Thread(target=writer.write, args=(p,)) for p in payloads]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(timeout=30)
    os.close(write_end)
    reader.join(timeout=30)
    os.close(read_end)
    frames = bytes(received).split(b"\n")[:-1]
    assert sorted(json.loads(frame)["n"] for frame in frames) == list(range(32))
