"""Byte-compile a new environment outside pip, without ever outliving it.

pip compiling every module it installs is half of an install's time, most of it for pip
itself. Setup and the update therefore install with `--no-compile` and byte-compile the new
environment in a process of their own (`compile_env.py`), which copies the bytecode of every
module identical to one beside the running interpreter and compiles the rest. Compiling is
an optimisation: a module left uncompiled is compiled on its first import, so a failure
here is no install failure.

A compile writes into the environment for seconds, and may outlive the process that
started it (a SIGKILLed setup, or by design after an update). So it runs holding the
environment (`built.hold`): the hold is taken before the compile starts and passed
to it with its descriptor, and lasts until its last worker exits. `prune` and `discard`
leave a held environment alone, so a compile can never re-create, as a directory of
bytecode, an environment a later run removed.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

from .. import children
from .built import hold
from .environment import Environment

# The compile's script (see its docstring): this release's own copy, run by path.
_SCRIPT = Path(__file__).resolve().with_name("compile_env.py")


def _compile_argv(environment: Environment) -> list[str]:
    # One worker, in the compile's own process. A pool (`-j0`) is a multiprocessing pool,
    # which on Python 3.12+ keeps a socket directory in the temporary directory that a
    # stopped compile (a failed verification) leaves behind, and whose socket path can
    # outgrow the AF_UNIX limit under a long TMPDIR. The compile overlaps the verification,
    # so the second core bought setup about 0.1 s of 2.7 (`nox -s bench -- --only setup`).
    python = os.fspath(environment.python)
    # The running interpreter's site-packages, resolved: on an update it is reached through
    # `current`, which the switch points at the new environment itself.
    donor = os.path.realpath(sysconfig.get_path("purelib"))
    lib = os.fspath(environment.path / "lib")
    return [python, "-I", os.fspath(_SCRIPT), "--reuse", donor, lib]


def _held(env: Path) -> int:
    fd = hold(env, wait=True)
    if fd is None:
        raise FileNotFoundError(f"{env} is not an environment directory")
    return fd


class BackgroundCompile:
    """Byte-compiles an environment in a child process while the caller goes on.

    For setup: the new environment is checked, verified and registered meanwhile, which
    wait mostly on other processes; setup waits for the compile before it returns.
    """

    def __init__(self, environment: Environment) -> None:
        self._env = environment.path
        fd = _held(self._env)
        try:
            self._process: subprocess.Popen[bytes] | None = children.start(
                _compile_argv(environment),
                env=children.scrubbed_environment(),
                pass_fds=[fd],
            )
        except OSError:
            self._process = None
        finally:
            os.close(fd)  # the child's copy keeps the hold

    def finish(self, *, timeout: float) -> None:
        """Wait up to `timeout` seconds for the compile to end; stop it past that."""
        if self._process is not None:
            children.wait(self._process, timeout)

    def stop(self) -> None:
        """End the compile now; return once none of its processes holds the environment."""
        if self._process is None:
            return
        children.stop(self._process)
        # It dies asynchronously: the hold is free once it has.
        fd = hold(self._env, wait=True)
        if fd is not None:
            os.close(fd)


def compile_detached(environment: Environment) -> None:
    """Byte-compile `environment` in a process that outlives this one; return once it has started.

    For the spawn-time update, which installs with `--no-compile` to stay well inside its
    deadline and then hands its process over to the new server: the compile must not be
    waited for, and must not become that server's child. One worker, so the client and
    the server starting beside it keep a core.
    """
    try:
        fd = _held(environment.path)
    except OSError:
        return
    try:
        children.detach(
            _compile_argv(environment),
            env=children.scrubbed_environment(),
            pass_fds=[fd],
        )
    finally:
        os.close(fd)
