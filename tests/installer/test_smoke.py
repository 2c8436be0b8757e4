"""Setup's four-message verification, against small scripted servers.

Each fake server is a short Python program reading frames from stdin; the real server's
passing case is covered end to end in test_setup_e2e.py.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.server_check.verification import (
    READ_FAILED,
    ServerCheckFailed,
    verify_server,
)

_PREAMBLE = """
import json, sys
def answer(request, result):
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
RESULTS = {
    "initialize": {"serverInfo": {"name": "kinetis-mcp-docs", "version": "9.9.9"}},
    "resources/list": {"resources": [{"uri": "kinetis://docs/index"}]},
    "resources/read": {"contents": [{"uri": "kinetis://docs/index", "text": "# Index"}]},
}
"""


def fake_server(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "server.py"
    script.write_text(_PREAMBLE + textwrap.dedent(body))
    return [sys.executable, "-I", os.fspath(script)]


def verify(argv: list[str], timeout: float = 10.0) -> str:
    return verify_server(argv, dict(os.environ), timeout=timeout)


@pytest.fixture(autouse=True)
def temporary_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a failure keeps the server's stderr: this test's own directory, not the system's."""
    kept = tmp_path / "tmp"
    kept.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", os.fspath(kept))
    return kept


def test_a_server_answering_the_three_requests_and_not_the_notification_passes(
    tmp_path: Path,
) -> None:
    argv = fake_server(
        tmp_path,
        """
        for line in sys.stdin:
            request = json.loads(line)
            if "id" in request:
                answer(request, RESULTS[request["method"]])
        """,
    )

    assert verify(argv) == "9.9.9"


def test_a_server_answering_the_notification_fails_the_verification(tmp_path: Path) -> None:
    argv = fake_server(
        tmp_path,
        """
        for line in sys.stdin:
            request = json.loads(line)
            if "id" not in request:
                print(json.dumps({"jsonrpc": "2.0", "id": None, "result": {}}), flush=True)
            else:
                answer(request, RESULTS[request["method"]])
        """,
    )

    with pytest.raises(InstallerError) as error:
        verify(argv)

    assert error.value.message.startswith(
        "Verification failed: expected exactly 3 responses but got 4; "
        "notifications/initialized must draw none."
    )


def test_a_page_read_error_is_one_line_naming_the_step_and_the_file_holding_the_stderr(
    tmp_path: Path, temporary_directory: Path
) -> None:
    argv = fake_server(
        tmp_path,
        """
        for line in sys.stdin:
            request = json.loads(line)
            if request.get("method") == "resources/read":
                print("could not connect: proxy refused", file=sys.stderr, flush=True)
                print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {
                    "code": -32603, "message": 'Could not read "kinetis://docs/index".'}}),
                    flush=True)
            elif "id" in request:
                answer(request, RESULTS[request["method"]])
        """,
    )

    with pytest.raises(ServerCheckFailed) as error:
        verify(argv)

    (kept,) = temporary_directory.iterdir()
    assert kept.name.startswith("kinetis-docs-server-")
    assert kept.read_text() == "could not connect: proxy refused\n"
    assert error.value.message == (
        "Verification failed: resources/read of kinetis://docs/index was answered with error "
        f'-32603: Could not read "kinetis://docs/index". The server\'s stderr is in {kept}.'
    )
    assert error.value.problem.code == READ_FAILED


def test_a_server_silent_on_stderr_says_so_and_keeps_no_file(
    tmp_path: Path, temporary_directory: Path
) -> None:
    argv = fake_server(tmp_path, "sys.exit(3)")

    with pytest.raises(ServerCheckFailed) as error:
        verify(argv)

    assert error.value.message == (
        "Verification failed: initialize got no response before the server exited with "
        "status 3. The server wrote nothing to stderr."
    )
    assert error.value.problem.code is None
    assert list(temporary_directory.iterdir()) == []


def test_anything_but_frames_on_stdout_fails_the_verification(tmp_path: Path) -> None:
    argv = fake_server(
        tmp_path,
        """
        print("starting up...", flush=True)
        for line in sys.stdin:
            request = json.loads(line)
            if "id" in request:
                answer(request, RESULTS[request["method"]])
        """,
    )

    with pytest.raises(InstallerError, match="something other than a JSON-RPC frame"):
        verify(argv)


def test_a_server_that_never_answers_fails_within_the_bound(
    tmp_path: Path, temporary_directory: Path
) -> None:
    argv = fake_server(
        tmp_path,
        """
        import time
        print("stuck", file=sys.stderr, flush=True)
        time.sleep(600)
        """,
    )
    started = time.monotonic()

    with pytest.raises(InstallerError) as error:
        verify(argv, timeout=1.0)

    assert time.monotonic() - started < 10
    (kept,) = temporary_directory.iterdir()
    assert error.value.message == (
        f"Verification failed: initialize got no response in time. "
        f"The server's stderr is in {kept}."
    )
    assert kept.read_text() == "stuck\n"


def test_a_command_that_cannot_start_is_named(tmp_path: Path) -> None:
    with pytest.raises(InstallerError, match="the command could not start"):
        verify([os.fspath(tmp_path / "no-such-python"), "-I"])
