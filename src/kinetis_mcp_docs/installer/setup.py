"""`kinetis-docs setup [codex]`: own the install directory, install, verify, register.

The steps run in the order the contract gives, each announced on one line of stdout;
pip's output goes to stderr. Nothing is written before the prerequisites are checked and
the directory is proven ours (and safe: `directory.install_problem`). The install takes
the same build-check-switch path as the daily update (`candidate.py`), under the same
lock, and writes the timestamp only when it succeeded — so the verification spawn, inside
the update window, neither takes the lock nor checks for an update.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kinetis_mcp_docs.installer import directory, environment, registration
from kinetis_mcp_docs.installer.candidate import Candidate, candidate
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.files import write_atomic
from kinetis_mcp_docs.installer.layout import REQUIREMENT, InstallLayout
from kinetis_mcp_docs.installer.lock import update_lock
from kinetis_mcp_docs.installer.smoke import verify_server

# A first install downloads a handful of wheels; past this something is wrong.
INSTALL_DEADLINE_SECONDS = 600.0
# Byte-compiling a fresh environment takes a second or two; past this, leave the rest to
# first imports rather than keep the user waiting.
COMPILE_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class SetupResult:
    """What setup did, for the caller's last line."""

    client: registration.Client
    root: Path
    version: str
    argv: list[str]


def run_setup(
    client_name: str | None,
    *,
    say: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> SetupResult:
    """Install into the install directory and register with one client.

    `say` receives one line per step. Raises `InstallerError` on any expected failure.
    """
    environ = dict(os.environ if environ is None else environ)
    client = registration.client_named(client_name)

    say(f"Checking prerequisites: the {client.label} CLI and Python's venv support")
    cli = client.find_cli()
    check_python()

    root = directory.resolve_directory(environ)
    found = directory.inspect_directory(root)
    layout = InstallLayout(root)
    say(f"Installing {REQUIREMENT} into {root}")
    claim = directory.claim_directory(root, found)
    new: Candidate | None = None
    try:
        deadline = time.monotonic() + INSTALL_DEADLINE_SECONDS
        installed, new = install(layout, deadline=deadline, say=say)
        say(f"Installed version {installed}; verifying it through the command to register")
        argv = layout.start_argv()
        registered_env = client.registered_environment(environ)
        version = verify_server(argv, client.launch_environment(environ, registered_env))
    except BaseException:
        if new is not None:
            new.stop()
        # A failed first install leaves exactly what was found (see directory.py).
        if claim.first_install:
            directory.roll_back(claim)
        raise
    try:
        say(f"Registering {registration.SERVER_NAME} with {client.label}")
        client.register(cli, argv, registered_env)
    finally:
        new.finish(timeout=COMPILE_TIMEOUT_SECONDS)
    return SetupResult(client, root, version, argv)


def check_python() -> None:
    """That this Python can create an isolated environment and install into it."""
    if importlib.util.find_spec("venv") is None:
        raise InstallerError(
            "This Python cannot create virtual environments (its venv module is missing). "
            "Install your Python's venv support (on Debian and Ubuntu: python3-venv) and "
            "run setup again."
        )
    base = environment.base_interpreter()
    if not os.access(base, os.X_OK):
        raise InstallerError(
            f"The base interpreter of this Python, {base}, cannot be run; run setup with "
            "another Python 3.10 or later."
        )
    if not environment.running_pip_supports_python_option() and (
        importlib.util.find_spec("ensurepip") is None
    ):
        raise InstallerError(
            "This Python has neither pip 22.3 or later nor ensurepip, so it cannot install "
            "into a new environment. Install your Python's venv support (on Debian and "
            "Ubuntu: python3-venv) and run setup again."
        )


def install(
    layout: InstallLayout, *, deadline: float, say: Callable[[str], None]
) -> tuple[str, Candidate]:
    """Under the lock: write the requirement, build, check, switch, record the time.

    Returns the installed version, and the candidate whose byte-compile is still running
    beside the caller (see `candidate.py`): end it with `finish` or `stop`. The environment
    serving before (on a re-run) stays untouched until the switch, and stays as `previous`
    after it.
    """
    with update_lock(
        layout.lock, on_wait=lambda: say(f"Waiting for another update of {layout.root}")
    ):
        write_requirements(layout)
        with candidate(
            layout, ["-r", os.fspath(layout.requirements)], deadline=deadline, compile_beside=True
        ) as new:
            version = new.check(deadline=deadline)
    return version, new


def write_requirements(layout: InstallLayout) -> None:
    """`requirements.txt`, replaced atomically: the updater reads it without the lock too."""
    try:
        write_atomic(os.fspath(layout.requirements), f"{REQUIREMENT}\n".encode())
    except OSError as error:
        raise InstallerError(
            f"Could not write {layout.requirements} ({error.strerror or error})."
        ) from error
