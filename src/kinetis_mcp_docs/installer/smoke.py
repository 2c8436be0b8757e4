"""Talk to a server as a client would, and accept it only when it behaves exactly so.

Two exchanges, held to the same rules:

- setup's verification: `initialize`, `notifications/initialized`, `resources/list` and
  `resources/read` of `kinetis://docs/index`, through exactly the command and environment
  a client will use. The read fetches a real page, so it also proves the documentation
  origin is reachable from the environment the client gives the server.
- the offline check of a new environment (setup's and the daily update's alike):
  `initialize` and `resources/list`, which need no network.

Either passes only when every request got one answer carrying its result member
(non-empty), nothing else reached stdout — no frame for the notification, no line that is
not a JSON-RPC frame, such as a release that prints at import — and the server exited 0
once its input ended. An update that switched in a server writing garbage to stdout would
break every client start, so the check before a switch is as strict as setup's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.exchange import Transcript, exchange
from kinetis_mcp_docs.server.methods import PROTOCOL_VERSION

INDEX_URI = "kinetis://docs/index"
# A page read may take the fetch's own 30-second deadline; the start-up and the other
# answers take well under a second on a working install.
SMOKE_TIMEOUT_SECONDS = 45.0


@dataclass(frozen=True)
class Step:
    """One message of an exchange, and what its answer must carry (None: no answer)."""

    message: dict[str, Any]
    label: str
    member: str | None

    @property
    def request_id(self) -> Any:
        return self.message.get("id")


def initialize_request(request_id: int) -> dict[str, Any]:
    """An `initialize` request as a client sends it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "kinetis-docs-installer", "version": "1"},
        },
    }


_INITIALIZE = Step(initialize_request(1), "initialize", "serverInfo")
_LIST = Step({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}, "resources/list", "resources")

VERIFICATION = (
    _INITIALIZE,
    Step(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "notifications/initialized",
        None,
    ),
    _LIST,
    Step(
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": INDEX_URI}},
        f"resources/read of {INDEX_URI}",
        "contents",
    ),
)
OFFLINE_CHECK = (_INITIALIZE, _LIST)


def verify_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float = SMOKE_TIMEOUT_SECONDS,
) -> str:
    """Setup's four-message verification; the server's version, or `InstallerError`."""
    return run_exchange(
        argv,
        env,
        VERIFICATION,
        timeout=timeout,
        cwd=os.sep,
        failure="Verification failed",
    )


def run_exchange(
    argv: Sequence[str],
    env: Mapping[str, str],
    steps: Sequence[Step],
    *,
    timeout: float,
    cwd: str | os.PathLike[str],
    failure: str,
) -> str:
    """Send `steps`, hold the answers to this module's rules, return `serverInfo.version`.

    On any problem, raises `InstallerError` starting with `failure`, naming the first
    problem and showing the server's stderr.
    """
    messages = [step.message for step in steps]
    transcript = exchange(argv, messages, env=env, timeout=timeout, cwd=cwd)
    problem = first_problem(transcript, steps)
    if problem is not None:
        stderr = transcript.stderr.rstrip()
        shown = f"\nThe server's stderr:\n{stderr}" if stderr else "\nIt wrote nothing to stderr."
        raise InstallerError(f"{failure}: {problem}.{shown}")
    initialize = transcript.response(_INITIALIZE.request_id) or {}
    return str(initialize["result"]["serverInfo"]["version"])


def first_problem(transcript: Transcript, steps: Sequence[Step]) -> str | None:
    """The first thing wrong with the exchange, named by its step; None when it passed."""
    if transcript.start_error:
        return f"the command could not start: {transcript.start_error}"
    answered = [step for step in steps if step.member is not None]
    for step in answered:
        frame = transcript.response(step.request_id)
        if frame is None:
            why = "in time" if transcript.timed_out else "before exiting"
            return f"{step.label} got no response {why}"
        if "error" in frame:
            error = frame["error"] if isinstance(frame["error"], dict) else {}
            message = str(error.get("message", "")).rstrip(".")
            return f"{step.label} was answered with error {error.get('code')}: {message}"
        result = frame.get("result")
        if not isinstance(result, dict) or not result.get(step.member):
            return f"{step.label} was answered without {step.member}"
    if _version(transcript) is None:
        return "initialize was answered without serverInfo.version"
    if transcript.garbage:
        return f"the server wrote something other than a JSON-RPC frame: {transcript.garbage[0]!r}"
    if len(transcript.frames) != len(answered):
        silent = [step.label for step in steps if step.member is None]
        extra = f"; {', '.join(silent)} must draw none" if silent else ""
        return f"expected exactly {len(answered)} responses but got {len(transcript.frames)}{extra}"
    if transcript.timed_out:
        return "the server did not exit after its input ended"
    if transcript.returncode != 0:
        return f"the server exited with status {transcript.returncode} after its input ended"
    return None


def _version(transcript: Transcript) -> str | None:
    frame = transcript.response(_INITIALIZE.request_id) or {}
    result = frame.get("result")
    info = result.get("serverInfo") if isinstance(result, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else None
