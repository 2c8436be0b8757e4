"""The daily update, run by `start` under the update lock when the throttle says it is due.

One resolution decides everything: pip is asked, without installing anything, what a fresh
install of the requirement (`kinetis-mcp-docs>=1.0,<2`, with every dependency at its
newest allowed version) would contain. If that is exactly what `current` holds, nothing is
built and the time is recorded. Otherwise a new environment is built beside the installed
one from those exact pins (`--no-deps`, so pip does not resolve a second time), its server
is checked offline, and `current` is switched to it in one rename. pip does not
byte-compile it: a detached process does that after the switch, outside the deadline.

The whole update runs against one deadline. Past it pip is killed, the partial environment
removed, and the caller starts the installed server: the install was never touched, and no
time is recorded, so the next spawn tries again. This module is imported only when an
update is due, which keeps its imports (subprocess, json, venv machinery) off the fast path.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from kinetis_mcp_docs.installer.environment import (
    DISTRIBUTION,
    build_environment,
    canonical_name,
    check_environment,
    compile_detached,
    current_environment,
    discard,
    installed_distributions,
    switch_to,
)
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import REQUIREMENT, InstallLayout
from kinetis_mcp_docs.installer.pip import run_pip
from kinetis_mcp_docs.installer.throttle import record_check

TIMEOUT_VARIABLE = "KINETIS_MCP_DOCS_UPDATE_TIMEOUT"
# Codex drops a server that has not started within 10 s, and Claude Code's wait is of the
# same order. 5 s of updating leaves the other half for the server to start and answer.
DEFAULT_TIMEOUT_SECONDS = 5.0


def update_timeout(environ: Mapping[str, str]) -> float:
    """The update deadline in seconds: `KINETIS_MCP_DOCS_UPDATE_TIMEOUT`, else 5.

    A value that is not a positive finite number of seconds is refused rather than guessed
    at, so a typo cannot turn into an unbounded update on every spawn.
    """
    text = environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise InstallerError(
            f"{TIMEOUT_VARIABLE}={text!r} is not a positive number of seconds; "
            "no update was attempted."
        )
    return seconds


def update(layout: InstallLayout, *, deadline: float) -> Path | None:
    """Bring `current` up to the newest release within the requirement, by `deadline`.

    `deadline` is a `time.monotonic()` value. Returns the new environment when `current`
    was switched to one, None when the installed one is already up to date; records the
    time in both cases. Raises `InstallerError` (and records nothing) on any failure, the
    deadline included, having left the installed environment as it was.
    Must run under the update lock.
    """
    installed = current_environment(layout)
    if installed is None:
        raise InstallerError(f"{layout.current} does not point at an environment.")
    resolved = resolve(layout, installed, deadline=deadline)
    if resolved.items() <= installed_distributions(installed).items():
        record_check(layout.last_update_check, time.time())
        return None
    pins = [f"{name}=={version}" for name, version in sorted(resolved.items())]
    # Compiled after the switch, outside the deadline: pip's compile was half of an update.
    env = build_environment(
        layout, ["--quiet", "--no-deps", "--no-compile", *pins], deadline=deadline
    )
    try:
        _check(layout, env, resolved[DISTRIBUTION], deadline=deadline)
    except BaseException:
        discard(env)
        raise
    switch_to(layout, env)
    record_check(layout.last_update_check, time.time())
    compile_detached(layout, env)
    return env


def _check(layout: InstallLayout, env: Path, expected: str, *, deadline: float) -> None:
    version = check_environment(layout, env, deadline=deadline)
    if version != expected:
        raise InstallerError(
            f"The new environment's server reports version {version}, not {expected}."
        )


def resolve(layout: InstallLayout, env: Path, *, deadline: float) -> dict[str, str]:
    """What a fresh install of the requirement would hold: canonical name -> version.

    Resolved by `env`'s own pip (so markers are evaluated for the interpreter the next
    environment is built from) with `--dry-run --ignore-installed`, which downloads only
    what it must read and installs nothing.
    """
    requirement = (
        ["-r", os.fspath(layout.requirements)] if layout.requirements.is_file() else [REQUIREMENT]
    )
    with tempfile.TemporaryDirectory(prefix="kinetis-update-") as scratch:
        report = Path(scratch, "report.json")
        run_pip(
            layout.python(env),
            [
                "install",
                "--dry-run",
                "--ignore-installed",
                "--quiet",
                "--report",
                os.fspath(report),
                *requirement,
            ],
            deadline=deadline,
            what=f"check for a newer {DISTRIBUTION}",
        )
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
            resolved = {
                canonical_name(item["metadata"]["name"]): str(item["metadata"]["version"])
                for item in data["install"]
            }
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InstallerError(
                f"Could not check for a newer {DISTRIBUTION}: pip's report was unreadable "
                f"({error!r})."
            ) from error
    if DISTRIBUTION not in resolved:
        raise InstallerError(f"Could not check for a newer {DISTRIBUTION}: pip did not offer it.")
    return resolved
