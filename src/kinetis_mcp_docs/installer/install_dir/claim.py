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
from dataclasses import dataclass
from pathlib import Path

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.files import write_atomic
from kinetis_mcp_docs.installer.install_dir.ownership import MARKER_BYTES, Found
from kinetis_mcp_docs.installer.layout import DIR_ENVIRONMENT_VARIABLE, DIRECTORY_MODE, MARKER_NAME


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
        shutil.rmtree(claim.created, ignore_errors=True)
    elif claim.found is Found.EMPTY:
        for entry in claim.root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
