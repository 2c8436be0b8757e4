"""Build → check → switch: the one way a new environment comes to serve.

Setup and the daily update both write

    with candidate(layout, pip_arguments, deadline=...) as new:
        version = new.check(deadline=..., expected=...)
        new.switch()

The environment is built on entry. The block checks it, then switches `current` to it
(the one before becomes `previous`, older ones are pruned), and may go on with it serving:
setup verifies and registers it there. Leaving the block with any exception — a failed
check, the deadline, Ctrl-C — discards the new environment unless the block had switched
to it, and so does leaving it without having switched: the environment that served before
still serves. Must run under the update lock up to the switch; what follows it needs none.

pip installs with `--no-compile`, which was half of its time; the new environment is
byte-compiled by a process of its own (`bytecode.py`). Given `compile_wait` (setup), the
compile runs beside the block from the build on, and leaving the block waits up to that
many seconds for it (an exception stops it instead): nothing of it outlives the block.
Without (the update, whose spawn then becomes the new server), it starts after the switch,
detached.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..children import remaining, scrubbed_environment
from ..errors import InstallerError
from ..layout import SERVER_MODULE, START_MODULE, InstallLayout
from ..server_check.verification import OFFLINE_CHECK, run_exchange
from .build import Interpreter, build_environment
from .built import discard
from .bytecode import BackgroundCompile, compile_detached
from .environment import Environment
from .links import switch_to
from .pip import PLAIN, PipRun

# The offline check starts an interpreter and imports the server: seconds, not more.
CHECK_TIMEOUT_SECONDS = 20.0
# What a client spawn runs before its first frame: the registered entry and every module
# it imports, on either of its paths — inside the update window, and with an update due
# (the update's own modules) — then the server it hands over to after an update.
SPAWN_MODULES = (
    START_MODULE,
    "kinetis_mcp_docs.installer.layout",
    "kinetis_mcp_docs.installer.update",
)
# The check runs all of that in one interpreter of the new environment: each of those
# modules imported, then the server run as `python -m` runs it. The entry is imported, not
# run: run, it would find the update due (nothing is recorded before the switch) and wait
# for the lock the caller holds.
SPAWN_CHECK = "".join(f"import {module}\n" for module in SPAWN_MODULES) + (
    f"import runpy\nrunpy.run_module({SERVER_MODULE!r}, run_name='__main__', alter_sys=True)\n"
)
# The bound on a build a user asked for (setup, `kinetis-docs update`): a first install
# downloads a handful of wheels; past this something is wrong.
MANUAL_DEADLINE_SECONDS = 600.0


class Candidate:
    """A new environment, built beside the one that serves, until the block switches to it."""

    def __init__(
        self, layout: InstallLayout, env: Path, compiling: BackgroundCompile | None = None
    ) -> None:
        self.environment = Environment(layout, env)
        self._compiling = compiling
        self.switched = False

    def check(self, *, deadline: float | None, expected: str | None = None) -> str:
        """Run what a client spawn of it runs, offline, as strictly as setup verifies;
        return its version.

        `SPAWN_CHECK`: every module of the spawn entry's paths imported, then its server.
        `initialize` and `resources/list` must each get one answer, nothing else may reach
        stdout, and the process must exit 0 when its input ends. With `expected`, the
        version it reports must be that one. Raises `InstallerError` otherwise.
        """
        left = remaining(deadline)
        timeout = CHECK_TIMEOUT_SECONDS if left is None else min(left, CHECK_TIMEOUT_SECONDS)
        if timeout <= 0:
            raise InstallerError("Could not check the new environment: the deadline passed.")
        version = run_exchange(
            self.check_argv(),
            scrubbed_environment(),
            OFFLINE_CHECK,
            timeout=timeout,
            cwd=self.environment.layout.root,
            failure="The new environment's server failed its check",
        )
        if expected is not None and version != expected:
            raise InstallerError(
                f"The new environment's server reports version {version}, not {expected}."
            )
        return version

    def check_argv(self) -> list[str]:
        """The command `check` runs: the new environment's interpreter on `SPAWN_CHECK`."""
        return [os.fspath(self.environment.python), "-I", "-c", SPAWN_CHECK]

    def switch(self) -> None:
        """Make it the environment that serves (`links.switch_to`). Under the update lock."""
        switch_to(self.environment.layout, self.environment.path)
        self.switched = True

    def _finish(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the byte-compile beside it; stop it past that."""
        if self._compiling is not None:
            self._compiling.finish(timeout=timeout)

    def _stop(self) -> None:
        """Stop the byte-compile beside it now (before its environment may be removed)."""
        if self._compiling is not None:
            self._compiling.stop()


@contextmanager
def candidate(
    layout: InstallLayout,
    pip_arguments: Sequence[str],
    *,
    deadline: float | None,
    compile_wait: float | None = None,
    pip: PipRun = PLAIN,
    interpreter: Interpreter | None = None,
) -> Iterator[Candidate]:
    """Build a new environment from `pip install --no-compile <pip_arguments>`; see above.

    pip runs as `pip` says: in this process's environment by default. `deadline` is a
    `time.monotonic()` value bounding the build (and, through `Candidate.check`, the check).
    With `compile_wait`, the byte-compile runs beside the block and leaving it waits up to
    that many seconds for it; otherwise it starts detached once the block has switched.
    `interpreter` is what the build makes the environment with (`build_environment`).
    """
    env = build_environment(
        layout,
        ["--no-compile", *pip_arguments],
        deadline=deadline,
        pip=pip,
        interpreter=interpreter,
    )
    new = Candidate(layout, env)
    try:
        if compile_wait is not None:
            new = Candidate(layout, env, BackgroundCompile(new.environment))
        yield new
    except BaseException:
        new._stop()
        if not new.switched:
            discard(env)
        raise
    if not new.switched:
        new._stop()
        discard(env)
    elif compile_wait is not None:
        new._finish(compile_wait)
    else:
        compile_detached(new.environment)
