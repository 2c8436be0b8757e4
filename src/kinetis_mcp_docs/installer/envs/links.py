"""`current` and `previous`: which environment serves, and the switch to another.

The registered command runs `DIR/current/bin/python`, so switching `current` is the whole
update and a spawn never sees a half-built environment. Each link is replaced by one
`rename(2)` of a freshly made symlink, so a reader sees the old link or the new one, never
none. A link counts as the relative `envs/<name>` the switch writes, or as the same
environment named absolute (`DIR/envs/<name>`, as `ln -s "$PWD/envs/..."` or a backup tool
may remake it), to a real directory: it is read, never followed. Any other target counts as
no environment. Whatever writes here must run under the update lock.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from ..layout import InstallLayout
from .built import discard_environments, listing


def switch_to(layout: InstallLayout, env: Path) -> None:
    """Make `env` the one that serves, keep the one before as `previous`, prune the rest.

    Links are relative (`envs/<name>`), so the whole directory can be moved. Must run under
    the update lock.
    """
    env = Path(env)
    if env.parent != layout.envs:
        raise ValueError(f"{env} is not an environment of {layout.root}")
    old = current_environment(layout)
    _replace_link(layout.current, env)
    if old is not None and old.name != env.name:
        _replace_link(layout.previous, old)
    _fsync_directory(layout.root)
    prune(layout)


def _replace_link(link: Path, env: Path) -> None:
    target = Path(env.parent.name, env.name)
    temporary = link.with_name(f"{link.name}.tmp-{secrets.token_hex(4)}")
    temporary.symlink_to(target)
    try:
        temporary.replace(link)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _fsync_directory(path: Path) -> None:
    # The renames are atomic either way; this makes them durable across a power loss.
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def current_environment(layout: InstallLayout) -> Path | None:
    """The environment `current` points at, or None when there is none (yet)."""
    return _link_target(layout, layout.current)


def previous_environment(layout: InstallLayout) -> Path | None:
    """The environment `previous` points at, or None."""
    return _link_target(layout, layout.previous)


def _link_target(layout: InstallLayout, link: Path) -> Path | None:
    try:
        target = link.readlink()  # a link is read, never followed; anything else fails
    except OSError:
        return None
    name = _environment_name(layout, target)
    if name is None:
        return None
    env = layout.envs / name
    return env if _is_real_directory(env) else None


def _environment_name(layout: InstallLayout, target: Path) -> str | None:
    """The name in `envs` a link's target names, or None when it names anything else.

    The relative `envs/<name>` that `switch_to` writes; or the same written absolute, through
    the install directory as it is named or as it resolves (a home reached through a link):
    a link a user or a tool remade absolute still names this install's environment, which
    an update must keep as `previous`, never prune. Compared as text, never followed.
    """
    parts = target.parts
    if target.is_absolute():
        # Not normalised: `..` after a link in the path would lead elsewhere.
        if target.parent not in {layout.envs, Path(os.path.realpath(layout.envs))}:
            return None
        parts = (layout.envs.name, target.name)
    if len(parts) != 2 or parts[0] != layout.envs.name or parts[1] in {"", ".", ".."}:
        return None
    return parts[1]


def _is_real_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def prune(layout: InstallLayout) -> None:
    """Remove the environments that are neither `current` nor `previous`, and stale links.

    What a killed build or switch left behind goes here, as far as `built` may remove it;
    best effort: what cannot be removed now is removed by a later prune. Must run under
    the update lock, or it could remove an environment another process is still building.
    """
    keep = {
        env.name
        for env in (current_environment(layout), previous_environment(layout))
        if env is not None
    }
    discard_environments(layout, keep=keep)
    stale = (f"{layout.current.name}.tmp-", f"{layout.previous.name}.tmp-")
    for name in listing(layout.root):
        entry = layout.root / name
        if name.startswith(stale) and entry.is_symlink():
            entry.unlink(missing_ok=True)  # removes the link itself, never its target
