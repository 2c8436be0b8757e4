"""What the installer tells a user to run, and what a failed server said about itself.

No install puts `kinetis-docs` on PATH: `pipx run` and `nox -s setup_from_source` leave no
command behind. The command that looks after an install is that install's own,
`DIR/current/bin/kinetis-docs`, so every command a message names is written that way,
with `KINETIS_MCP_DOCS_DIR=DIR` before it unless DIR is the default: run from the user's
shell, it then acts on the install the message is about.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from kinetis_mcp_docs.installer.directory import resolve_directory
from kinetis_mcp_docs.installer.layout import InstallLayout
from kinetis_mcp_docs.installer.names import (
    COMMAND_NAME,
    DIR_ENVIRONMENT_VARIABLE,
    PAGES_ENVIRONMENT_VARIABLE,
)
from kinetis_mcp_docs.installer.smoke import ServerCheckFailed


def kinetis_docs(root: Path, *words: str, pages: str | None = None) -> str:
    """`kinetis-docs WORDS` as a user runs it for the install directory `root`.

    The install's own command when it has one (plain `kinetis-docs` before anything is
    installed there), after `KINETIS_MCP_DOCS_DIR` when `root` is not the default and
    `KINETIS_MCP_DOCS_PAGES` when `pages` is given (a `setup` keeping its pages directory).
    """
    settings = []
    if root != resolve_directory({}):
        settings.append(f"{DIR_ENVIRONMENT_VARIABLE}={shlex.quote(os.fspath(root))}")
    if pages is not None:
        settings.append(f"{PAGES_ENVIRONMENT_VARIABLE}={shlex.quote(pages)}")
    command = InstallLayout(root).command
    program = shlex.quote(os.fspath(command)) if os.access(command, os.X_OK) else COMMAND_NAME
    return " ".join([*settings, program, *words])


def server_account(failure: ServerCheckFailed) -> str:
    """The first problem of a failed exchange, the server's last line on stderr (usually the
    real cause: `--docs-dir ...: not a directory`, a traceback's last line), and where the
    whole of its stderr is kept."""
    said = failure.last_stderr_line
    if failure.stderr_file is None or not said:
        return f"{failure.problem.text}. {failure.where_stderr()}"
    return (
        f"{failure.problem.text}; the server's last line on stderr: {said} "
        f"(all of its stderr is in {failure.stderr_file})."
    )
