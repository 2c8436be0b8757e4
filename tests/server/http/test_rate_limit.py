"""60 requests a minute per key, per instance in memory or shared through a real Redis."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from tests.server.http.conftest import StartHttp
from tests.support.http import HttpServer
from tests.support.imports import PROFILE_IMPORTS, imported_modules
from tests.support.redis import running_redis

LIMIT = 60
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _limited(response: httpx.Response) -> bool:
    if response.status_code != 429:
        return False
    assert response.json() == {"error": "Rate limit exceeded"}
    assert 1 <= int(response.headers["retry-after"]) <= 60
    return True


def _spend(
    server: HttpServer,
    count: int,
    headers: dict[str, str] | None = None,
    token: str | None = None,
) -> None:
    for _ in range(count):
        response = server.rpc("ping", None, headers, token=token)
        assert response.status_code == 200, response.text


def test_the_61st_request_of_a_minute_is_429_with_retry_after(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree))
    _spend(server, LIMIT)
    assert _limited(server.rpc("ping"))
    assert _limited(server.client.get(server.url))


def test_each_forwarded_address_from_a_trusted_proxy_has_its_own_budget(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree))  # loopback proxies are trusted
    first = {"X-Forwarded-For": "203.0.113.5"}
    _spend(server, LIMIT, first)
    assert _limited(server.rpc("ping", None, first))
    assert server.rpc("ping", None, {"X-Forwarded-For": "203.0.113.6"}).status_code == 200


def test_addresses_a_client_wrote_before_the_one_its_proxy_added_are_not_its_key(
    start_http: StartHttp, docs_tree: Path
) -> None:
    # nginx's $proxy_add_x_forwarded_for, HAProxy's `option forwardfor` and AWS ALB keep
    # what the client sent and add the address they saw after it.
    server = start_http("--docs-dir", str(docs_tree))
    for n in range(LIMIT):
        made_up = {"X-Forwarded-For": f"198.51.100.{n}, 10.9.{n}.1, 203.0.113.7"}
        assert server.rpc("ping", None, made_up).status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "192.0.2.1, 203.0.113.7"}))
    assert server.rpc("ping", None, {"X-Forwarded-For": "203.0.113.8"}).status_code == 200


def test_the_key_is_the_rightmost_forwarded_address_that_is_not_a_trusted_proxy(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http(
        "--docs-dir",
        str(docs_tree),
        "--rate-limit",
        "3",
        "--trusted-proxy",
        "127.0.0.1",
        "--trusted-proxy",
        "10.0.0.0/8",
    )
    for n in range(3):  # two trusted proxies in a row, then the client they saw
        chain = {"X-Forwarded-For": f"192.0.2.{n}, 203.0.113.9, 10.1.1.1, 10.2.2.2"}
        assert server.rpc("ping", None, chain).status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "203.0.113.9, 10.3.3.3"}))
    assert server.rpc("ping", None, {"X-Forwarded-For": "10.1.1.1"}).status_code == 200
    # Every address a trusted proxy: the client is the first of them.
    for _ in range(2):
        assert (
            server.rpc("ping", None, {"X-Forwarded-For": "10.1.1.1, 10.4.4.4"}).status_code == 200
        )
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "10.1.1.1"}))


def test_an_ipv6_client_is_keyed_by_its_64_and_an_ipv4_mapped_one_by_its_ipv4_address(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--rate-limit", "3")
    for host in (":1", "ffff:ffff:ffff:ffff", ":abcd:0:1"):  # one /64: one host
        forwarded = {"X-Forwarded-For": f"2001:db8:1:2:{host}"}
        assert server.rpc("ping", None, forwarded).status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "2001:db8:1:2::9"}))
    assert server.rpc("ping", None, {"X-Forwarded-For": "2001:db8:1:3::1"}).status_code == 200
    for spelling in ("198.51.100.4", "::ffff:198.51.100.4", "::FFFF:c633:6404"):
        assert server.rpc("ping", None, {"X-Forwarded-For": spelling}).status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "198.51.100.4"}))


def test_forwarded_addresses_from_an_untrusted_peer_are_ignored(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--trusted-proxy", "10.0.0.0/8")
    for n in range(LIMIT):
        assert server.rpc("ping", None, {"X-Forwarded-For": f"198.51.100.{n}"}).status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "198.51.100.250"}))


def test_a_valid_token_is_its_own_key_and_a_wrong_one_counts_against_the_address(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), settings={"MCP_BEARER_TOKEN": "team-token"})
    _spend(server, LIMIT, token="team-token")
    assert _limited(server.rpc("ping", token="team-token"))
    for _ in range(LIMIT):
        assert server.rpc("ping", token="guess").status_code == 401
    assert _limited(server.rpc("ping", token="another-guess"))


def test_two_instances_sharing_redis_share_one_budget_per_key(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    with running_redis(tmp_path / "redis") as storage:
        options = ("--docs-dir", str(docs_tree), "--rate-limit-storage", storage)
        one, two = start_http(*options), start_http(*options)
        for n in range(LIMIT):
            assert (one if n % 2 else two).rpc("ping").status_code == 200
        assert _limited(one.rpc("ping"))
        assert _limited(two.rpc("ping"))
        alone = start_http("--docs-dir", str(docs_tree))  # in memory: its own count
        assert alone.rpc("ping").status_code == 200


def test_only_a_route_sharing_its_count_through_redis_loads_the_library_that_counts_there(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    # `limits` (with deprecated and wrapt) was a third of a route's start-up imports.
    profiled = {**os.environ, **PROFILE_IMPORTS}
    alone = start_http("--docs-dir", str(docs_tree), env=profiled)
    with running_redis(tmp_path / "redis") as storage:
        shared = start_http(
            "--docs-dir", str(docs_tree), "--rate-limit-storage", storage, env=profiled
        )
        for server in (alone, shared):
            _spend(server, 2)
            assert server.stop() == 0
    assert "limits" not in imported_modules(alone.output)
    assert "limits" in imported_modules(shared.output)
    assert "kinetis_mcp_docs.server.http.limits.shared_limit" in imported_modules(shared.output)


def test_x_forwarded_for_on_two_lines_is_one_list_in_order(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), "--rate-limit", "3")
    lines = [("X-Forwarded-For", "10.0.0.1, 10.0.0.2"), ("X-Forwarded-For", "203.0.113.5")]
    for _ in range(3):
        response = server.client.post(
            server.url, content=PING, headers=[("Content-Type", "application/json"), *lines]
        )
        assert response.status_code == 200
    assert _limited(server.rpc("ping", None, {"X-Forwarded-For": "203.0.113.5"}))
    assert server.rpc("ping", None, {"X-Forwarded-For": "10.0.0.2"}).status_code == 200


def test_options_with_a_made_up_token_counts_against_the_address(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http("--docs-dir", str(docs_tree), settings={"MCP_BEARER_TOKEN": "team-token"})
    for n in range(LIMIT):
        made_up = {"Authorization": f"Bearer made-up-{n}"}
        assert server.client.options(server.url, headers=made_up).status_code == 204
    assert _limited(server.client.options(server.url, headers={"Authorization": "Bearer x"}))
    assert _limited(server.client.options(server.url))
    # The valid token is its own key, for OPTIONS too.
    valid = {"Authorization": "Bearer team-token"}
    assert server.client.options(server.url, headers=valid).status_code == 204


def test_an_instance_counting_alone_answers_as_instances_sharing_redis_do(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    with running_redis(tmp_path / "redis") as storage:
        options = ("--docs-dir", str(docs_tree), "--rate-limit", "5")
        servers = {
            "memory": start_http(*options),
            "redis": start_http(*options, "--rate-limit-storage", storage),
        }
        answers = {name: [server.rpc("ping") for _ in range(7)] for name, server in servers.items()}
    for name, responses in answers.items():
        assert [response.status_code for response in responses] == [200] * 5 + [429] * 2, name
        # Both windows begin at the key's first request: room again a minute after it.
        for response in responses[5:]:
            assert 59 <= int(response.headers["retry-after"]) <= 60, name


UNREACHABLE = "kinetis-docs: rate limit: the limit storage is unreachable"


def test_a_limit_storage_gone_away_fails_open_with_one_line_and_no_trace(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    token = "outage-token"
    with running_redis(tmp_path / "redis") as storage:
        server = start_http(
            "--docs-dir",
            str(docs_tree),
            "--rate-limit",
            "2",
            "--rate-limit-storage",
            storage,
            settings={"MCP_BEARER_TOKEN": token},
        )
        _spend(server, 2, token=token)
        assert _limited(server.rpc("ping", token=token))  # the limit held while Redis ran
    for _ in range(5):  # Redis is gone: every request is served, without the limit
        _spend(server, 1, token=token)
    server.stop()
    assert server.output.count(UNREACHABLE) == 1
    assert "Traceback" not in server.output
    assert token not in server.output


def test_a_limit_storage_never_reached_fails_open_from_the_first_request(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    nowhere = f"redis+unix://{tmp_path / 'no-redis.sock'}"
    server = start_http(
        "--docs-dir", str(docs_tree), "--rate-limit", "1", "--rate-limit-storage", nowhere
    )
    _spend(server, 3)
    server.stop()
    assert server.output.count(UNREACHABLE) == 1
    assert "Traceback" not in server.output
