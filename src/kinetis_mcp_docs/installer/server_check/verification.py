"""Talk to a server as a client would, and accept it only when it behaves exactly so.

Two exchanges, held to the same rules:

- setup's verification: `initialize`, `notifications/initialized`, `resources/list` and
  `resources/read` of `kinetis://docs/index`, through exactly the command and environment
  a client will use. The read fetches a real page, so it also proves the documentation
  origin is reachable from the environment the client gives the server.
- the offline check of a new environment (setup's and the daily update's alike):
  `initialize` and `resources/list`, which need no network, through what a client spawn of
  that environment runs (`candidate.SPAWN_CHECK`).

Either passes only when every request got one answer carrying its result member
(non-empty), nothing else reached stdout — no frame for the notification, no line that is
not a JSON-RPC frame, such as a release that prints at import — and the server exited 0
once its input ended. An update that switched in a server writing garbage to stdout would
break every client start, so the check before a switch is as strict as setup's.

A failure is `ServerCheckFailed`: one line naming the first problem, with whatever the
server wrote to stderr kept in a file of its own (`kinetis-docs-server-*.log` in the
temporary directory) that the line names — a traceback does not fit in one line, and
setup may just have removed the install directory it ran from.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import PROTOCOL_VERSION
from ..errors import InstallerError
from .exchange import Transcript, exchange

INDEX_URI = "kinetis://docs/index"
# A page read may take the fetch's own 30-second deadline; the start-up and the other
# answers take well under a second on a working install.
SMOKE_TIMEOUT_SECONDS = 45.0
# The JSON-RPC code of a page that could not be read (the origin, or a pages directory).
READ_FAILED = -32603


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with an exchange; `code` when a request drew an error."""

    text: str
    code: int | None = None


class ServerCheckFailed(InstallerError):
    """A server that did not behave as a client needs: the problem, and its stderr's file."""

    def __init__(self, failure: str, problem: Problem, stderr: str) -> None:
        self.failure = failure
        self.problem = problem
        self.stderr_file = keep_stderr(stderr)
        self.last_stderr_line = (stderr.strip().splitlines() or [""])[-1]
        super().__init__(f"{failure}: {problem.text}. {self.where_stderr()}")

    def where_stderr(self) -> str:
        """Where to read what the server said: one sentence."""
        if self.stderr_file is not None:
            return f"The server's stderr is in {self.stderr_file}."
        if self.last_stderr_line:
            return f"The server's last line on stderr: {self.last_stderr_line}"
        return "The server wrote nothing to stderr."

    def account(self) -> str:
        """The first problem, the server's last line on stderr (usually the real cause:
        `--docs-dir ...: not a directory`, a traceback's last line), and where the whole of
        its stderr is kept."""
        said = self.last_stderr_line
        if self.stderr_file is None or not said:
            return f"{self.problem.text}. {self.where_stderr()}"
        return (
            f"{self.problem.text}; the server's last line on stderr: {said} "
            f"(all of its stderr is in {self.stderr_file})."
        )


def read_hint(pages: str | os.PathLike[str] | None) -> str:
    """What to check when the server could not read a page: its pages, or the origin."""
    if pages is not None and not Path(pages).is_dir():
        return (
            f"The pages directory {pages} is gone: put it back (a checkout's docs/, say) or "
            "point KINETIS_MCP_DOCS_PAGES at another"
        )
    if pages is not None:
        return f"Check that {Path(pages, 'index.md')} is a readable UTF-8 file"
    return (
        "Check that this machine reaches raw.githubusercontent.com with the proxy and "
        "certificate settings the client gives the server (HTTPS_PROXY, SSL_CERT_FILE), or "
        "serve the pages from a local directory with KINETIS_MCP_DOCS_PAGES"
    )


def keep_stderr(text: str) -> Path | None:
    """`text` in a new private file in the temporary directory; None if empty or unwritable."""
    if not text.strip():
        return None
    try:
        fd, name = tempfile.mkstemp(prefix="kinetis-docs-server-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        return None
    return Path(name)


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

    On any problem, raises `ServerCheckFailed` starting with `failure`, naming the first
    problem and the file holding the server's stderr.
    """
    messages = [step.message for step in steps]
    transcript = exchange(argv, messages, env=env, timeout=timeout, cwd=cwd)
    problem = first_problem(transcript, steps)
    if problem is not None:
        raise ServerCheckFailed(failure, problem, transcript.stderr)
    initialize = transcript.response(_INITIALIZE.request_id) or {}
    return str(initialize["result"]["serverInfo"]["version"])


def first_problem(transcript: Transcript, steps: Sequence[Step]) -> Problem | None:
    """The first thing wrong with the exchange, named by its step; None when it passed."""
    if transcript.start_error:
        return Problem(f"the command could not start: {transcript.start_error}")
    answered = [step for step in steps if step.member is not None]
    for step in answered:
        frame = transcript.response(step.request_id)
        if frame is None:
            return Problem(f"{step.label} got no response {_how_it_ended(transcript)}")
        if "error" in frame:
            error = frame["error"] if isinstance(frame["error"], dict) else {}
            message = str(error.get("message", "")).rstrip(".")
            code = error.get("code")
            return Problem(
                f"{step.label} was answered with error {code}: {message}",
                code if isinstance(code, int) else None,
            )
        result = frame.get("result")
        if not isinstance(result, dict) or not result.get(step.member):
            return Problem(f"{step.label} was answered without {step.member}")
    return _misbehaviour(transcript, steps, len(answered))


def _misbehaviour(transcript: Transcript, steps: Sequence[Step], answered: int) -> Problem | None:
    """What went wrong besides the answers themselves: stdout, frame count, exit."""
    if _version(transcript) is None:
        return Problem("initialize was answered without serverInfo.version")
    if transcript.garbage:
        garbage = transcript.garbage[0]
        return Problem(f"the server wrote something other than a JSON-RPC frame: {garbage!r}")
    if len(transcript.frames) != answered:
        silent = [step.label for step in steps if step.member is None]
        extra = f"; {', '.join(silent)} must draw none" if silent else ""
        return Problem(
            f"expected exactly {answered} responses but got {len(transcript.frames)}{extra}"
        )
    if transcript.timed_out:
        return Problem("the server did not exit after its input ended")
    if transcript.returncode != 0:
        return Problem(
            f"the server exited with status {transcript.returncode} after its input ended"
        )
    return None


def _how_it_ended(transcript: Transcript) -> str:
    """Why a response never came, for a message: the time ran out, or the server exited."""
    if transcript.timed_out:
        return "in time"
    if transcript.returncode:
        return f"before the server exited with status {transcript.returncode}"
    return "before the server exited"


def _version(transcript: Transcript) -> str | None:
    frame = transcript.response(_INITIALIZE.request_id) or {}
    result = frame.get("result")
    info = result.get("serverInfo") if isinstance(result, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else None
