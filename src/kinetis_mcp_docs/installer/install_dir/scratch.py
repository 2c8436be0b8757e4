"""The install directory's own temporary directory, for pip and the update.

pip unpacks downloads and builds in temporary directories that it removes when it ends,
but a client start's update is killed when its deadline passes, and a client may kill a
start mid-update: such a pip leaves its partial download and build directories, and the
update its own, wherever `TMPDIR` points, and nothing would ever remove them from the
user's. So the children of an install or update keep their temporary files in
`DIR/.scratch`, which each install or update empties first, under the update lock: what
a killed one left is removed by the next, and uninstall removes the directory with it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from ..errors import InstallerError
from ..layout import InstallLayout

# Only this user reads what pip unpacks (a private index's packages among it).
SCRATCH_MODE = 0o700


def emptied_scratch(layout: InstallLayout) -> Path:
    """`layout.scratch`, empty, what an earlier install or update left in it removed.

    Must run under the update lock: no other install or update is then using it.
    """
    discard_scratch(layout)
    try:
        layout.scratch.mkdir(mode=SCRATCH_MODE)
    except OSError as error:
        raise InstallerError(
            f"Could not create {layout.scratch} ({error.strerror or error})."
        ) from error
    return layout.scratch


def discard_scratch(layout: InstallLayout) -> None:
    """Remove `layout.scratch` and everything in it; a link there goes, not its target.

    A directory in it that its owner may not write (a tool's read-only tree) would stop
    the removal, and `rm -rf` with it: the owner's directories in it are made writable
    first, then it is removed again.
    """
    path = layout.scratch
    try:
        mode = path.lstat().st_mode
        if not stat.S_ISDIR(mode):
            path.unlink()
            return
        try:
            shutil.rmtree(path)
        except PermissionError:
            _make_directories_writable(path)
            shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise InstallerError(
            f"Could not empty {path} ({error.strerror or error}); remove it and try again."
        ) from error


def _make_directories_writable(root: Path) -> None:
    """Give the owner read, write and search on `root` and every directory below it that
    it can reach, each before it is read; links are never followed. Best effort: what
    cannot be changed (another user's) leaves the removal to fail and say so."""
    with contextlib.suppress(OSError):
        os.chmod(root, stat.S_IMODE(root.lstat().st_mode) | stat.S_IRWXU)  # noqa: PTH101
    for top, directories, _ in os.walk(root):
        for name in directories:
            directory = os.path.join(top, name)  # noqa: PTH118
            with contextlib.suppress(OSError):
                mode = os.lstat(directory).st_mode
                if stat.S_ISDIR(mode):
                    os.chmod(directory, stat.S_IMODE(mode) | stat.S_IRWXU)  # noqa: PTH101
