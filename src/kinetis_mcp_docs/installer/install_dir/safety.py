"""Whether an install directory that is ours is safe to write.

`install_problem` refuses an install directory, its `envs`, or the environment `current`
or `previous` points at, that other users can write to — any of them could then change
what a client runs, or what a rollback would run — naming the `chmod -R` that fixes the
whole directory, as ssh refuses a writable key (an install made by an earlier version
under umask 000 is writable throughout); and refuses an entry of the layout that is not of
the type setup writes (a `current` that is a directory, an `envs` that is a file, a lock
that is a symlink, ...), before anything is written. It only reads, never following a link
under the directory. What setup creates is never writable by others, whatever the umask.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Callable
from pathlib import Path

from ..envs.links import current_environment, previous_environment
from ..errors import InstallerError
from ..layout import InstallLayout
from ..names import (
    CURRENT_NAME,
    DIR_ENVIRONMENT_VARIABLE,
    ENVS_NAME,
    LAST_CHECK_NAME,
    LAST_FAILURE_NAME,
    LOCK_NAME,
    PAGES_NAME,
    PAGES_SOURCE_NAME,
    PREVIOUS_NAME,
    REQUIREMENTS_NAME,
    SCRATCH_NAME,
    SOURCE_NAME,
    WHEELHOUSE_NAME,
)
from .files import describe
from .ownership import (
    Found,
    Refusal,
    ownership,
    refused,
)

_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH
# Each name of the layout, the type setup gives it, and what it holds, for a message.
_ENTRIES: list[tuple[str, Callable[[int], bool], str]] = [
    (ENVS_NAME, stat.S_ISDIR, "its environments (a directory)"),
    (CURRENT_NAME, stat.S_ISLNK, "the link to the environment that serves"),
    (PREVIOUS_NAME, stat.S_ISLNK, "the link to the environment before it"),
    (LOCK_NAME, stat.S_ISREG, "its update lock (a regular file)"),
    (LAST_CHECK_NAME, stat.S_ISREG, "the time of its last update (a regular file)"),
    (LAST_FAILURE_NAME, stat.S_ISREG, "the time of its last failed update (a regular file)"),
    (REQUIREMENTS_NAME, stat.S_ISREG, "the requirement it installs (a regular file)"),
    (SOURCE_NAME, stat.S_ISREG, "where it installs from (a regular file)"),
    (SCRATCH_NAME, stat.S_ISDIR, "its installs' temporary files (a directory)"),
    (PAGES_NAME, stat.S_ISDIR, "its copy of the pages it serves (a directory)"),
    (PAGES_SOURCE_NAME, stat.S_ISREG, "where its copy of the pages comes from (a regular file)"),
    (WHEELHOUSE_NAME, stat.S_ISDIR, "its copy of a checkout's wheelhouse (a directory)"),
]


# What lets an install directory be written again (troubleshooting.md, "Cannot write the
# install directory").
WRITABLE_FIX = f"choose a writable location with {DIR_ENVIRONMENT_VARIABLE}, or fix the permissions"


def inspect_directory(root: Path) -> Found:
    """Whether setup may install into `root`; raises `InstallerError` when it may not.

    `ownership`, then — for a directory that exists — that it can be written and
    `install_problem`. Reads only.
    """
    found = ownership(root)
    if isinstance(found, Refusal):
        raise refused(root, found, "install into")
    if found is Found.ABSENT:
        return found
    unwritable = cannot_write(InstallLayout(root))
    if unwritable is not None:
        raise refused(
            root, Refusal(unwritable, f"{WRITABLE_FIX}, and run setup again"), "install into"
        )
    problem = install_problem(InstallLayout(root))
    if problem is not None:
        reason, fix = problem
        raise refused(root, Refusal(reason, f"{fix} and run setup again"), "install into")
    return found


def cannot_write(layout: InstallLayout) -> str | None:
    """Why this user cannot write the install directory (or its `envs`), where every
    install, update and removal writes; None when they can. Reads only."""
    for directory in (layout.root, layout.envs):
        try:
            if not stat.S_ISDIR(directory.lstat().st_mode):
                continue  # absent, or refused as an entry of the wrong type
        except OSError:
            continue
        if os.access(directory, os.W_OK | os.X_OK):
            continue
        try:
            read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        how = "it is on a read-only file system" if read_only else "you may not write to it"
        return f"{directory} cannot be written ({how})"
    return None


def install_problem(layout: InstallLayout) -> tuple[str, str] | None:
    """What makes an owned install directory unsafe to write, and its fix; None if nothing.

    Reads only, never following a link under the directory.
    """
    root = layout.root
    try:
        mode = root.stat().st_mode
    except OSError as error:
        return f"{root} cannot be examined ({error.strerror})", "check that path"
    if mode & _WRITABLE_BY_OTHERS:
        return _writable(root, root, mode)
    for name, wanted, holds in _ENTRIES:
        entry = root / name
        try:
            mode = entry.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError as error:
            return f"{entry} cannot be examined ({error.strerror})", "check that path"
        if not wanted(mode):
            found = describe(mode)
            return (
                f"{entry} is {found}, where this installer keeps {holds}",
                f"move {shlex.quote(os.fspath(entry))} out of the way",
            )
        if stat.S_ISDIR(mode) and mode & _WRITABLE_BY_OTHERS:
            return _writable(root, entry, mode)
    return _writable_environment(layout)


def _writable_environment(layout: InstallLayout) -> tuple[str, str] | None:
    """The problem with an environment `current` or `previous` runs that others can write."""
    for link, env in (
        (CURRENT_NAME, current_environment(layout)),
        (PREVIOUS_NAME, previous_environment(layout)),
    ):
        if env is None:
            continue
        try:
            mode = env.lstat().st_mode
        except OSError as error:
            return f"{env} cannot be examined ({error.strerror})", "check that path"
        if mode & _WRITABLE_BY_OTHERS:
            return _writable(layout.root, env, mode, f", the environment {link} points at,")
    return None


def check_install(layout: InstallLayout) -> None:
    """`install_problem` as an `InstallerError`, for the update."""
    problem = install_problem(layout)
    if problem is not None:
        reason, fix = problem
        raise InstallerError(f"{reason}; {fix} and try again.")


def _writable(root: Path, path: Path, mode: int, which: str = "") -> tuple[str, str]:
    """`path` (under `root`, or `root` itself) is writable by others; the fix is recursive:
    what made it so (a umask of 000, say) usually made everything below it so too."""
    return (
        (
            f"{path}{which} is writable by other users (mode {stat.S_IMODE(mode):04o}), so "
            "any of them could change what your client runs"
        ),
        f"fix it with `chmod -R go-w {shlex.quote(os.fspath(root))}`",
    )
