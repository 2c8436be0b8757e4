"""docs/http.md's service section matches what a real route does: its systemd unit's command
runs, and the metrics, the readiness body and the log fields it names are the ones served."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.server.http.conftest import StartHttp
from tests.server.http.test_load_balancer import _free_port, _ready
from tests.support.http import TIMEOUT, HttpServer, clean_environ, kinetis_docs
from tests.support.processes import wait_for
from tests.support.redis import running_redis

DOCS = Path(__file__).resolve().parents[3] / "docs"
DOCUMENTED_REDIS = "redis://127.0.0.1:6379/0"


def _section(heading: str) -> str:
    text = (DOCS / "http.md").read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n") :]
    return section[: section.index("\n### ", 1)]


def _block(section: str, language: str) -> str:
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start : section.index("```", start)]


def test_the_systemd_units_command_serves_a_ready_route(tmp_path: Path) -> None:
    unit = _block(_section("### systemd"), "ini")
    (command,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    argv = shlex.split(command.removeprefix("ExecStart="))
    assert argv[0].endswith("/bin/kinetis-docs")
    assert argv.count("%i") == 1
    assert DOCUMENTED_REDIS in argv
    port = _free_port()
    with running_redis(tmp_path / "redis") as storage:
        argv = [
            kinetis_docs(),
            *[
                {"%i": str(port), DOCUMENTED_REDIS: storage}.get(argument, argument)
                for argument in argv[1:]
            ],
            "--docs-dir",
            str(DOCS),
        ]
        server = HttpServer(argv, clean_environ())
        try:
            wait_for(lambda: _ready(port), "the unit's route to be ready", TIMEOUT)
            body = httpx.get(f"http://127.0.0.1:{port}/readyz", trust_env=False).json()
            assert body["rate_limit"]["storage"] == "redis"
            assert server.rpc("ping").status_code == 200
        finally:
            server.stop()


def test_every_metric_the_page_names_is_served(start_http: StartHttp, docs_tree: Path) -> None:
    section = _section("### Metrics")
    named = set(re.findall(r"\bkinetis_docs_[a-z_]+", section))
    server = start_http("--docs-dir", str(docs_tree), "--metrics")
    assert server.rpc("ping").status_code == 200
    wait_for(lambda: _get_text(server, "/readyz").startswith('{"status":"ready"'), "ready", TIMEOUT)

    served = {
        sample.name
        for family in text_string_to_metric_families(_get_text(server, "/metrics"))
        for sample in family.samples
    }
    # A histogram's series are `_bucket`, `_count` and `_sum` of the name the page gives.
    missing = {name for name in named if name not in served and f"{name}_count" not in served}
    assert missing == set()
    assert len(named) >= 8


def _get_text(server: HttpServer, path: str) -> str:
    return server.client.get(f"http://127.0.0.1:{server.port}{path}").text


def test_the_readiness_and_log_examples_have_the_fields_a_real_route_sends(
    start_http: StartHttp, docs_tree: Path
) -> None:
    probes = _section("### Probes")
    shown_ready = json.loads(_block(probes, "json"))
    log = _section("### Access log")
    shown_line = json.loads(_block(log, "json"))
    table_fields = {
        field
        for row in re.findall(r"^\| (`[^|]+`) \|", log, flags=re.MULTILINE)
        for field in re.findall(r"`([a-z_]+)`", row)
    }
    server = start_http("--docs-dir", str(docs_tree), "--access-log", "json")
    wait_for(lambda: _get_text(server, "/readyz").startswith('{"status":"ready"'), "ready", TIMEOUT)
    ready = json.loads(_get_text(server, "/readyz"))
    response = server.call_tool("fetch_page", {"url": "/guides/deploy"})
    assert response["content"]
    server.wait_for_output('"tool":"fetch_page"')
    (line,) = [
        json.loads(text)
        for text in server.output.splitlines()
        if text.startswith('{"time":') and '"tool":"fetch_page"' in text
    ]

    assert ready.keys() == shown_ready.keys()
    assert line.keys() == shown_line.keys() == table_fields
