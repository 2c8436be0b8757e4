"""The real Claude Code CLI against the route over `--transport http` (the optional
`nox -s clients`).

Skipped unless `KINETIS_TEST_CLIENTS_BIN` names a directory holding the real `claude`,
which the `clients` session installs from npm. Claude Code gets a throwaway HOME, so
nothing of the machine's own configuration is read or changed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.server.http.conftest import UNLIMITED, StartHttp

CLIENTS_BIN = os.environ.get("KINETIS_TEST_CLIENTS_BIN", "")
TIMEOUT = 300.0
TOKEN = "claude-code-token"

pytestmark = pytest.mark.skipif(
    not CLIENTS_BIN, reason="the real client CLIs run only in `nox -s clients`"
)


def test_claude_code_added_over_http_with_a_bearer_header_reports_connected(
    start_http: StartHttp, docs_tree: Path, tmp_path: Path
) -> None:
    server = start_http(
        "--docs-dir", str(docs_tree), "--private", *UNLIMITED,
        settings={"MCP_ENABLED": "true", "MCP_BEARER_TOKEN": TOKEN},
    )  # fmt: skip
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{CLIENTS_BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.fspath(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }

    def claude(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["claude", *arguments],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    added = claude(
        "mcp", "add", "--scope", "user", "--transport", "http", "kinetis-docs", server.url,
        "--header", f"Authorization: Bearer {TOKEN}",
    )  # fmt: skip
    assert added.returncode == 0, added.stdout + added.stderr
    shown = claude("mcp", "get", "kinetis-docs")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "Connected" in shown.stdout, shown.stdout
    assert "Type: http" in shown.stdout
    # It reached the route with the token: authorised requests are in the access log.
    server.wait_for_output('"POST /api/mcp HTTP/1.1" 200')
