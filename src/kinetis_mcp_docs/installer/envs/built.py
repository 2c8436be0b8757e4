"""The environments this installer built: how they are named, held and discarded.

Nothing under the install directory is followed through a symlink, and only a directory
this installer can prove it built is ever removed: a real directory named as `new_name`
names them, and not held by a byte-compile still writing into it (`hold`). Whatever else
is under `envs/` is left alone. Every function here that removes must run under the update
lock, or it could remove an environment another process is still building.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from ..layout import InstallLayout

# What `new_name` makes: sortable by creation time for a human reading the directory, with
# a random part that keeps two builds in the same second apart.
_ENVIRONMENT_NAME = re.compile(r"\d{8}T\d{6}-[0-9a-f]{8}")


def new_name() -> str:
    """A fresh name for an environment under `envs/`."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"


def named_as_built(name: str) -> bool:
    """Whether `name` is named as `new_name` names the environments this installer builds."""
    return _ENVIRONMENT_NAME.fullmatch(name) is not None


def discard_environments(
    layout: InstallLayout, *, keep: set[str] | frozenset[str] = frozenset()
) -> None:
    """`discard` every environment under `envs/` this installer built, but those in `keep`.

    Only a real directory named as `new_name` names environments is a candidate; one a
    byte-compile holds stays (see `discard`). Must run under the update lock.
    """
    for name in listing(layout.envs):
        if name not in keep and named_as_built(name):
            discard(layout.envs / name)


def listing(directory: Path) -> list[str]:
    """The names in `directory`, or none when it is missing or not a real directory."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        return os.listdir(fd)  # noqa: PTH208 - the descriptor opened without following
    finally:
        os.close(fd)


def discard(env: Path) -> bool:
    """Remove an environment (or a partial one) entirely; whether it is gone.

    Only a real directory is removed, and only when no byte-compile holds it: one that
    is still writing into it would leave a directory of bytecode behind.
    """
    held = hold(env, wait=False)
    if held is None:
        return not os.path.lexists(env)
    try:
        shutil.rmtree(env, ignore_errors=True)
    finally:
        os.close(held)
    return not os.path.lexists(env)


def hold(env: Path, *, wait: bool) -> int | None:
    """An exclusive hold on the environment directory `env`, as an open descriptor.

    The hold lasts while any process keeps that descriptor (or a copy of it) open: a
    byte-compile receives it when it starts and keeps it until its last worker exits.
    `wait=False` gives None at once when someone else holds it; None also when `env` is
    not a real directory. An `flock` on the directory itself, rather than through the
    filelock package, because it must pass to a child process with its descriptor.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(env, flags)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd
