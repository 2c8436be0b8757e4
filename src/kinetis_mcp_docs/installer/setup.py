"""`kinetis-docs setup [codex]`: own the install directory, install, verify, register.

The steps run in the order the contract gives, each announced on one line of stdout;
pip's output goes to stderr. Nothing is written before the prerequisites are checked and
the directory is proven ours. The install takes the same build-check-switch path as the
daily update (`environment.py`), under the same lock, and writes the timestamp only when
it succeeded — which also makes the verification spawn's own update check a no-op. The
lock is released before the verification, because the registered command takes it.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kinetis_mcp_docs.installer import directory, environment, registration
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import REQUIREMENT, InstallLayout
from kinetis_mcp_docs.installer.lock import update_lock
from kinetis_mcp_docs.installer.smoke import verify_server
from kinetis_mcp_docs.installer.throttle import record_check

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
    cli = registration.find_cli(client)
    check_python()

    root = directory.resolve_directory(environ)
    found = directory.inspect_directory(root)
    layout = InstallLayout(root)
    say(f"Installing {REQUIREMENT} into {root}")
    claim = directory.claim_directory(root, found)
    compiling: environment.BackgroundCompile | None = None
    try:
        installed, compiling = install(layout, deadline=time.monotonic() + INSTALL_DEADLINE_SECONDS)
        say(f"Installed version {installed}; verifying it through the command to register")
        argv = layout.start_argv()
        registered_env = registration.registered_environment(client, environ)
        version = verify_server(
            argv, registration.launch_environment(client, environ, registered_env)
        )
    except BaseException:
        if compiling is not None:
            compiling.stop()
        # A failed first install leaves exactly what was found (see directory.py).
        if claim.first_install:
            directory.roll_back(claim)
        raise
    try:
        say(f"Registering {registration.SERVER_NAME} with {client.label}")
        registration.register(client, cli, argv, registered_env)
    finally:
        compiling.finish(timeout=COMPILE_TIMEOUT_SECONDS)
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


def install(layout: InstallLayout, *, deadline: float) -> tuple[str, environment.BackgroundCompile]:
    """Under the lock: write the requirement, build, check, switch, record the time.

    Returns the installed version, and the byte-compile of the new environment still
    running beside the caller (pip is told not to compile; see `BackgroundCompile`). The
    environment serving before (on a re-run) stays untouched until the switch, and stays
    as `previous` after it.
    """
    with update_lock(layout.lock):
        write_requirements(layout)
        env = environment.build_environment(
            layout, ["--no-compile", "-r", os.fspath(layout.requirements)], deadline=deadline
        )
        compiling = environment.BackgroundCompile(layout, env)
        try:
            version = environment.check_environment(layout, env, deadline=deadline)
        except BaseException:
            compiling.stop()
            environment.discard(env)
            raise
        try:
            environment.switch_to(layout, env)
            record_check(layout.last_update_check, time.time())
        except BaseException:
            compiling.stop()
            raise
    return version, compiling


def write_requirements(layout: InstallLayout) -> None:
    """`requirements.txt`, replaced atomically: the updater reads it without the lock too."""
    temporary = layout.requirements.with_name(f"requirements.txt.tmp-{secrets.token_hex(4)}")
    try:
        temporary.write_text(f"{REQUIREMENT}\n", encoding="utf-8")
        temporary.replace(layout.requirements)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise InstallerError(
            f"Could not write {layout.requirements} ({error.strerror or error})."
        ) from error
