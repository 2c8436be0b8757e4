"""Removing an install directory: only what this installer wrote, never through a link.

`uninstall` runs this under the update lock, once the marker has proven the directory
ours. An entry of the layout goes only when it is of the type setup writes: `current` and
`previous` as links (the links themselves, never what they point at), the environments
under `envs/` named as setup names them and held by no byte-compile, the small files, the
temporaries a killed write left beside them, `.scratch` with what a killed pip left, and
the copies of pages and of a wheelhouse (`copies.py`) with the files it copied there.
The links go first, so that a client starting meanwhile fails at once instead of running
a half-removed environment.

Whatever remains — something a user put there, an entry of another type, an environment a
byte-compile is still writing — keeps the directory with its marker and lock, and is
named (`leftovers` tells the two apart): what is not ours is left as it is, and an
environment still being compiled goes when uninstall runs again. The marker goes last.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from ..envs.built import discard_environments, named_as_built
from ..layout import InstallLayout
from ..names import MARKER_NAME
from .copies import discard_copy
from .pages import PAGE_SUFFIX
from .scratch import discard_scratch
from .wheelhouse import WHEEL_SUFFIX

# What `files.write_atomic` and `links.switch_to` leave beside a name when killed.
_TEMPORARY = re.compile(r"(.+)\.tmp-[0-9a-f]{8}")


def remove_install(layout: InstallLayout) -> list[str]:
    """Remove what this installer wrote in `layout.root`, and the directory once empty.

    Returns the names left in the directory (sorted), none when it is gone. Must run
    under the update lock, and only in a directory the marker proves ours.
    """
    for link in (layout.current, layout.previous):
        _remove(link, stat.S_ISLNK)
    discard_environments(layout)
    _remove(layout.envs, stat.S_ISDIR)  # only once empty
    discard_scratch(layout)
    discard_copy(layout.pages, PAGE_SUFFIX)
    discard_copy(layout.wheelhouse, WHEEL_SUFFIX)
    state = (
        layout.last_update_check,
        layout.last_update_failure,
        layout.requirements,
        layout.package_source,
        layout.pages_source,
    )
    for small in state:
        _remove(small, stat.S_ISREG)
    small_files = (layout.marker, layout.lock, *state)
    ours = {path.name for path in (*small_files, layout.current, layout.previous)}
    for name in os.listdir(layout.root):  # noqa: PTH208 - names, not paths, are compared
        match = _TEMPORARY.fullmatch(name)
        if match and match.group(1) in ours:
            temporary = layout.root / name
            _remove(temporary, _is_file_or_link)
    left = sorted(set(os.listdir(layout.root)) - {MARKER_NAME, layout.lock.name})  # noqa: PTH208
    if left:
        return left
    _remove(layout.lock, stat.S_ISREG)
    _remove(layout.marker, stat.S_ISREG)
    _remove_directory(layout.root)
    return []


def leftovers(layout: InstallLayout, left: list[str]) -> tuple[list[str], list[str]]:
    """What `remove_install` left, told apart: what this installer did not write (by path
    under the directory, `envs/<name>` for one inside `envs`), and the environments it
    built that a byte-compile still holds."""
    copies = {layout.pages.name, layout.wheelhouse.name}
    foreign = [name for name in left if name != layout.envs.name and name not in copies]
    for name in sorted(copies & set(left)):
        # A copy keeps only what this installer did not write there: name that.
        copy = layout.root / name
        inside = sorted(os.listdir(copy)) if _is_directory(copy) else []  # noqa: PTH208
        foreign.extend([f"{name}/{entry}" for entry in inside] or [name])
    compiling: list[str] = []
    if layout.envs.name in left:
        if layout.envs.is_symlink() or not layout.envs.is_dir():
            foreign.append(layout.envs.name)
        else:
            for name in sorted(os.listdir(layout.envs)):  # noqa: PTH208 - names are compared
                entry = f"{layout.envs.name}/{name}"
                held = named_as_built(name) and (layout.envs / name).is_dir()
                (compiling if held else foreign).append(entry)
    return sorted(foreign), compiling


def _remove(path: Path, wanted: Callable[[int], bool]) -> None:
    """Remove `path` if it is of the type `wanted` accepts (a directory only when empty)."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not wanted(mode):
        return
    try:
        if stat.S_ISDIR(mode):
            path.rmdir()
        else:
            path.unlink()
    except FileNotFoundError:
        return
    except OSError as error:
        # A directory something was left in stays, and says so through what is left.
        if error.errno not in {errno.ENOTEMPTY, errno.EEXIST}:
            raise


def _is_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _is_file_or_link(mode: int) -> bool:
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _remove_directory(root: Path) -> None:
    """Remove the empty install directory; one reached through a link goes with the link."""
    if root.is_symlink():
        os.rmdir(os.path.realpath(root))  # noqa: PTH106
        root.unlink()
    else:
        root.rmdir()
