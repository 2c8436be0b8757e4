"""Build, check and switch the virtual environments of an install directory.

Shared by `setup` and the spawn-time updater, so both take one path: build a new
environment beside the installed one, check that its server answers, switch `current` to
it with one atomic rename. The environment that serves is never modified, so a process
killed at any instant leaves a working install (see `layout.py` for the paths).

Every function here except `check_environment` writes to the install directory and must
run under the update lock.

Speed: a virtual environment is created without pip (a few milliseconds instead of the
seconds `ensurepip` costs) and filled by the pip of the running interpreter, run by the
new interpreter through pip's own `__pip-runner__.py` — what `pip --python <new
interpreter>` does (pip >= 22.3), without starting pip twice. pip is a runtime dependency
of this package, so the installed environment always has one to build its successor with.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.exchange import exchange
from kinetis_mcp_docs.installer.layout import SERVER_MODULE, InstallLayout
from kinetis_mcp_docs.installer.pip import (
    kill_group,
    pip_runner,
    remaining,
    run_bounded,
    run_pip,
    scrubbed_environment,
)
from kinetis_mcp_docs.server.methods import PROTOCOL_VERSION

# `pip --python` appeared in pip 22.3.
PIP_WITH_PYTHON_OPTION = (22, 3)
# The offline check starts an interpreter and imports the server: seconds, not more.
CHECK_TIMEOUT_SECONDS = 20.0
DISTRIBUTION = "kinetis-mcp-docs"
_SEPARATORS = re.compile(r"[-_.]+")


def build_environment(
    layout: InstallLayout, requirement_args: list[str], *, deadline: float | None
) -> Path:
    """Create a new environment under `layout.envs` and pip-install `requirement_args`.

    `requirement_args` are pip install arguments: `["-r", str(layout.requirements)]`, or
    pinned `"name==version"` strings. The environment's interpreter is the base interpreter
    of the one running this (a venv made from a venv points at the same base). pip's output
    goes to stderr. On any failure, or past `deadline` (a `time.monotonic()` value), the
    partial environment is removed and `InstallerError` raised.
    """
    layout.envs.mkdir(parents=True, exist_ok=True)
    env = layout.envs / _unique_name()
    try:
        _create_and_install(layout, env, requirement_args, deadline=deadline)
    except BaseException:
        discard(env)
        raise
    return env


def _compile_argv(layout: InstallLayout, env: Path, *, workers: int) -> list[str]:
    # `-j0` is one worker per core.
    python = os.fspath(layout.python(env))
    return [python, "-I", "-m", "compileall", "-q", f"-j{workers}", os.fspath(env / "lib")]


class BackgroundCompile:
    """Byte-compiles an environment in a child process while the caller goes on.

    pip compiling every module it installs is half of a first install's time, most of it
    for pip itself. Setup installs with `--no-compile` and has this child do the same work
    while the new environment is checked, verified and registered, which wait mostly on
    other processes. Compiling is an optimisation: a module left uncompiled is compiled on
    its first import, so a failure here is not an install failure.
    """

    def __init__(self, layout: InstallLayout, env: Path) -> None:
        self._process = subprocess.Popen(
            # Every core: the compile is most of setup's critical path.
            _compile_argv(layout, env, workers=0),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=scrubbed_environment(),
            start_new_session=True,
        )

    def finish(self, *, timeout: float) -> None:
        """Wait up to `timeout` seconds for the compile to end; stop it past that."""
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()

    def stop(self) -> None:
        """End the compile now, as before the environment it writes into is removed."""
        kill_group(self._process)


# Starts its argv in a session of its own, with no stdio, and exits: the started process is
# then nobody's child but init's, so no server that outlives it is left with a zombie.
_DETACH = (
    "import subprocess, sys; subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)"
)
_DETACH_TIMEOUT_SECONDS = 10.0


def compile_detached(layout: InstallLayout, env: Path) -> None:
    """Byte-compile `env` in a process that outlives this one; return once it has started.

    For the spawn-time update, which installs with `--no-compile` to stay well inside its
    deadline and then hands its process over to the new server: the compile must not be
    waited for, and must not become that server's child. One worker, so the client and
    the server starting beside it keep a core. Best effort, like `BackgroundCompile`.
    """
    python = os.fspath(layout.python(env))
    # Uncompiled modules are compiled as they are first imported: a failure costs nothing.
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [python, "-I", "-c", _DETACH, *_compile_argv(layout, env, workers=1)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=scrubbed_environment(),
            timeout=_DETACH_TIMEOUT_SECONDS,
            check=False,
        )


def _create_and_install(
    layout: InstallLayout, env: Path, requirement_args: list[str], *, deadline: float | None
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
        run_pip(target, install, deadline=deadline, what=what, runner=runner)
    elif own_pip:
        run_pip(
            sys.executable,
            ["--python", os.fspath(target), *install],
            deadline=deadline,
            what=what,
        )
    else:
        run_pip(target, install, deadline=deadline, what=what)


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


def _unique_name() -> str:
    # Sortable by creation time for a human reading the directory; the random part makes a
    # name unique even when two builds start in the same second.
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"


def check_environment(layout: InstallLayout, env: Path, *, deadline: float | None) -> str:
    """Start `env`'s server offline, ask `initialize` and `resources/list`; return its version.

    No page is read, so this needs no network. Raises `InstallerError` when the server does
    not start, does not answer both, or answers without a version or a catalogue.
    """
    left = remaining(deadline)
    timeout = CHECK_TIMEOUT_SECONDS if left is None else min(left, CHECK_TIMEOUT_SECONDS)
    if timeout <= 0:
        raise InstallerError("Could not check the new environment: the deadline passed.")
    argv = [os.fspath(layout.python(env)), "-I", "-m", SERVER_MODULE]
    transcript = exchange(
        argv,
        [initialize_request(1), {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}],
        env=scrubbed_environment(),
        timeout=timeout,
        cwd=layout.root,
    )
    initialize = transcript.response(1)
    listing = transcript.response(2)
    version = _server_version(initialize)
    resources = (listing or {}).get("result", {}).get("resources") if listing else None
    if version is None or not isinstance(resources, list) or not resources:
        reason = (
            transcript.start_error
            or ("it did not answer in time" if transcript.timed_out else "")
            or "it did not answer initialize and resources/list"
        )
        raise InstallerError(
            f"The new environment's server failed its check: {reason}."
            + (f"\nIts stderr:\n{transcript.stderr.rstrip()}" if transcript.stderr.strip() else "")
        )
    return version


def initialize_request(request_id: int) -> dict[str, object]:
    """An `initialize` request as a client sends it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "kinetis-docs-installer", "version": "1"},
        },
    }


def _server_version(frame: dict[str, object] | None) -> str | None:
    result = frame.get("result") if frame else None
    info = result.get("serverInfo") if isinstance(result, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else None


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
        target = link.readlink()
    except OSError:
        return None
    env = layout.root / target
    # Only a link into envs/ counts; anything else was not written by us.
    if env.parent != layout.envs or not env.is_dir():
        return None
    return env


def prune(layout: InstallLayout) -> None:
    """Remove every environment but `current` and `previous`, and stale temporary links.

    What a killed build or switch left behind goes here. Must run under the update lock,
    or it could remove an environment another process is still building.
    """
    keep = {
        env.name
        for env in (current_environment(layout), previous_environment(layout))
        if env is not None
    }
    if layout.envs.is_dir():
        for entry in layout.envs.iterdir():
            if entry.name not in keep:
                discard(entry)
    for entry in layout.root.iterdir():
        if entry.is_symlink() and (
            entry.name.startswith(f"{layout.current.name}.tmp-")
            or entry.name.startswith(f"{layout.previous.name}.tmp-")
        ):
            entry.unlink(missing_ok=True)


def discard(env: Path) -> None:
    """Remove an environment (or a partial one) entirely; a missing one is fine."""
    if env.is_symlink() or env.is_file():
        env.unlink(missing_ok=True)
    elif env.exists():
        shutil.rmtree(env, ignore_errors=True)


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
