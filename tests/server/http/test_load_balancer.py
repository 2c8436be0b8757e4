"""Three replicas behind a real HAProxy, sharing one real Redis: deploys lose no request, and
one key's budget holds across the replicas.

HAProxy runs the configuration docs/http.md shows, with this test's ports and faster health
checks (100 ms instead of 1 s) so that a drain of 3 s is ample for it to take a replica
out; every wait is on an event (a probe answering, a process ending, HAProxy sending a
replica requests), bounded generously.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.server.http.test_service import PING
from tests.support.http import TIMEOUT, HttpServer, clean_environ, kinetis_docs
from tests.support.processes import wait_for
from tests.support.redis import running_redis

DOCS = Path(__file__).resolve().parents[3] / "docs"
DOCUMENTED_FRONTEND = "bind 127.0.0.1:8080"
DOCUMENTED_SERVERS = ("127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003")
DOCUMENTED_CHECKS = "inter 1s fall 2 rise 2"
TEST_CHECKS = "inter 100ms fall 2 rise 2"
DRAIN_SECONDS = "3"
LIMIT = 30
# Debian puts haproxy in /usr/sbin, which a non-root PATH may lack.
_SEARCHED = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def _haproxy() -> str:
    found = shutil.which("haproxy", path=_SEARCHED)
    if found is None:
        pytest.skip(
            "haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)"
        )
    return found


def documented_haproxy_config() -> str:
    """The HAProxy example of docs/http.md, as written."""
    text = (DOCS / "http.md").read_text(encoding="utf-8")
    section = text[text.index("### HAProxy") :]
    start = section.index("```haproxy\n") + len("```haproxy\n")
    return section[start : section.index("```", start)]


def _substituted(config: str, replacements: dict[str, str]) -> str:
    for documented, used in replacements.items():
        assert config.count(documented) == 1, f"{documented!r} is not in the example once"
        config = config.replace(documented, used)
    return config


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _route_requests(port: int) -> float:
    """How many requests to the route this replica has answered, by its own metrics."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False, timeout=TIMEOUT).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "kinetis_docs_requests_total"
    )


def _ready(port: int) -> bool:
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/readyz", trust_env=False, timeout=TIMEOUT)
    except httpx.TransportError:
        return False
    return response.status_code == 200


class Deployment:
    """Three replicas on fixed loopback ports, and HAProxy in front of them."""

    def __init__(self, tmp_path: Path, storage: str, rate_limit: int) -> None:
        self._tmp = tmp_path
        self._argv = [
            "--docs-dir",
            str(DOCS),
            "--rate-limit-storage",
            storage,
            "--rate-limit",
            str(rate_limit),
            "--drain-seconds",
            DRAIN_SECONDS,
            "--metrics",
            "--no-access-log",
        ]
        self.ports = [_free_port() for _ in DOCUMENTED_SERVERS]
        self.replicas: list[HttpServer] = []
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.frontend = _free_port()
        self.haproxy_log: Path | None = None

    def start_replica(self, port: int) -> HttpServer:
        argv = [kinetis_docs(), "serve", "--http", "--port", str(port), *self._argv]
        replica = HttpServer(argv, clean_environ())
        wait_for(lambda: _ready(port), f"the replica on {port} to be ready", TIMEOUT)
        return replica

    def start(self) -> None:
        self.replicas = [self.start_replica(port) for port in self.ports]
        config = _substituted(
            documented_haproxy_config(),
            {
                DOCUMENTED_FRONTEND: f"bind 127.0.0.1:{self.frontend}",
                DOCUMENTED_CHECKS: TEST_CHECKS,
                **{
                    documented: f"127.0.0.1:{port}"
                    for documented, port in zip(DOCUMENTED_SERVERS, self.ports, strict=True)
                },
            },
        )
        path = self._tmp / "haproxy.cfg"
        path.write_text(config, encoding="utf-8")
        haproxy = _haproxy()
        checked = subprocess.run(
            [haproxy, "-c", "-f", str(path)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        self.haproxy_log = self._tmp / "haproxy.log"
        with self.haproxy_log.open("wb") as log:
            # In the foreground HAProxy writes each server's change of state to stderr.
            self.haproxy = subprocess.Popen(
                [haproxy, "-db", "-f", str(path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for(self._frontend_answers, "HAProxy to answer", TIMEOUT)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.frontend}/api/mcp"

    def _frontend_answers(self) -> bool:
        assert self.haproxy is not None
        assert self.haproxy.poll() is None, "HAProxy exited"
        try:
            response = httpx.get(
                f"http://127.0.0.1:{self.frontend}/healthz", trust_env=False, timeout=TIMEOUT
            )
        except httpx.TransportError:
            return False
        return response.status_code == 200

    def restart(self, index: int) -> None:
        """SIGTERM, exit 0, start on the same port, ready, and sent requests by HAProxy."""
        replica = self.replicas[index]
        replica.process.send_signal(signal.SIGTERM)
        try:
            code = replica.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"no exit after SIGTERM: {replica.output}") from None
        assert code == 0, replica.output
        assert "SIGTERM: not ready" in replica.output
        # Taken out by its readiness saying 503 while it still answered, before it stopped:
        # not by a refused connection once it had.
        assert self.haproxy_log is not None
        down = [
            line
            for line in self.haproxy_log.read_text(errors="replace").splitlines()
            if f"Server kinetis/r{index + 1} is DOWN" in line
        ]
        assert down, self.haproxy_log.read_text(errors="replace")
        assert "code: 503" in down[-1], down[-1]
        replica.stop()
        port = self.ports[index]
        self.replicas[index] = self.start_replica(port)
        wait_for(
            lambda: _route_requests(port) > 0, f"HAProxy to send {port} requests again", TIMEOUT
        )

    def stop(self) -> None:
        if self.haproxy is not None:
            self.haproxy.terminate()
            try:
                self.haproxy.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.haproxy.kill()
                self.haproxy.wait(timeout=TIMEOUT)
        for replica in self.replicas:
            replica.stop()


@contextlib.contextmanager
def deployment(tmp_path: Path, rate_limit: int) -> Iterator[Deployment]:
    _haproxy()  # skip before starting anything
    with running_redis(tmp_path / "redis") as storage:
        deployed = Deployment(tmp_path, storage, rate_limit)
        try:
            deployed.start()
            yield deployed
        finally:
            deployed.stop()


class SteadyLoad:
    """Clients sending `ping` through HAProxy until stopped, each request from an address
    of its own (HAProxy appends the address it saw, loopback, which the replicas trust), so
    that the load is never rate-limited and nothing but a failure refuses a request."""

    def __init__(self, url: str, clients: int = 3) -> None:
        self._url = url
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.answered = 0
        self.failures: list[str] = []
        self._threads = [
            threading.Thread(target=self._run, args=(number,), daemon=True)
            for number in range(clients)
        ]

    def __enter__(self) -> SteadyLoad:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(TIMEOUT)

    def _run(self, number: int) -> None:
        with httpx.Client(trust_env=False, timeout=TIMEOUT) as client:
            sent = 0
            while not self._stop.is_set():
                sent += 1
                address = f"10.{number}.{sent // 256 % 256}.{sent % 256}"
                try:
                    response = client.post(
                        self._url, json=PING, headers={"x-forwarded-for": address}
                    )
                    failure = None if response.status_code == 200 else response.text
                    failure = failure and f"{response.status_code}: {failure}"
                except httpx.HTTPError as error:
                    failure = f"{type(error).__name__}: {error}"
                with self._lock:
                    if failure is None:
                        self.answered += 1
                    else:
                        self.failures.append(failure)

    def wait_answered(self, count: int) -> None:
        wait_for(lambda: self.answered >= count, f"{count} requests answered", TIMEOUT)


def test_restarting_each_replica_in_turn_under_load_fails_no_request(tmp_path: Path) -> None:
    with deployment(tmp_path, rate_limit=1_000_000) as deployed, SteadyLoad(deployed.url) as load:
        load.wait_answered(50)
        for index in range(len(deployed.replicas)):
            before = load.answered
            deployed.restart(index)
            load.wait_answered(before + 50)  # still answering after the restart

    assert load.failures == []
    assert load.answered >= 200


def test_one_keys_requests_over_three_replicas_get_exactly_the_limit_then_429(
    tmp_path: Path,
) -> None:
    with deployment(tmp_path, rate_limit=LIMIT) as deployed:
        with httpx.Client(trust_env=False, timeout=TIMEOUT) as client:
            statuses = [
                client.post(
                    deployed.url, json=PING, headers={"x-forwarded-for": "203.0.113.7"}
                ).status_code
                for _ in range(LIMIT + 6)
            ]
        per_replica = [_route_requests(port) for port in deployed.ports]

    assert statuses == [200] * LIMIT + [429] * 6
    assert all(count > 0 for count in per_replica), per_replica  # spread over all three
    assert sum(per_replica) == LIMIT + 6
