"""`kinetis-docs update`: the daily update, now, whatever the timestamp.

It first proves the install directory ours, then runs `update.update_now` under the same
lock as a client start's update, one line per step, without the fail-fast pip options, and
bounded as setup bounds an install rather than by a start's deadline. A source install that
is already up to date is told how it takes its checkout's changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..envs.candidate import MANUAL_DEADLINE_SECONDS
from ..envs.interpreter import interpreter_problem
from ..envs.links import current_environment
from ..errors import InstallerError
from ..install_dir.advice import (
    in_checkout,
    install_here,
    setup_with_new_python,
    with_new_python,
)
from ..install_dir.ownership import owned_install, resolve_directory
from ..install_dir.package_source import read_source
from ..install_dir.pages import held_pages
from ..install_dir.safety import WRITABLE_FIX, cannot_write
from ..update import update_now


def run_update(environ: Mapping[str, str], *, say: Callable[[str], None]) -> Path | None:
    """`kinetis-docs update`: `update_now` on the install directory, one line per step.

    Returns the new environment, None when already up to date; raises `InstallerError`
    when nothing is installed, the directory is not ours, or the update fails.
    """
    root = resolve_directory(environ)
    layout = owned_install(root, "update")
    if layout is None:
        raise InstallerError(
            f"Nothing is installed in {root}; install it from a clone of kinetis-mcp-docs with "
            f"`{install_here(root)}` (or `{install_here(root, 'codex')}`), as its README says."
        )
    unwritable = cannot_write(layout)
    if unwritable is not None:
        raise InstallerError(
            f"Cannot update {root}: {unwritable}; {WRITABLE_FIX}, and try again. Nothing was "
            "changed."
        )
    source = read_source(layout)
    checkout = None if source is None else source.checkout()
    # The session holds a copy of a clone's docs/ unless told otherwise: which pages each
    # registration asked for, `status` reads from the clients.
    held = held_pages(layout)
    others = "" if held is not None and held.name == "docs" else "; `status` names each client's"
    current = current_environment(layout)
    stranded = None if current is None else interpreter_problem(current)
    if stranded is not None:
        # No update can build from an interpreter that cannot start; nor can its own setup.
        advice = setup_with_new_python(checkout)
        raise InstallerError(
            f"Cannot update {root}: the environment {layout.current} points at cannot run: "
            f"{stranded}. {advice[:1].upper()}{advice[1:]}: "
            f"`{with_new_python(root, checkout=checkout)}` (add `-- codex` for Codex{others}). "
            "Nothing was changed."
        )
    say(f"Updating the install in {root}")
    deadline = time.monotonic() + MANUAL_DEADLINE_SECONDS
    switched = update_now(layout, deadline=deadline, say=say)
    if switched is None and checkout is not None:
        say(
            f"It is a source install of {checkout}, which takes the checkout's changes with "
            f"{in_checkout(checkout, root, pull=True)} (add `-- codex` for Codex{others})"
        )
    return switched
