"""The parts behind the probes, the metrics and the access log, in process."""

from __future__ import annotations

import asyncio
import io
import json
import select
import socket
import threading
import time
from typing import TYPE_CHECKING, cast

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kinetis_mcp_docs.server.http.lifecycle import Lifecycle
from kinetis_mcp_docs.server.http.limits.ratelimit import RateLimit
from kinetis_mcp_docs.server.http.observe.access_log import FLUSH_LINES, AccessLog, Note
from kinetis_mcp_docs.server.http.observe.metrics import BUCKETS, RouteMetrics
from kinetis_mcp_docs.server.site.pages import IndexState
from tests.support.processes import wait_for

if TYPE_CHECKING:
    from kinetis_mcp_docs.server.site.pages import SitePages

WAIT = 30.0


class _SlowPages:
    """Pages whose first index build waits for `release` (and fails `failures` times first)."""

    def __init__(self, failures: int = 0) -> None:
        self.release = threading.Event()
        self.failures = failures
        self.built = False

    def prepare(self) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("the origin is down")
        self.release.wait(WAIT)
        self.built = True

    def keep_current(self) -> None:
        pass

    def index_state(self) -> IndexState:
        return IndexState(self.built, 3 if self.built else 0, time.time(), None)


def _lifecycle(pages: _SlowPages, metrics: RouteMetrics | None = None) -> Lifecycle:
    return Lifecycle(
        cast("SitePages", pages), RateLimit(60, "memory://"), metrics, upkeep_seconds=0.01
    )


def test_readiness_says_starting_until_the_index_is_built_then_ready() -> None:
    pages = _SlowPages()
    lifecycle = _lifecycle(pages)
    lifecycle.start()
    try:
        starting = lifecycle.readiness()
        assert starting.status == "starting"
        assert starting.details["reason"] == "building the search index"

        pages.release.set()
        wait_for(lambda: lifecycle.readiness().ready, "readiness", WAIT)
        assert lifecycle.readiness().details["pages"] == 3
    finally:
        lifecycle.stop()


def test_a_first_build_that_fails_is_retried_and_its_reason_shown_meanwhile() -> None:
    pages = _SlowPages(failures=1)
    lifecycle = _lifecycle(pages)
    lifecycle.start()
    try:
        wait_for(
            lambda: "could not be built" in str(lifecycle.readiness().details.get("reason")),
            "the failure to be reported",
            WAIT,
        )
        assert "the origin is down" in str(lifecycle.readiness().details["reason"])
        pages.release.set()
        wait_for(lambda: lifecycle.readiness().ready, "readiness after the retry", WAIT)
    finally:
        lifecycle.stop()


def test_draining_is_not_ready_from_the_moment_it_begins() -> None:
    pages = _SlowPages()
    pages.release.set()
    lifecycle = _lifecycle(pages)
    lifecycle.start()
    try:
        wait_for(lambda: lifecycle.readiness().ready, "readiness", WAIT)
        lifecycle.begin_drain(5)
        readiness = lifecycle.readiness()
        assert readiness.status == "draining"
        assert lifecycle.draining
    finally:
        lifecycle.stop()


def _samples(metrics: RouteMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, _type = metrics.exposition()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


async def _observed(metrics: RouteMetrics, calls: list[tuple[str, str | None, float]]) -> None:
    for method, tool, seconds in calls:
        note = Note()
        note.method, note.tool = method, tool
        metrics.observe(note, 200, seconds)


def test_metric_labels_take_only_the_routes_own_names_whatever_a_client_sends() -> None:
    metrics = RouteMetrics()
    calls = [("ping", None, 0.001), ("x" * 500, None, 0.001), ("tools/call", "made-up", 0.001)]
    asyncio.run(_observed(metrics, calls))
    metrics.fold()

    requests = {
        labels: value
        for (name, labels), value in _samples(metrics).items()
        if name == "kinetis_docs_requests_total"
    }
    assert requests == {
        (("method", "ping"), ("status", "200"), ("tool", "")): 1,
        (("method", "other"), ("status", "200"), ("tool", "")): 1,
        (("method", "tools/call"), ("status", "200"), ("tool", "other")): 1,
    }


def test_folded_durations_fill_the_buckets_prometheus_clients_own_observe_would() -> None:
    durations = [0.0, 0.0005, 0.0007, 0.001, 0.3, 2.5, 9.0, 10.0, 11.0, 600.0]
    metrics = RouteMetrics()
    asyncio.run(_observed(metrics, [("ping", None, seconds) for seconds in durations]))
    metrics.fold()
    reference = Histogram(
        "kinetis_docs_request_duration_seconds",
        "reference",
        ("method",),
        buckets=BUCKETS,
        registry=CollectorRegistry(),
    )
    for seconds in durations:
        reference.labels("ping").observe(seconds)
    registry = CollectorRegistry()
    registry.register(reference)
    expected = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for sample in family.samples
        if not sample.name.endswith("_created")
    }

    found = _samples(metrics)
    assert {key: found[key] for key in expected} == pytest.approx(expected)


def test_the_index_gauges_follow_the_lifecycle() -> None:
    metrics = RouteMetrics()
    pages = _SlowPages()
    lifecycle = _lifecycle(pages, metrics)
    assert _samples(metrics)[("kinetis_docs_ready", ())] == 0
    pages.release.set()
    lifecycle.start()
    try:
        wait_for(lambda: _samples(metrics)[("kinetis_docs_ready", ())] == 1, "ready", WAIT)
        samples = _samples(metrics)
        assert samples[("kinetis_docs_index_pages", ())] == 3
        assert 0 <= samples[("kinetis_docs_index_age_seconds", ())] < 60
    finally:
        lifecycle.stop()


def test_the_access_log_keeps_a_usable_request_id_and_makes_one_up_otherwise() -> None:
    log = AccessLog(b"salt")
    assert log.request_id([(b"x-request-id", b"abc-123")]) == b"abc-123"
    made = {
        log.request_id([(b"x-request-id", value)]) for value in (b"", b"a b", b"x" * 201, b"\xff")
    }
    made.add(log.request_id([]))
    assert len(made) == 5
    assert all(value and b" " not in value for value in made)


async def _one_line(salt: bytes) -> dict[str, object]:
    stream = io.StringIO()
    log = AccessLog(salt, stream)
    note = Note()
    note.key = "203.0.113.9"
    log.write({"method": "POST", "path": "/api/mcp"}, b"id-1", note, 200, 0.002)
    log.flush()
    line = json.loads(stream.getvalue())
    assert isinstance(line, dict)
    return line


def test_the_access_log_hashes_the_key_under_its_secret() -> None:
    lines = [asyncio.run(_one_line(salt)) for salt in (b"one", b"two")]
    assert "203.0.113.9" not in json.dumps(lines)
    assert lines[0]["key_hash"] != lines[1]["key_hash"]  # no table of addresses maps it back
    assert lines[0]["duration_ms"] == 2.0


async def _line_of(note: Note, path: str) -> dict[str, object]:
    stream = io.StringIO()
    log = AccessLog(b"salt", stream)
    log.write({"method": "POST", "path": path}, b"id-2", note, 404, 0.0123456)
    log.flush()
    line = json.loads(stream.getvalue())
    assert isinstance(line, dict)
    return line


def test_a_log_line_is_json_whatever_the_client_named_and_cut_to_its_bounds() -> None:
    note = Note()
    note.method = 'a"b\\c\n\u00e9\u2028' + "m" * 200
    note.tool = "\x00tool"
    path = '/api/"mcp"\\' + "p" * 300

    line = asyncio.run(_line_of(note, path))

    assert line["rpc_method"] == note.method[:100]
    assert line["tool"] == "\x00tool"
    assert line["path"] == path[:200]
    assert line["key_hash"] is None
    assert line["http_status"] == 404
    assert line["duration_ms"] == 12.346
    assert line["request_id"] == "id-2"
    assert str(line["time"]).endswith("Z")


async def _written_to(stream: socket.socket, rows: int, note: Note) -> None:
    with stream.makefile("w") as file:
        log = AccessLog(b"salt", file)
        for number in range(rows):
            request_id = b"r" * 160 + b"%d" % number
            log.write({"method": "POST", "path": "/api/mcp"}, request_id, note, 200, 0)
        log.flush()


def _messages(theirs: socket.socket, received: list[bytes]) -> None:
    while message := theirs.recv(1 << 20):
        received.append(message)


def test_access_log_lines_go_out_whole_in_writes_a_pipe_keeps_whole() -> None:
    # Every worker writes to the same stderr pipe, which keeps a write whole only up to
    # PIPE_BUF bytes: a batch of 256 lines in one write came out torn by another worker's.
    # A packet socket keeps each write as one message, so the writes themselves are seen.
    note = Note()
    note.method = "\U0001f600" * 100  # each character twelve bytes once escaped
    note.tool = "\U0001f600" * 100
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    writes: list[bytes] = []
    reader = threading.Thread(target=_messages, args=(theirs, writes))
    reader.start()
    with theirs:
        with ours:
            asyncio.run(_written_to(ours, FLUSH_LINES, note))
        reader.join(WAIT)
    assert len(writes) > 1
    for written in writes:
        assert len(written) <= select.PIPE_BUF
        assert written.endswith(b"\n")
    lines = b"".join(writes).decode("ascii").splitlines()
    assert [json.loads(line)["request_id"][160:] for line in lines] == [
        str(number) for number in range(FLUSH_LINES)
    ]
