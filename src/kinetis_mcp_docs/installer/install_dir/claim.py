"""Making a directory an install directory, and undoing that when a first install fails.

`claim_directory` creates the directory (and any parents, each `DIRECTORY_MODE`) and writes
the marker. A failed first install leaves what was found: `roll_back` removes a directory
setup created (and any parents it had to create) and re-empties a directory that was
empty. An install over a directory already ours is never rolled back: its previous
environment is still the one that serves.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import InstallerError
from ..layout import DIR_ENVIRONMENT_VARIABLE, DIRECTORY_MODE, MARKER_NAME
from .files import write_atomic
from .ownership import MARKER_BYTES, Found


@dataclass(frozen=True)
class Claim:
    """A directory setup has made its own, and how to undo that."""

    root: Path
    found: Found
    created: Path | None  # the top-most directory setup created, when it created any

    @property
    def first_install(self) -> bool:
        return self.found is not Found.OURS


def claim_directory(root: Path, found: Found) -> Claim:
    """Create `root` if needed and write the marker; `found` is `inspect_directory`'s answer."""
    if found is Found.OURS:
        return Claim(root, found, None)
    created = None
    try:
        if found is Found.ABSENT:
            created = _make_directories(root)
        write_atomic(os.fspath(root / MARKER_NAME), MARKER_BYTES)
    except OSError as error:
        claim = Claim(root, found, created)
        roll_back(claim)
        raise InstallerError(
            f"Could not create the install directory {root} ({error.strerror or error}). "
            f"Choose a writable location with {DIR_ENVIRONMENT_VARIABLE}."
        ) from error
    return Claim(root, found, created)


def _make_directories(root: Path) -> Path:
    """Create `root` and its missing parents, each `DIRECTORY_MODE`; the top-most created."""
    missing = [root]
    for parent in root.parents:
        if os.path.lexists(parent):
            break
        missing.append(parent)
    try:
        for directory in reversed(missing):
            # Not `mkdir(parents=True)`: it makes the parents 0o777 less the umask.
            directory.mkdir(mode=DIRECTORY_MODE)
    except FileExistsError as error:
        # Someone else made it since it was inspected: not ours to write or remove.
        raise InstallerError(
            f"{error.filename} appeared while setup was running; run setup again."
        ) from None
    return missing[-1]


def roll_back(claim: Claim) -> None:
    """Return a first install's directory to what was found; an owned one is left alone."""
    if claim.found is Found.ABSENT and claim.created is not None:
        _remove(claim.created)
    elif claim.found is Found.EMPTY:
        for entry in claim.root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


# How long a removal is tried again while the tree still changes under it, and how long
# the tree must then stay gone.
_SETTLE_SECONDS = 5.0
_GONE_SECONDS = 0.1


def _remove(tree: Path) -> None:
    """Remove `tree`, and again while something still writes into it.

    A child stopped with its process group (pip, and what pip started) is killed at once,
    but each of its processes dies on its own time, finishing the system call it was in: a
    directory one made just after `rmtree` had removed the tree left it standing, and setup
    said it had removed it. So the tree must stay gone for `_GONE_SECONDS`, trying again
    for at most `_SETTLE_SECONDS`."""
    deadline = time.monotonic() + _SETTLE_SECONDS
    while True:
        shutil.rmtree(tree, ignore_errors=True)
        time.sleep(_GONE_SECONDS)
        if not os.path.lexists(tree) or time.monotonic() > deadline:
            return
