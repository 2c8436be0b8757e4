"""The one way the installer runs pip.

An argv list, never a shell; `--no-input` so a credential prompt can never hang a client's
spawn; `--disable-pip-version-check` so pip does no network of its own. pip's output goes
to stderr, because the updater runs while stdout carries protocol frames. The environment
keeps the user's pip configuration (`PIP_INDEX_URL`, `PIP_FIND_LINKS`, a private mirror's
certificate, ...) — that is how a mirror is used — but drops the variables that would send
the install somewhere other than the environment being built.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from kinetis_mcp_docs.installer.errors import InstallerError

# Variables that redirect an install away from the target environment, or load foreign
# code into the interpreters involved. PIP_PYTHON would re-aim `--python` itself.
SCRUBBED_VARIABLES = frozenset(
    {
        "PYTHONPATH",
        "PYTHONHOME",
        "PIP_TARGET",
        "PIP_PREFIX",
        "PIP_ROOT",
        "PIP_USER",
        "PIP_REQUIRE_VIRTUALENV",
        "PIP_PYTHON",
    }
)


def scrubbed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `environ` (default: this process's) without the redirecting variables."""
    source = os.environ if environ is None else environ
    return {key: value for key, value in source.items() if key not in SCRUBBED_VARIABLES}


def stderr_fd() -> int:
    """The descriptor children write their output to: ours for stderr, whatever wraps it."""
    try:
        sys.stderr.flush()
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (a `time.monotonic()` value), or None for no bound."""
    if deadline is None:
        return None
    return deadline - time.monotonic()


def run_pip(
    python: str | os.PathLike[str],
    arguments: Sequence[str],
    *,
    deadline: float | None,
    what: str,
    runner: str | None = None,
) -> None:
    """Run `python -m pip <arguments>` to completion, or raise `InstallerError`.

    With `runner` (see `pip_runner`), `python` runs that copy of pip instead of its own.
    `what` names the operation in the error message ("install kinetis-mcp-docs").
    `deadline` is a `time.monotonic()` value; past it the whole process group is killed,
    including the interpreter `pip --python` starts for the target environment.
    """
    pip = ["-I", runner] if runner is not None else ["-m", "pip"]
    argv = [os.fspath(python), *pip, "--no-input", "--disable-pip-version-check", *arguments]
    run_bounded(argv, deadline=deadline, what=what, name="pip", hint=" (its output is above)")


def pip_runner() -> str | None:
    """The running interpreter's pip as a script another interpreter can run, if it has one.

    `pip --python X` starts pip here only to run `X __pip-runner__.py ...`: pip's own
    script that executes exactly this copy of pip inside X's environment. Running that
    script directly does the same install without first starting pip here, which saves a
    third of a second on every install. None when pip is missing, older than the script
    (22.3, the same release as `--python`), or not a directory (a zipped pip).
    """
    spec = importlib.util.find_spec("pip")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = os.path.join(location, "__pip-runner__.py")  # noqa: PTH118 - a str argv
        if os.path.isfile(candidate):  # noqa: PTH113
            return candidate
    return None


def run_bounded(
    argv: Sequence[str], *, deadline: float | None, what: str, name: str, hint: str
) -> None:
    """Run an installer child (pip, venv) to completion, or raise `InstallerError`.

    Its output goes to stderr and its environment is scrubbed. `name` is how the child is
    called in a message; `hint` follows its exit status. Past `deadline`, or on any
    interruption, its whole process group is killed.
    """
    left = remaining(deadline)
    if left is not None and left <= 0:
        raise InstallerError(f"Could not {what}: no time was left before the deadline.")
    try:
        # A session of its own, so a timeout or an interrupt can end the child *and* the
        # interpreter it starts (pip --python); stdin closed, so nothing can wait for an answer.
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=stderr_fd(),
            stderr=stderr_fd(),
            env=scrubbed_environment(),
            start_new_session=True,
        )
    except OSError as error:
        raise InstallerError(
            f"Could not {what}: {argv[0]} could not be started ({error})."
        ) from error
    try:
        returncode = process.wait(timeout=left)
    except subprocess.TimeoutExpired:
        kill_group(process)
        raise InstallerError(
            f"Could not {what}: {name} did not finish before the deadline and was stopped."
        ) from None
    except BaseException:
        # Ctrl-C or any other interruption: never leave the child writing behind us.
        kill_group(process)
        raise
    if returncode != 0:
        raise InstallerError(f"Could not {what}: {name} exited with status {returncode}{hint}.")


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill `process` and everything in its session, then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()
