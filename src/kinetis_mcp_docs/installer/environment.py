"""The virtual environments of an install directory: build, link, prune, discard.

Shared by `setup` and the spawn-time updater through `candidate.py`, so both take one
path: build a new environment beside the installed one, check it, switch `current` to it
with one atomic rename. The environment that serves is never modified, so a process
killed at any instant leaves a working install (see `layout.py` for the paths).

Every function here that writes must run under the update lock. Nothing under the install
directory is followed through a symlink: `current` and `previous` count only as links of
the form `envs/<name>` to a real directory, `envs` itself only as a real directory, and
`prune` removes only directories it can prove are environments it built — named as
`new_name` names them, and not held by a byte-compile still writing into them (`hold`).

Speed: a virtual environment is created without pip (a few milliseconds instead of the
seconds `ensurepip` costs) and filled by the pip of the running interpreter, run by the
new interpreter through pip's own `__pip-runner__.py` — what `pip --python <new
interpreter>` does (pip >= 22.3), without starting pip twice. pip is a runtime dependency
of this package, so the installed environment always has one to build its successor with.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import importlib.util
import os
import re
import secrets
import shutil
import stat
import sys
import time
from pathlib import Path

from kinetis_mcp_docs.installer.children import run_bounded
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import DIRECTORY_MODE, InstallLayout
from kinetis_mcp_docs.installer.pip import PLAIN, PipRun, pip_runner, run_pip

# `pip --python` appeared in pip 22.3.
PIP_WITH_PYTHON_OPTION = (22, 3)
# The offline check starts an interpreter and imports the server: seconds, not more.
DISTRIBUTION = "kinetis-mcp-docs"
_SEPARATORS = re.compile(r"[-_.]+")
# What `new_name` makes: sortable by creation time for a human reading the directory, with
# a random part that keeps two builds in the same second apart.
_ENVIRONMENT_NAME = re.compile(r"\d{8}T\d{6}-[0-9a-f]{8}")


def build_environment(
    layout: InstallLayout,
    requirement_args: list[str],
    *,
    deadline: float | None,
    pip: PipRun = PLAIN,
) -> Path:
    """Create a new environment under `layout.envs` and pip-install `requirement_args`.

    `requirement_args` are pip install arguments: `["-r", str(layout.requirements)]`, or
    pinned `"name==version"` strings. The environment's interpreter is the base interpreter
    of the one running this (a venv made from a venv points at the same base). pip runs as
    `pip` says (its output to stderr, by default). On any failure, or past `deadline` (a
    `time.monotonic()` value), the partial environment is removed and `InstallerError`
    raised.
    """
    _make_envs(layout)
    env = layout.envs / new_name()
    try:
        _create_and_install(layout, env, requirement_args, deadline=deadline, pip=pip)
    except BaseException:
        discard(env)
        raise
    return env


def _make_envs(layout: InstallLayout) -> None:
    try:
        layout.envs.mkdir(mode=DIRECTORY_MODE)
    except FileExistsError:
        pass
    except OSError as error:
        raise InstallerError(f"Could not create {layout.envs} ({error.strerror}).") from error
    # `mkdir` found something there: only a real directory will do, never a link to one.
    if not stat.S_ISDIR(os.lstat(layout.envs).st_mode):
        raise InstallerError(f"{layout.envs} is not a directory this installer made.")


def _create_and_install(
    layout: InstallLayout,
    env: Path,
    requirement_args: list[str],
    *,
    deadline: float | None,
    pip: PipRun,
) -> None:
    own_pip = running_pip_supports_python_option()
    base = base_interpreter()
    # `--without-pip` skips ensurepip, which costs seconds and is missing from some
    # distribution Pythons; the pip of this interpreter fills the environment instead.
    create = [os.fspath(base), "-I", "-m", "venv", "--symlinks"]
    if own_pip:
        create.append("--without-pip")
    _run_venv([*create, os.fspath(env)], env, deadline=deadline)
    install = ["install", *requirement_args]
    target = layout.python(env)
    what = f"install {DISTRIBUTION}"
    runner = pip_runner() if own_pip else None
    if runner is not None:
        # What `pip --python` would run, minus pip's own start-up in this process.
        run_pip(target, install, deadline=deadline, what=what, runner=runner, how=pip)
    elif own_pip:
        run_pip(
            sys.executable,
            ["--python", os.fspath(target), *install],
            deadline=deadline,
            what=what,
            how=pip,
        )
    else:
        run_pip(target, install, deadline=deadline, what=what, how=pip)


def _run_venv(argv: list[str], env: Path, *, deadline: float | None) -> None:
    run_bounded(
        argv,
        deadline=deadline,
        what=f"create a Python environment in {env}",
        name="venv",
        hint=(
            ". Install your Python's venv support (on Debian and Ubuntu: the python3-venv"
            " package) and run setup again"
        ),
    )


def base_interpreter() -> Path:
    """The interpreter new environments are made from: this one's base, never a venv's.

    Making an environment from a venv's interpreter would tie it to that venv (a `pipx run`
    cache, say) and break when it goes. Worse, the updater runs inside an environment it
    reached through the `current` link: an environment made from `current/bin/python`
    would point back at `current` and, once switched in, at itself. So inside a venv the
    base prefix is searched, whatever `sys._base_executable` says (Python 3.10 reports the
    venv's own interpreter there, as the path it was started by).
    """
    base = Path(getattr(sys, "_base_executable", "") or sys.executable)
    if sys.prefix != sys.base_prefix:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        for name in (f"python{version}", "python3", "python"):
            candidate = Path(sys.base_exec_prefix) / "bin" / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
        return Path(os.path.realpath(base))
    return base


def running_pip_supports_python_option() -> bool:
    """Whether this interpreter has a pip that can install into another one."""
    if importlib.util.find_spec("pip") is None:
        return False
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    return _version_tuple(version) >= PIP_WITH_PYTHON_OPTION


def _version_tuple(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in version.split(".")[:2]:
        digits = "".join(character for character in piece if character.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def new_name() -> str:
    """A fresh name for an environment under `envs/`."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"


def switch_to(layout: InstallLayout, env: Path) -> None:
    """Make `env` the one that serves, keep the one before as `previous`, prune the rest.

    Each link is replaced by one `rename(2)` of a freshly made symlink, so a reader sees the
    old link or the new one, never none. Links are relative (`envs/<name>`), so the whole
    directory can be moved. Must run under the update lock.
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
    parts = target.parts
    # Only the relative `envs/<name>` that `switch_to` writes counts.
    if len(parts) != 2 or parts[0] != layout.envs.name or parts[1] in {".", ".."}:
        return None
    env = layout.envs / parts[1]
    return env if _is_real_directory(env) else None


def _is_real_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def prune(layout: InstallLayout) -> None:
    """Remove the environments that are neither `current` nor `previous`, and stale links.

    What a killed build or switch left behind goes here. Only a real directory named as
    `new_name` names environments is removed, and only when no byte-compile holds it
    (`hold`); anything else under `envs/` is left alone. Best effort: what cannot be
    removed now is removed by a later prune. Must run under the update lock, or it could
    remove an environment another process is still building.
    """
    keep = {
        env.name
        for env in (current_environment(layout), previous_environment(layout))
        if env is not None
    }
    discard_environments(layout, keep=keep)
    stale = (f"{layout.current.name}.tmp-", f"{layout.previous.name}.tmp-")
    for name in _listing(layout.root):
        entry = layout.root / name
        if name.startswith(stale) and entry.is_symlink():
            entry.unlink(missing_ok=True)  # removes the link itself, never its target


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
    for name in _listing(layout.envs):
        if name not in keep and _ENVIRONMENT_NAME.fullmatch(name):
            discard(layout.envs / name)


def _listing(directory: Path) -> list[str]:
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


def installed_version(layout: InstallLayout) -> str | None:
    """The kinetis-mcp-docs version in `current`, read from its metadata; no process started."""
    env = current_environment(layout)
    if env is None:
        return None
    return environment_version(env)


def environment_version(env: Path) -> str | None:
    """The kinetis-mcp-docs version installed in `env`, from its metadata."""
    return installed_distributions(env).get(DISTRIBUTION)


def installed_distributions(env: Path) -> dict[str, str]:
    """Every distribution installed in `env`: canonical name -> version, from its metadata."""
    paths = [os.fspath(path) for path in sorted(env.glob("lib/python*/site-packages"))]
    return {
        canonical_name(distribution.metadata["Name"] or ""): distribution.version
        for distribution in importlib.metadata.distributions(path=paths)
    }


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return _SEPARATORS.sub("-", name).lower()
