"""Whether an environment's interpreter can still run it.

An environment is made from the base interpreter of the Python that ran setup, and its
`bin/python` links to that interpreter. A Python upgrade that removes it (Homebrew moving
to a new minor version, `pyenv uninstall`) leaves the link dangling; one that puts another
minor version under the same name (a `python3` that is now 3.13) leaves an interpreter
that finds none of the environment's packages, kept under `lib/python3.12`. Either way
the registered command and the install's own `kinetis-docs` cannot start, and no code of
this package runs in them to say why: a command run from elsewhere (a clone's) says it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..children import run_captured, scrubbed_environment
from ..errors import InstallerError

# Starting an interpreter takes tens of milliseconds; a loaded machine may take seconds.
_START_TIMEOUT_SECONDS = 30.0
_VERSION = "import sys; print('%d.%d' % sys.version_info[:2])"


def interpreter_problem(env: Path) -> str | None:
    """Why `env`'s interpreter cannot run it (`its Python, X, is gone`); None when it can.

    Starts the interpreter, isolated, once it exists: only a run tells which Python a
    link such as `python3` leads to now.
    """
    python = env / "bin" / "python"
    shown = _shown(python)
    if not os.path.exists(python):  # noqa: PTH110 - follows the link, as exec does
        return f"its Python, {shown}, is gone"
    try:
        ran = run_captured(
            [os.fspath(python), "-I", "-c", _VERSION],
            env=scrubbed_environment(),
            timeout=_START_TIMEOUT_SECONDS,
        )
    except InstallerError:
        return f"its Python, {shown}, cannot be started"
    if ran.returncode != 0:
        return f"its Python, {shown}, exits with status {ran.returncode} at start"
    now = ran.stdout.strip()
    built = _built_with(env)
    if built is not None and now != built:
        return f"its Python, {shown}, is Python {now} now, not the {built} it was built with"
    return None


def _shown(python: Path) -> str:
    """The interpreter `python` leads to, as its link names it."""
    try:
        return os.readlink(python)  # noqa: PTH115 - a str, for a message
    except OSError:
        return os.fspath(python)


def _built_with(env: Path) -> str | None:
    """The Python version (`3.12`) `env` was made with, from its `pyvenv.cfg`."""
    try:
        text = (env / "pyvenv.cfg").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in {"version", "version_info"}:
            return ".".join(value.strip().split(".")[:2]) or None
    return None
