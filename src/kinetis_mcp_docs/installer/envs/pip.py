"""The one way the installer runs pip.

An argv list, never a shell; `--no-input` so a credential prompt can never hang a client's
spawn; `--disable-pip-version-check` so pip does no network of its own. pip's output goes
to stderr, because the updater runs while stdout carries protocol frames. The environment
keeps the user's pip configuration (`PIP_INDEX_URL`, `PIP_FIND_LINKS`, a private mirror's
certificate, ...) — that is how a mirror is used — but drops the variables that would send
the install somewhere other than the environment being built (`children.py`).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..children import run_bounded


@dataclass(frozen=True)
class PipRun:
    """How pip runs: the environment it is given, and where its output goes.

    `environ` None is this process's environment; an update gives pip the one its install's
    recorded package source makes of it (`package_source.py`). `summarize` keeps pip's
    output out of stderr, a failure then carrying pip's own line of why: a client start
    writes its update's failure as one line into the client's log, not pip's screenful.
    `scratch` is the temporary directory (`TMPDIR`) of pip and of the interpreters a build
    starts: the install directory's own, which the next install or update empties, so
    that a pip killed mid-download leaves nothing in the user's (`install_dir/scratch.py`).
    """

    environ: Mapping[str, str] | None = None
    summarize: bool = False
    scratch: Path | None = None

    def environment(self) -> Mapping[str, str]:
        """The environment pip and the build's other children run in."""
        environ = os.environ if self.environ is None else self.environ
        if self.scratch is None:
            return environ
        return {**environ, "TMPDIR": os.fspath(self.scratch)}


# What setup runs pip with: this process's environment, its output on stderr.
PLAIN = PipRun()


def run_pip(
    python: str | os.PathLike[str],
    arguments: Sequence[str],
    *,
    deadline: float | None,
    what: str,
    runner: str | None = None,
    how: PipRun = PLAIN,
) -> None:
    """Run `python -m pip <arguments>` to completion, or raise `InstallerError`.

    With `runner` (see `pip_runner`), `python` runs that copy of pip instead of its own.
    `what` names the operation in the error message ("install kinetis-mcp-docs").
    `deadline` is a `time.monotonic()` value; past it the whole process group is killed,
    including the interpreter `pip --python` starts for the target environment.
    """
    pip = ["-I", runner] if runner is not None else ["-m", "pip"]
    argv = [os.fspath(python), *pip, "--no-input", "--disable-pip-version-check", *arguments]
    run_bounded(
        argv,
        deadline=deadline,
        what=what,
        name="pip",
        hint=" (its output is above)",
        env=how.environment(),
        summarize=how.summarize,
    )


def pip_runner() -> str | None:
    """The running interpreter's pip as a script another interpreter can run, if it has one.

    `pip --python X` starts pip here only to run `X __pip-runner__.py ...`: pip's own
    script that executes exactly this copy of pip inside X's environment. Running that
    script directly does the same install without first starting pip here, which saves a
    third of a second on every install. None when pip is missing, older than the script
    (22.3, the same release as `--python`), or not a directory (a zipped pip).
    """
    spec = importlib.util.find_spec("pip")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = os.path.join(location, "__pip-runner__.py")  # noqa: PTH118 - a str argv
        if os.path.isfile(candidate):  # noqa: PTH113
            return candidate
    return None
