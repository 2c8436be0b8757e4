"""Every process the installer starts, under one kill policy: the whole process group.

A child always starts in a session of its own, so it and everything it starts (`pip
--python` starts a second interpreter, a client CLI the server it checks) form one process
group. Stopping a child kills that whole group with SIGKILL and reaps the child: nothing
it started is left writing behind us. A child is stopped when its time runs out and on any
interruption (Ctrl-C included, and SIGTERM or SIGHUP in a command that writes: see
`terminations_raised`).

Children never write to our stdout, which may carry protocol frames: their output goes to
our stderr, to a pipe we read, or nowhere. They run with a umask of at least 022, so what
they create (a new environment and every file pip writes into it) is never writable by
other users, whatever the umask of the shell that started us.

`detach` is the one exception to "stopped with us": a byte-compile that must outlive the
spawn that started it, which then becomes the server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from .errors import InstallerError, Terminated

# Variables that load foreign code into the interpreters involved.
SCRUBBED_VARIABLES = frozenset({"PYTHONPATH", "PYTHONHOME"})
# pip options whose PIP_<OPTION> variable (pip reads the name in any case, `_` for `-`)
# would send an install somewhere other than the target environment (`python` would re-aim
# `--python` itself), leave it without its dependencies or without anything installed at
# all (a dry run), or add packages of the user's to it. An environment so made fails its
# check with a ModuleNotFoundError that names none of them.
SCRUBBED_PIP_OPTIONS = frozenset(
    {
        "target",
        "prefix",
        "root",
        "user",
        "require-virtualenv",
        "python",
        "no-deps",
        "no-dependencies",
        "dry-run",
        "requirement",
        "editable",
    }
)
# The same options as a pip configuration file (`pip.conf`, `user = true` being the common
# one) may set them, out of reach of the variables above: a variable overrides every file,
# so each is also given a value that undoes it. pip ignores an empty value, and splits a
# list option's value on blanks, so a blank is an empty list. The options that take a path
# have no value that means none and stay a file's to set.
NEUTRAL_PIP_VARIABLES = {
    "PIP_USER": "0",
    "PIP_NO_DEPS": "0",
    "PIP_DRY_RUN": "0",
    "PIP_REQUIREMENT": " ",
    "PIP_EDITABLE": " ",
}
# Group and others may read and run what a child creates, never write it.
_PRIVATE_WRITE_MASK = 0o022
# How much of a failed child's kept output is read for the line that says why.
_REASON_BYTES = 64 * 1024
# How long the helper behind `detach` may take to start the detached process and exit.
_DETACH_TIMEOUT_SECONDS = 10.0

# Starts its argv in a session of its own, with no stdio, keeping the descriptors named
# after `--`, and exits: the started process is then nobody's child but init's, so no
# server that outlives it is left with a zombie.
_DETACH = (
    "import subprocess, sys; split = sys.argv.index('--'); "
    "subprocess.Popen(sys.argv[split + 1:], stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, "
    "pass_fds=[int(fd) for fd in sys.argv[1:split]])"
)


def scrubbed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `environ` (default: this process's) without the redirecting variables,
    and with the pip options a configuration file could set against an install undone."""
    source = os.environ if environ is None else environ
    kept = {key: value for key, value in source.items() if not _scrubbed(key)}
    kept.update(NEUTRAL_PIP_VARIABLES)
    return kept


def _scrubbed(name: str) -> bool:
    """Whether the variable `name` is kept from the installer's children."""
    if name in SCRUBBED_VARIABLES:
        return True
    option = name[len("PIP_") :].lower().replace("_", "-")
    return name.startswith("PIP_") and option in SCRUBBED_PIP_OPTIONS


def stderr_fd() -> int:
    """The descriptor children write their output to: ours for stderr, whatever wraps it."""
    try:
        sys.stderr.flush()
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def child_umask() -> int:
    """This process's umask, tightened so that group and others cannot write."""
    # Reading the umask means setting it: put it straight back.
    current = os.umask(_PRIVATE_WRITE_MASK)
    os.umask(current)
    return current | _PRIVATE_WRITE_MASK


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.DEVNULL,
    stderr: int | None = subprocess.DEVNULL,
    cwd: str | os.PathLike[str] | None = None,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start `argv` in a session of its own; `stop` ends it and everything it started.

    A Ctrl-C that comes while the child starts is held until `Popen` has returned it, then
    stops it and is raised: otherwise it would interrupt `Popen` after the fork, leaving a
    child running that nobody knows of (a `venv` writing into a directory being rolled
    back, say). Raises `OSError` when the program cannot be started.
    """
    with _interrupts_held() as interrupted:
        process = subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            umask=child_umask(),
        )
    if interrupted:
        stop(process)
        number = interrupted[0]
        raise KeyboardInterrupt if number == signal.SIGINT else Terminated(number)
    return process


def start_piped(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: int | None = subprocess.DEVNULL,
    cwd: str | os.PathLike[str] | None = None,
) -> subprocess.Popen[bytes]:
    """`start` a child whose stdout and stderr this process reads, through pipes (and which
    reads ours, given `stdin=subprocess.PIPE`). Run what reads them inside
    `stopped_on_leaving`. Raises `OSError` when the program cannot be started."""
    return start(
        argv, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
    )


@contextmanager
def stopped_on_leaving(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """Stop `process` and its whole group when the block is left by an exception (a time
    limit, Ctrl-C), even once the process itself has exited, since what it started may
    still hold its pipes; and when the block ends with the process still running. One that
    has exited by the block's normal end is left as it ended."""
    try:
        yield
    except BaseException:
        stop(process)
        raise
    if process.poll() is None:
        stop(process)


# The signals `terminations_raised` turns into `Terminated`.
_TERMINATIONS = (signal.SIGTERM, signal.SIGHUP)


def _raise_terminated(number: int, _frame: object) -> None:
    raise Terminated(number)


@contextmanager
def terminations_raised() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` in the block, as Ctrl-C raises
    `KeyboardInterrupt`: the commands that write undo what they began, and stop their
    children (by default either signal ends the process where it stands). Main thread
    only, where Python runs signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _raise_terminated) for number in _TERMINATIONS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def _interrupts_held() -> Iterator[list[int]]:
    """Hold SIGINT, and SIGTERM and SIGHUP where they raise, for the block: the list it
    yields gets the signals that came meanwhile.

    Only in the main thread, where Python's own handlers run, and only a signal whose
    raising handler is the one installed; elsewhere the block runs as it would.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    held = [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    held += [number for number in _TERMINATIONS if signal.getsignal(number) is _raise_terminated]
    previous = {
        number: signal.signal(number, lambda number, _frame: caught.append(number))
        for number in held
    }
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill `process` and everything in its process group, then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def wait(process: subprocess.Popen[bytes], timeout: float | None) -> int | None:
    """The exit status of `process`, or None once `timeout` seconds passed and it was stopped.

    Any interruption while waiting (Ctrl-C) stops it too, and is raised again.
    """
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process)
        return None
    except BaseException:
        stop(process)
        raise


def run_bounded(
    argv: Sequence[str],
    *,
    deadline: float | None,
    what: str,
    name: str,
    hint: str,
    env: Mapping[str, str] | None = None,
    summarize: bool = False,
) -> None:
    """Run an installer child (pip, venv) to completion, or raise `InstallerError`.

    Its environment is `env` (default: this process's), scrubbed. Its output goes to
    stderr; with `summarize`, to a file instead, of which a failure's message carries the
    one line that says why (its last `ERROR:` line, else its last), in place of `hint`,
    which otherwise follows the exit status. `name` is how the child is called in a
    message. Past `deadline` (a `time.monotonic()` value) it is stopped.
    """
    left = remaining(deadline)
    if left is not None and left <= 0:
        raise InstallerError(f"Could not {what}: no time was left before the deadline.")
    with contextlib.ExitStack() as stack:
        output = stack.enter_context(tempfile.TemporaryFile()) if summarize else None
        fd = stderr_fd() if output is None else output.fileno()
        try:
            # stdin closed, so nothing can wait for an answer.
            process = start(argv, env=scrubbed_environment(env), stdout=fd, stderr=fd)
        except OSError as error:
            raise InstallerError(
                f"Could not {what}: {argv[0]} could not be started ({error})."
            ) from error
        returncode = wait(process, left)
        if returncode is None:
            raise InstallerError(
                f"Could not {what}: {name} did not finish before the deadline and was stopped."
            )
        if returncode != 0:
            said = "" if output is None else _reason(output)
            shown = f": {said}" if said else hint
            raise InstallerError(
                f"Could not {what}: {name} exited with status {returncode}{shown}."
            )


def _reason(output: IO[bytes]) -> str:
    """The line of a child's output that says why it failed: its last `ERROR:` line (pip's
    own way of saying so), else its last line; the end of the output only is read."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(size - _REASON_BYTES, 0))
    lines = [line.strip() for line in output.read().decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    errors = [line for line in lines if line.startswith("ERROR:")]
    said = errors[-1] if errors else (lines[-1] if lines else "")
    return said.rstrip(".")


@dataclass(frozen=True)
class Captured:
    """What a child said and how it ended."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


def run_captured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
) -> Captured:
    """Run `argv` (in `cwd`) with its output captured as text; `InstallerError` if it cannot
    finish."""
    shown = " ".join(argv)
    try:
        process = start_piped(argv, env=env, cwd=cwd)
    except OSError as error:
        raise InstallerError(f"Could not run {argv[0]} ({error.strerror or error}).") from error
    with process, stopped_on_leaving(process):
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise InstallerError(f"`{shown}` did not finish within {timeout:.0f} s.") from None
    return Captured(
        list(argv),
        process.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
    )


def detach(argv: Sequence[str], *, env: Mapping[str, str], pass_fds: Sequence[int] = ()) -> None:
    """Start `argv` as a process that outlives this one; return once it has started.

    It runs in a session of its own with no stdio, reparented to init, keeping only the
    descriptors in `pass_fds`. Best effort: a failure to start it is ignored, because
    what it does must never be a reason for the caller to fail.
    """
    fds = [str(fd) for fd in pass_fds]
    helper = [sys.executable, "-I", "-c", _DETACH, *fds, "--", *argv]
    try:
        process = start(helper, env=env, pass_fds=pass_fds)
    except OSError:
        return
    wait(process, _DETACH_TIMEOUT_SECONDS)


def remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (a `time.monotonic()` value), or None for no bound."""
    if deadline is None:
        return None
    return deadline - time.monotonic()
