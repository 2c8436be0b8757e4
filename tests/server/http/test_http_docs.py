"""docs/http.md's curl examples run as written against a real route, and answer as shown."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.server.http.conftest import UNLIMITED, StartHttp

DOCS = Path(__file__).resolve().parents[3] / "docs"
DOCUMENTED_URL = "http://127.0.0.1:8000/api/mcp"
ELIDED = "…"


def _examples() -> list[tuple[str, Any]]:
    text = (DOCS / "http.md").read_text(encoding="utf-8")
    section = text[text.index("## Trying it with curl") :]
    section = section[: section.index("\n## ", 1)]
    pairs = re.findall(r"```sh\n(.*?)```\s*```json\n(.*?)```", section, flags=re.DOTALL)
    return [(command, json.loads(answer)) for command, answer in pairs]


def _matches(found: Any, shown: Any) -> bool:
    """Equal, where `"…"` in what the page shows stands for any value."""
    if shown == ELIDED:
        return True
    if isinstance(shown, dict):
        return (
            isinstance(found, dict)
            and found.keys() == shown.keys()
            and all(_matches(found[key], shown[key]) for key in shown)
        )
    if isinstance(shown, list):
        return (
            isinstance(found, list)
            and len(found) == len(shown)
            and all(_matches(a, b) for a, b in zip(found, shown, strict=True))
        )
    return bool(found == shown)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed here")
def test_every_curl_example_answers_as_the_page_shows(start_http: StartHttp) -> None:
    examples = _examples()
    assert len(examples) >= 5
    token = "docs-example-token"
    server = start_http("--docs-dir", str(DOCS), *UNLIMITED, settings={"MCP_BEARER_TOKEN": token})
    env = {**os.environ, "MCP_BEARER_TOKEN": token}
    for command, shown in examples:
        assert DOCUMENTED_URL in command
        done = subprocess.run(
            ["bash", "-c", command.replace(DOCUMENTED_URL, server.url)],
            env={name: value for name, value in env.items() if not name.lower().endswith("_proxy")},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        assert _matches(found, shown), (command, found)
