"""Building a new environment under `envs/`: `venv`, then pip, bounded by a deadline.

The environment's interpreter is the base interpreter of the one running this (a venv made
from a venv points at the same base: see `base_interpreter`). A build that fails, or runs
past its deadline, leaves no partial environment behind.

Speed: a virtual environment is created without pip (a few milliseconds instead of the
seconds `ensurepip` costs) and filled by the pip of the running interpreter, run by the
new interpreter through pip's own `__pip-runner__.py` — what `pip --python <new
interpreter>` does (pip >= 22.3), without starting pip twice. pip is a runtime dependency
of this package, so the installed environment always has one to build its successor with.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ..children import run_bounded
from ..errors import InstallerError
from ..layout import DIRECTORY_MODE, InstallLayout
from .built import discard, new_name
from .environment import Environment
from .metadata import DISTRIBUTION
from .pip import PLAIN, PipRun, pip_runner, run_pip

# `pip --python` appeared in pip 22.3.
PIP_WITH_PYTHON_OPTION = (22, 3)


@dataclass(frozen=True)
class Interpreter:
    """What this process builds an environment with: the interpreter it is made from
    (`base_interpreter`), and whether the running pip fills it (`own_pip`) or the pip
    `ensurepip` puts into it must."""

    base: Path
    own_pip: bool


def probe_interpreter() -> Interpreter:
    """This process's `Interpreter`, found now: setup probes it among its prerequisites and
    builds with what it found."""
    return Interpreter(base_interpreter(), running_pip_supports_python_option())


def build_environment(
    layout: InstallLayout,
    requirement_args: list[str],
    *,
    deadline: float | None,
    pip: PipRun = PLAIN,
    interpreter: Interpreter | None = None,
) -> Path:
    """Create a new environment under `layout.envs` and pip-install `requirement_args`.

    `requirement_args` are pip install arguments: `["-r", str(layout.requirements)]`, or
    pinned `"name==version"` strings. pip runs as `pip` says (its output to stderr, by
    default). The environment is made with `interpreter`, probed here when not given. On
    any failure, or past `deadline` (a `time.monotonic()` value), the partial environment
    is removed and `InstallerError` raised.
    """
    _make_envs(layout)
    env = layout.envs / new_name()
    try:
        _create_and_install(
            Environment(layout, env),
            requirement_args,
            deadline=deadline,
            pip=pip,
            interpreter=interpreter or probe_interpreter(),
        )
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
    environment: Environment,
    requirement_args: list[str],
    *,
    deadline: float | None,
    pip: PipRun,
    interpreter: Interpreter,
) -> None:
    own_pip = interpreter.own_pip
    # `--without-pip` skips ensurepip, which costs seconds and is missing from some
    # distribution Pythons; the pip of this interpreter fills the environment instead.
    create = [os.fspath(interpreter.base), "-I", "-m", "venv", "--symlinks"]
    if own_pip:
        create.append("--without-pip")
    # ensurepip, when it runs, unpacks pip in the temporary directory pip's own runs use.
    _run_venv([*create, os.fspath(environment.path)], environment.path, deadline=deadline, pip=pip)
    install = ["install", *requirement_args]
    target = environment.python
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


def _run_venv(argv: list[str], env: Path, *, deadline: float | None, pip: PipRun) -> None:
    run_bounded(
        argv,
        deadline=deadline,
        env=pip.environment(),
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
