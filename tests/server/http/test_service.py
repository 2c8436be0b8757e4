"""The route as a service, end to end: probes, drain on SIGTERM, metrics, the JSON access log."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.server.http.conftest import TREE, UNLIMITED, StartHttp
from tests.support.http import TIMEOUT, HttpServer, write_tree
from tests.support.processes import children_of, running_since, wait_for

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
JSON = {"content-type": "application/json"}


def _get(server: HttpServer, path: str, **headers: str) -> httpx.Response:
    return server.client.get(f"http://127.0.0.1:{server.port}{path}", headers=headers)


def _wait_exit(server: HttpServer) -> int:
    """The exit status, once the process has ended (bounded)."""
    try:
        return server.process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the server did not exit in {TIMEOUT} s: {server.output}") from None


def _metrics(server: HttpServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of `/metrics`, read with prometheus_client's own parser."""
    response = _get(server, "/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _requests(samples: dict[Any, float], method: str, status: str, tool: str = "") -> float:
    labels = (("method", method), ("status", status), ("tool", tool))
    return samples.get(("kinetis_docs_requests_total", labels), 0.0)


# 1. /healthz


def test_healthz_answers_ok_with_no_token_and_no_budget_left(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http(
        "--docs-dir", str(docs_tree), "--rate-limit", "1", settings={"MCP_BEARER_TOKEN": "t0k"}
    )

    for _ in range(5):
        response = _get(server, "/healthz")
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}
    assert server.rpc("ping", token="t0k").status_code == 200  # the probes used no budget
    assert server.rpc("ping", token="t0k").status_code == 429


def test_a_dark_private_route_answers_healthz_and_readyz_but_404s_the_route(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--private")

    assert server.rpc("ping").status_code == 404
    assert _get(server, "/healthz").json() == {"status": "ok"}
    wait_for(lambda: _get(server, "/readyz").status_code == 200, "readiness", TIMEOUT)


# 2. /readyz


def test_readyz_is_ready_with_the_pages_indexed_at_start_before_any_search(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree))

    wait_for(lambda: _get(server, "/readyz").status_code == 200, "readiness", TIMEOUT)
    body = _get(server, "/readyz").json()
    assert body["status"] == "ready"
    assert body["pages"] == len(TREE)  # built at start: no search was made
    assert body["rate_limit"] == {"storage": "memory"}


def test_readyz_is_503_with_the_reason_once_the_pages_cannot_be_read(
    start_http: StartHttp, tmp_path: Path
) -> None:
    tree = write_tree(tmp_path / "tree", TREE)
    server = start_http("--docs-dir", str(tree))
    wait_for(lambda: _get(server, "/readyz").status_code == 200, "readiness", TIMEOUT)

    shutil.rmtree(tree)

    response = _get(server, "/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unready"
    assert "is not a directory" in body["reason"]
    assert _get(server, "/healthz").status_code == 200  # alive, though it cannot serve


def test_an_unreachable_redis_leaves_readyz_ready_and_says_so(
    start_http: StartHttp, docs_tree: Path, refusing_port: int
) -> None:
    storage = f"redis://127.0.0.1:{refusing_port}"
    server = start_http("--docs-dir", str(docs_tree), "--rate-limit-storage", storage, "--metrics")
    assert server.rpc("ping").status_code == 200  # the limit fails open

    def reported() -> bool:
        response = _get(server, "/readyz")
        assert response.status_code in (200, 503), response.text
        limit = response.json()["rate_limit"]
        return response.status_code == 200 and limit.get("reachable") is False

    wait_for(reported, "readiness to report the storage unreachable", TIMEOUT)
    body = _get(server, "/readyz").json()
    assert body["status"] == "ready"
    assert body["rate_limit"]["storage"] == "redis"
    assert body["rate_limit"]["reason"]
    assert _metrics(server)[("kinetis_docs_rate_limit_storage_errors_total", ())] >= 1


# 3. Drain


def test_sigterm_answers_on_while_readyz_says_draining_then_exits_0(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--drain-seconds", "2", *UNLIMITED)
    wait_for(lambda: _get(server, "/readyz").status_code == 200, "readiness", TIMEOUT)

    server.process.send_signal(signal.SIGTERM)
    server.wait_for_output("kinetis-docs: SIGTERM: not ready")

    response = _get(server, "/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "draining"
    assert "SIGTERM" in response.json()["reason"]
    answered = server.rpc("ping")  # a new connection, still accepted
    assert answered.status_code == 200
    assert answered.headers["connection"] == "close"  # none left idle for a balancer to reuse
    assert _wait_exit(server) == 0


def _raw_connection(server: HttpServer) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    connection.settimeout(TIMEOUT)
    return connection


def test_a_request_in_flight_when_the_drain_ends_is_finished_before_the_exit(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--drain-seconds", "0.5", *UNLIMITED)
    body = json.dumps(PING).encode()
    connection = _raw_connection(server)
    head = (
        f"POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    connection.sendall(head + body[:5])  # in flight: its body not whole yet

    server.process.send_signal(signal.SIGTERM)
    server.wait_for_output("Shutting down")  # the drain is over: it accepts no more

    connection.sendall(body[5:])
    answer = connection.recv(65536)
    connection.close()
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b'"result":{}}')
    assert _wait_exit(server) == 0


def test_sigint_stops_at_once_without_draining(start_http: StartHttp, docs_tree: Path) -> None:
    # A drain of an hour: an exit within the test's bound shows that none happened.
    server = start_http("--docs-dir", str(docs_tree), "--drain-seconds", "3600")

    server.process.send_signal(signal.SIGINT)

    assert _wait_exit(server) == 0
    assert "SIGTERM: not ready" not in server.output


def test_with_workers_every_worker_drains_and_the_server_exits_0(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http(
        "--docs-dir", str(docs_tree), "--workers", "2", "--drain-seconds", "2", *UNLIMITED
    )

    server.process.send_signal(signal.SIGTERM)

    wait_for(
        lambda: server.output.count("kinetis-docs: SIGTERM: not ready") == 2,
        "both workers to start draining",
        TIMEOUT,
    )
    response = _get(server, "/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "draining"
    assert server.rpc("ping").status_code == 200
    assert _wait_exit(server) == 0
    assert server.output.count("Finished server process") == 2


@pytest.mark.interpreter
def test_workers_stop_and_free_the_port_when_their_supervisor_is_killed(
    start_http: StartHttp, docs_tree: Path
) -> None:
    # SIGKILL (the OOM killer, an operator) gives the supervisor no chance to stop its
    # workers: they went on serving the port, unsupervised, and a restarted service could
    # not bind it.
    server = start_http("--docs-dir", str(docs_tree), "--workers", "2", *UNLIMITED)
    supervisor = server.process.pid
    # The workers, and multiprocessing's resource tracker, which stays while they run.
    children = {pid: running_since(pid) for pid in children_of(supervisor)}
    assert len(children) >= 2
    assert server.rpc("ping").status_code == 200

    server.process.kill()

    assert server.process.wait(timeout=TIMEOUT) == -signal.SIGKILL
    try:
        wait_for(
            lambda: all(running_since(pid) != began for pid, began in children.items()),
            "every child of the killed supervisor to exit",
            TIMEOUT,
        )
    finally:  # none is left behind to hold the port, or the output pipe, past the test
        for pid, began in children.items():
            if running_since(pid) == began:
                os.kill(pid, signal.SIGKILL)
    with socket.socket() as rebinding:  # as a restarted service binds it: the port is free
        rebinding.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        rebinding.bind(("127.0.0.1", server.port))
    assert server.output.count(f"the supervisor (process {supervisor}) is gone") == 2


# 4. Metrics


def test_metrics_are_404_unless_asked_for(start_http: StartHttp, docs_tree: Path) -> None:
    server = start_http("--docs-dir", str(docs_tree))

    assert _get(server, "/metrics").status_code == 404


def test_metrics_answer_at_exactly_their_path(start_http: StartHttp, docs_tree: Path) -> None:
    # A proxy that forwards every path but `location = /metrics { deny all; }` was passed by
    # `/metrics/`, which the route read as `/metrics` as it reads `/api/mcp/` as the route;
    # a proxy matching the raw path, by `/%6detrics`, which the server decodes.
    server = start_http("--docs-dir", str(docs_tree), "--metrics")

    assert _get(server, "/metrics").status_code == 200
    for other in ("/metrics/", "/metrics//", "/metrics/x", "/%6detrics", "/metric%73"):
        assert _get(server, other).status_code == 404, other


def test_metrics_count_every_workers_requests_by_method_tool_and_status(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--workers", "2", "--metrics", *UNLIMITED)
    wait_for(lambda: _get(server, "/readyz").status_code == 200, "readiness", TIMEOUT)

    # New connections each time, so that both workers answer some.
    for _ in range(6):
        assert httpx.post(server.url, json=PING, trust_env=False).status_code == 200
    fetched = {"name": "fetch_page", "arguments": {"url": "/guides/deploy"}}
    for _ in range(3):
        response = httpx.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": fetched},
            trust_env=False,
        )
        assert response.status_code == 200
    made_up = {"jsonrpc": "2.0", "id": 3, "method": "no/such-method"}
    assert httpx.post(server.url, json=made_up, trust_env=False).status_code == 404
    for _ in range(2):
        assert httpx.post(server.url, json=PING, trust_env=False).status_code == 200

    # Each worker folds its figures in within a second; the one answering, at once. Every
    # request is waited for, whichever worker answered it.
    def folded() -> bool:
        samples = _metrics(server)
        return (
            _requests(samples, "tools/call", "200", "fetch_page") == 3
            and _requests(samples, "ping", "200") == 8
            and _requests(samples, "other", "404") == 1
        )

    wait_for(folded, "every worker's requests in the figures", TIMEOUT)
    samples = _metrics(server)
    assert _requests(samples, "ping", "200") == 8
    assert _requests(samples, "tools/call", "200", "fetch_page") == 3
    assert _requests(samples, "other", "404") == 1  # a client's made-up name is no label
    assert samples[("kinetis_docs_rate_limited_total", ())] == 0
    duration = ("kinetis_docs_request_duration_seconds_count", (("method", "ping"),))
    assert samples[duration] == 8
    assert samples[("kinetis_docs_index_pages", ())] == len(TREE)
    assert 0 <= samples[("kinetis_docs_index_age_seconds", ())] < 600
    assert samples[("kinetis_docs_page_fetches_total", (("outcome", "ok"),))] >= 3
    assert samples[("kinetis_docs_ready", ())] == 1
    assert samples[("kinetis_docs_rate_limit_storage_errors_total", ())] == 0


def _workers(supervisor: int) -> list[int]:
    """The worker processes of `serve --http --workers N` (not multiprocessing's tracker)."""
    return [
        pid
        for pid in children_of(supervisor)
        if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]


def test_a_worker_killed_leaves_the_figures_to_the_live_ones(
    start_http: StartHttp, docs_tree: Path
) -> None:
    # A worker killed left its gauges behind, and the figures summed over "live" workers
    # went on counting it: one killed while not ready kept `kinetis_docs_ready` at 0 for
    # good, though every worker serving was ready.
    server = start_http(
        "--docs-dir", str(docs_tree), "--workers", "2", "--metrics", "--drain-seconds", "600"
    )
    first, _ = _workers(server.process.pid)
    wait_for(lambda: _metrics(server)[("kinetis_docs_ready", ())] == 1, "ready", TIMEOUT)
    os.kill(first, signal.SIGTERM)  # draining, so not ready: what its gauge says
    wait_for(lambda: _metrics(server)[("kinetis_docs_ready", ())] == 0, "draining", TIMEOUT)

    os.kill(first, signal.SIGKILL)

    wait_for(
        lambda: server.output.count("Application startup complete.") == 3,
        "another worker in its place",
        TIMEOUT,
    )
    wait_for(
        lambda: _metrics(server)[("kinetis_docs_ready", ())] == 1,
        "the figures to be the live workers' alone",
        TIMEOUT,
    )
    samples = _metrics(server)
    assert samples[("kinetis_docs_index_pages", ())] == len(TREE)
    assert f"worker {first} ended (status -9); starting another" in server.output


# 5. The JSON access log


def _log_lines(server: HttpServer) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.output.splitlines() if line.startswith('{"time":')]


def test_the_json_access_log_has_a_line_per_request_with_its_id_and_no_token(
    start_http: StartHttp, docs_tree: Path
) -> None:
    token = "s3cret-token-value"
    server = start_http(
        "--docs-dir",
        str(docs_tree),
        "--access-log",
        "json",
        *UNLIMITED,
        settings={"MCP_BEARER_TOKEN": token},
    )

    given = server.rpc("ping", headers={"x-request-id": "req-given-7"}, token=token)
    made = server.call_tool("fetch_page", {"url": "/guides/deploy"}, token=token)
    refused = server.rpc("ping", token="wrong")
    assert given.headers["x-request-id"] == "req-given-7"
    assert made["content"]
    assert refused.status_code == 401
    made_up_id = refused.headers["x-request-id"]
    assert made_up_id

    server.wait_for_output(f'"request_id":"{made_up_id}"')
    lines = _log_lines(server)
    by_id = {line["request_id"]: line for line in lines}
    ping = by_id["req-given-7"]
    assert ping["http_status"] == 200
    assert ping["rpc_method"] == "ping"
    assert ping["tool"] is None
    assert isinstance(ping["duration_ms"], float)
    (call,) = [line for line in lines if line["rpc_method"] == "tools/call"]
    assert call["tool"] == "fetch_page"
    assert by_id[made_up_id]["http_status"] == 401
    assert len(lines) == 3
    assert token not in server.output
    assert "wrong" not in server.output
    # The key only as a hash: one client's requests are followed without its address.
    assert len(ping["key_hash"]) == 16
    assert ping["key_hash"] == call["key_hash"]  # one token, one key
    assert by_id[made_up_id]["key_hash"] != ping["key_hash"]  # a wrong one: the address's
    assert "127.0.0.1" not in json.dumps(lines)


def _pings(server: HttpServer, client: int, count: int) -> None:
    with httpx.Client(trust_env=False, timeout=TIMEOUT) as http:
        for number in range(count):
            request_id = f"{'r' * 160}-{client}-{number}"
            response = http.post(server.url, json=PING, headers={"x-request-id": request_id})
            assert response.status_code == 200


def test_every_access_log_line_of_workers_sharing_a_pipe_is_whole(
    start_http: StartHttp, docs_tree: Path
) -> None:
    # Both workers write to the one pipe the server's output goes to: lines written in
    # batches of up to 256 at once came out torn, a few in 10,000.
    server = start_http(
        "--docs-dir", str(docs_tree), "--workers", "2", "--access-log", "json", *UNLIMITED
    )
    clients, each = 4, 1000
    senders = [
        threading.Thread(target=_pings, args=(server, client, each)) for client in range(clients)
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(TIMEOUT * 4)
    server.stop()

    logged = [line for line in server.output.splitlines() if '"request_id"' in line]
    ids = {json.loads(line)["request_id"] for line in logged}  # each line whole JSON
    assert ids == {f"{'r' * 160}-{c}-{n}" for c in range(clients) for n in range(each)}
    assert len(logged) == clients * each


def test_a_lone_surrogate_a_client_named_is_logged_as_a_replacement_character(
    start_http: StartHttp, docs_tree: Path
) -> None:
    # `"\udfff"` is valid JSON; written back as that escape, it made a line that strict JSON
    # readers (which hold a string to valid Unicode) refuse.
    server = start_http("--docs-dir", str(docs_tree), "--access-log", "json", *UNLIMITED)
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\\udfff"}}'
    assert server.post(body).status_code == 200
    server.wait_for_output('"rpc_method":"tools/call"')
    (line,) = _log_lines(server)
    assert line["tool"] == "t\ufffd"
    assert "\\ud" not in server.output


def test_an_unusable_request_id_is_replaced_by_one_made_up(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--access-log", "json")

    response = server.rpc("ping", headers={"x-request-id": "has\tspace"})

    assert response.headers["x-request-id"] not in ("", "has\tspace")
    server.wait_for_output(f'"request_id":"{response.headers["x-request-id"]}"')


# 6. 429


def test_a_429_carries_retry_after_and_the_ratelimit_fields_and_is_counted(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--rate-limit", "2", "--metrics")

    assert [server.rpc("ping").status_code for _ in range(2)] == [200, 200]
    limited = server.rpc("ping")

    assert limited.status_code == 429
    headers = limited.headers
    assert 1 <= int(headers["retry-after"]) <= 60
    assert headers["ratelimit-limit"] == "2"
    assert headers["ratelimit-remaining"] == "0"
    assert headers["ratelimit-reset"] == headers["retry-after"]
    samples = _metrics(server)
    assert samples[("kinetis_docs_rate_limited_total", ())] == 1
    assert _requests(samples, "", "429") == 1  # refused before its body was read
    assert _requests(samples, "ping", "200") == 2
