"""The one error a user sees from the installer.

Every expected failure — a refused directory, a missing client CLI, a pip that could not
resolve, a server that did not answer — is raised as `InstallerError` with a message that
says what is wrong and what to do. The CLI turns it into one line on stderr and a non-zero
exit, in one place (`cli.py`); nothing else prints a failure.
"""

from __future__ import annotations

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
