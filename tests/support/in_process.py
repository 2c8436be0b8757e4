"""`kinetis-docs` run in this process, seen as a user sees it run as a process of its own.

The console script's entry point, the click command `kinetis_mcp_docs.installer.cli:main`,
is called with the command line, in a process made to look like the one the script would
start: the given environment as `os.environ`, the given working directory, `sys.argv`, and
descriptors 1 and 2 on pipes this process reads to their end, with `sys.stdout` and
`sys.stderr` over them as Python makes its own (UTF-8; stderr line-buffered). What the
children the command starts (pip, the client CLIs, the server check) write to its stderr
is captured with its own lines and in their order, and a child left holding them is waited
for, as `subprocess.run` waits. The exit status is the one the process would exit with, a
traceback and 1 for an exception the command let through; the warning filters are a fresh
interpreter's, not pytest's.

Those children are real processes still, inheriting the environment, the directory and
the descriptors. The run is bounded as `subprocess.run(timeout=...)` is: past it, SIGALRM
stops the command where it stands (its own clean-up runs, as for any exception) and
`subprocess.TimeoutExpired` is raised.

Whatever the run raised, everything of this process it changed is given back afterwards:
the environment, the directory, the descriptors and streams, `sys.argv`, the umask,
`tempfile`'s directory (read from TMPDIR once and then cached, so each run reads it
afresh), the signal handlers, the warning filters and the root logger's handlers. So a
test passes or fails the same whatever ran before it in its test process.
"""

from __future__ import annotations

import contextlib
import importlib
import locale
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import click

from kinetis_mcp_docs.installer.cli import main

PROGRAM = "kinetis-docs"
# What runs the command's process itself, and so cannot run in this one.
PROCESS_COMMANDS = frozenset({"serve", "start"})
# The locales whose standard streams a Python started in them writes with surrogateescape
# (the C locale and the UTF-8 ones it is coerced to, PEP 538), rather than strictly.
_C_LOCALES = frozenset({"", "C", "POSIX", "C.UTF-8", "C.utf8", "UTF-8"})


# What `signal.signal` takes and `signal.getsignal` gives (but None).
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers


class _TimedOut(BaseException):
    """Raised in the command when its time is up: no `except Exception` of it catches it."""


def run_cli(
    arguments: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    umask: int | None = None,
    program: Path | None = None,
    command: click.Command | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `kinetis-docs ARGUMENTS` in this process with `env` as its environment, from
    `cwd`, under `umask` (None: this process's); what it wrote and its exit status, as
    `subprocess.run(..., capture_output=True, text=True)` gives them. `program` is what
    `sys.argv[0]` names; `command` is the click command run (the CLI's)."""
    if arguments and arguments[0] in PROCESS_COMMANDS:
        raise ValueError(f"`{PROGRAM} {arguments[0]}` becomes the server: run it as a process")
    errors = _stdout_errors(env)
    argv = [PROGRAM, *arguments]
    output = _Output()
    shown = [os.fspath(program or PROGRAM), *arguments]
    with _process_as(env, cwd, umask, shown), output.captured(errors):
        returncode = _exit_status(command, arguments, timeout)
    stdout, stderr = output.read(timeout)
    return subprocess.CompletedProcess(argv, returncode, stdout, stderr)


def _stdout_errors(env: Mapping[str, str]) -> str:
    """How a Python started with `env` writes what its stdout cannot encode, whose
    streams must be UTF-8 for the run to be what that process would write."""
    if "PYTHONIOENCODING" in env:
        raise ValueError("PYTHONIOENCODING is set: run the command as a process")
    ctype = next((env[name] for name in ("LC_ALL", "LC_CTYPE", "LANG") if env.get(name)), "")
    if ctype in _C_LOCALES or env.get("PYTHONUTF8") == "1":
        return "surrogateescape"
    if ctype.lower().replace("-", "").endswith(".utf8"):
        return "strict"
    raise ValueError(f"the locale {ctype!r} is not UTF-8: run the command as a process")


def _exit_status(command: click.Command | None, arguments: Sequence[str], timeout: float) -> int:
    """Call the command; the status its process would exit with."""
    try:
        with _bounded(timeout):
            (command or main).main(args=list(arguments), prog_name=PROGRAM, standalone_mode=True)
    except SystemExit as exit_:
        return _status(exit_.code)
    except _TimedOut:
        raise subprocess.TimeoutExpired([PROGRAM, *arguments], timeout) from None
    except KeyboardInterrupt:
        raise  # the test run's own Ctrl-C
    except BaseException:  # noqa: BLE001 - what the interpreter does with one let through
        traceback.print_exc()
        return 1
    raise AssertionError("click's standalone main always exits")


def _status(code: object) -> int:
    """The exit status of a process ended by `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _bounded(timeout: float) -> Iterator[None]:
    """`_TimedOut` raised in the block once `timeout` seconds have passed."""

    def time_out(_number: int, _frame: FrameType | None) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, time_out)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Output:
    """Descriptors 1 and 2, and `sys.stdout` and `sys.stderr` over them, on pipes read to
    their end by a thread each."""

    def __init__(self) -> None:
        self._read: list[bytes] = [b"", b""]
        self._readers: list[threading.Thread] = []

    @contextlib.contextmanager
    def captured(self, stdout_errors: str) -> Iterator[None]:
        streams = sys.stdout, sys.stderr
        for stream in streams:
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        kept = [os.dup(1), os.dup(2)]
        try:
            for fd in (1, 2):
                reading, writing = os.pipe()
                self._start_reading(reading, fd - 1)
                os.dup2(writing, fd)
                os.close(writing)
            # As Python makes them for a process whose output is not a terminal.
            sys.stdout = open(  # noqa: SIM115 - closed below
                1, "w", encoding="utf-8", errors=stdout_errors, closefd=False
            )
            sys.stderr = open(  # noqa: SIM115 - closed below
                2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
            )
            yield
        finally:
            for ours in (sys.stdout, sys.stderr):
                if ours not in streams:
                    with contextlib.suppress(ValueError, OSError):
                        ours.close()  # flushed; a stream kept by the command fails later
            sys.stdout, sys.stderr = streams
            for fd, saved in enumerate(kept, start=1):
                os.dup2(saved, fd)
                os.close(saved)

    def _start_reading(self, fd: int, index: int) -> None:
        def read() -> None:
            with open(fd, "rb") as pipe:
                self._read[index] = pipe.read()

        reader = threading.Thread(target=read, name=f"{PROGRAM} output {fd}", daemon=True)
        reader.start()
        self._readers.append(reader)

    def read(self, timeout: float) -> tuple[str, str]:
        """stdout and stderr, once every process holding them has let them go, decoded as
        `subprocess.run(text=True)` decodes them."""
        deadline = time.monotonic() + timeout
        for reader in self._readers:
            reader.join(max(deadline - time.monotonic(), 0))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(
                    [PROGRAM], timeout, stderr="a process it started still holds its output"
                )
        encoding = locale.getpreferredencoding(False)
        stdout, stderr = (
            data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n") for data in self._read
        )
        return stdout, stderr


@contextlib.contextmanager
def _process_as(
    env: Mapping[str, str], cwd: Path, umask: int | None, argv: list[str]
) -> Iterator[None]:
    """This process made to look like the command's own for the block, and given back."""
    environ = dict(os.environ)
    directory = os.getcwd()  # noqa: PTH109
    arguments = sys.argv
    mask = os.umask(0o022)
    os.umask(mask)
    temporary = tempfile.tempdir
    handlers = _signal_handlers()
    root = logging.getLogger()
    logged = root.handlers[:], root.level
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = argv
        if umask is not None:
            os.umask(umask)
        tempfile.tempdir = None  # read from TMPDIR again
        importlib.invalidate_caches()  # what the command's environments changed on disk
        with warnings.catch_warnings():
            _fresh_interpreters_warning_filters()
            yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(directory)
        sys.argv = arguments
        os.umask(mask)
        tempfile.tempdir = temporary
        for number, handler in handlers.items():
            if signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        root.handlers[:], level = logged
        root.setLevel(level)


def _signal_handlers() -> dict[int, _Handler]:
    """Every signal handler this process can set back, by signal."""
    handlers: dict[int, _Handler] = {}
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        handler = signal.getsignal(number)
        if handler is not None:  # None: one set outside Python, which it cannot set back
            handlers[number] = handler
    return handlers


def _fresh_interpreters_warning_filters() -> None:
    """The warning filters of a Python started without -W or PYTHONWARNINGS, a warning
    shown on stderr (pytest's own recorder set aside)."""
    warnings.showwarning = _shown
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    warnings.simplefilter("ignore", DeprecationWarning, append=True)
    warnings.simplefilter("ignore", PendingDeprecationWarning, append=True)
    warnings.simplefilter("ignore", ImportWarning, append=True)
    warnings.simplefilter("ignore", ResourceWarning, append=True)


def _shown(  # noqa: PLR0917 - the signature of warnings.showwarning
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning written as Python writes one: to stderr."""
    (file or sys.stderr).write(warnings.formatwarning(message, category, filename, lineno, line))
