"""Setup's verification: four messages through exactly the command a client will run.

`initialize`, `notifications/initialized`, `resources/list` and `resources/read` of
`kinetis://docs/index`, sent with the argv and the environment the client will use. It
passes only with exactly three responses — carrying `serverInfo`, `resources` and
`contents` — and nothing else on stdout: the notification must draw nothing. The read
fetches a real page, so this also proves the documentation origin is reachable from the
environment the client gives the server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from kinetis_mcp_docs.installer.environment import initialize_request
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.exchange import Transcript, exchange

INDEX_URI = "kinetis://docs/index"
# A page read may take the fetch's own 30-second deadline; the start-up and the other
# answers take well under a second on a working install.
SMOKE_TIMEOUT_SECONDS = 45.0

MESSAGES: list[dict[str, Any]] = [
    initialize_request(1),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": INDEX_URI}},
]
# (request id, the message it names in a failure, the result member it must carry)
_EXPECTED = [
    (1, "initialize", "serverInfo"),
    (2, "resources/list", "resources"),
    (3, f"resources/read of {INDEX_URI}", "contents"),
]


def verify_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float = SMOKE_TIMEOUT_SECONDS,
) -> str:
    """Run the four-message exchange; return the server's version or raise `InstallerError`."""
    transcript = exchange(argv, MESSAGES, env=env, timeout=timeout, cwd=os.sep)
    problem = _first_problem(transcript)
    if problem is not None:
        stderr = transcript.stderr.rstrip()
        shown = (
            f"\nThe server's stderr:\n{stderr}"
            if stderr
            else "\nThe server wrote nothing to stderr."
        )
        raise InstallerError(f"Verification failed: {problem}.{shown}")
    result = transcript.response(1) or {}
    version = result["result"]["serverInfo"].get("version")
    return str(version)


def _first_problem(transcript: Transcript) -> str | None:
    """The first thing wrong with the exchange, named by its step; None when it passed."""
    if transcript.start_error:
        return f"the registered command could not start: {transcript.start_error}"
    for request_id, step, member in _EXPECTED:
        frame = transcript.response(request_id)
        if frame is None:
            why = "in time" if transcript.timed_out else "before exiting"
            return f"{step} got no response {why}"
        if "error" in frame:
            error = frame["error"] if isinstance(frame["error"], dict) else {}
            message = str(error.get("message", "")).rstrip(".")
            return f"{step} was answered with error {error.get('code')}: {message}"
        result = frame.get("result")
        if not isinstance(result, dict) or member not in result:
            return f"{step} was answered without {member}"
    if transcript.garbage:
        return f"the server wrote something other than a JSON-RPC frame: {transcript.garbage[0]!r}"
    if len(transcript.frames) != len(_EXPECTED):
        return (
            f"expected exactly {len(_EXPECTED)} responses but got {len(transcript.frames)}; "
            "notifications/initialized must draw none"
        )
    if transcript.timed_out:
        return "the server did not exit after its input ended"
    if transcript.returncode != 0:
        return f"the server exited with status {transcript.returncode} after its input ended"
    return None
