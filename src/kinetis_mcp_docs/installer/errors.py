"""The one error a user sees from the installer.

Every expected failure — a refused directory, a missing client CLI, a pip that could not
resolve, a server that did not answer — is raised as `InstallerError` with a message that
says what is wrong and what to do. The CLI turns it into one line on stderr and a non-zero
exit, in one place (`cli.py`); nothing else prints a failure.
"""

from __future__ import annotations

import signal

# The shell's convention for a process ended by Ctrl-C (SIGINT).
INTERRUPTED_EXIT_CODE = 130


class InstallerError(Exception):
    """An expected installer failure: a plain sentence and the process exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class Terminated(KeyboardInterrupt):
    """SIGTERM (a service manager, `kill`) or SIGHUP (a closed terminal) in a command that
    writes, raised where Ctrl-C raises `KeyboardInterrupt`, so that it undoes what Ctrl-C
    undoes: a setup stopped so once left a half-built install and its pip running."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number


def interrupted_exit_code(error: BaseException) -> int:
    """The shell's status for a command stopped by `error`'s signal: 128 and its number."""
    if isinstance(error, Terminated):
        return 128 + error.signal_number
    return INTERRUPTED_EXIT_CODE


def interruption(error: BaseException) -> str:
    """How a message names what stopped the command: Ctrl-C, or the signal."""
    if isinstance(error, Terminated):
        return f"Stopped by {signal.Signals(error.signal_number).name}"
    return "Interrupted"
