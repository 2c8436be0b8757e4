"""A `kinetis-docs` registration as a client's CLI reports it, read back.

A registration this installer wrote runs `DIR/current/bin/python -I -m
kinetis_mcp_docs.installer.start [--docs-dir PAGES]`; `Registration.install_directory` and
`Registration.pages` read `DIR` and `PAGES` back from what a client reports. Any other
registration is read back as what it is: another command, or an HTTP (or SSE) one, by its
URL and the names of its headers — never their values, which may be credentials.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..names import CURRENT_NAME, DOCS_DIR_OPTION, START_ARGUMENTS

STDIO = "stdio"


def scope_name(scope: str | None) -> str | None:
    """Claude Code's scope as it says it (`User config (...)`) in one word (`user`,
    `local`, `project`); None for none (Codex reports none)."""
    return scope.split()[0].lower() if scope else None


@dataclass(frozen=True)
class Registration:
    """A `kinetis-docs` registration as the client's CLI reports it.

    A stdio registration has a `command` and its `args`; an HTTP one (`http` or Codex's
    `streamable_http`) or an SSE one has a `url` and the names of its `headers`, never their
    values, which may be credentials. `transport` is empty when the client shows neither:
    Claude Code shows a project-scope server awaiting approval by its scope and status alone.
    `status` is Claude Code's connection check (`✔ Connected`, ...) and `scope` where it
    keeps the registration (`User config (...)`); Codex reports neither. `settings` are the
    entry's settings that its client's `mcp add` cannot write, those set, by their key in the
    client's configuration (Codex's timeouts, tool lists, `env_vars`, `cwd`, `enabled =
    false`), with their values as the client printed them; Claude Code reports none.
    """

    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    status: str | None = None
    scope: str | None = None
    transport: str = STDIO
    url: str | None = None
    headers: list[str] = field(default_factory=list)
    settings: dict[str, object] = field(default_factory=dict)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    @property
    def is_stdio(self) -> bool:
        return self.transport == STDIO and bool(self.command)

    @property
    def scope_name(self) -> str | None:
        """Claude Code's scope in one word (`user`, `local`, `project`); None for Codex."""
        return scope_name(self.scope)

    @property
    def install_directory(self) -> Path | None:
        """The install directory whose server this runs, if this installer wrote it."""
        command = Path(self.command)
        if not self.is_stdio or tuple(self.args[:3]) != START_ARGUMENTS:
            return None
        if not command.is_absolute() or command.parts[-3:] != (CURRENT_NAME, "bin", "python"):
            return None
        return command.parents[2]

    @property
    def pages(self) -> str | None:
        """The `--docs-dir` it serves pages from, None for the Kinetis repository.

        The option is the last one this installer writes, so whatever follows it is the
        directory (for another command, as well as Claude Code's printed line allows).
        """
        if DOCS_DIR_OPTION not in self.args:
            return None
        return " ".join(self.args[self.args.index(DOCS_DIR_OPTION) + 1 :]) or None

    def runs_from(self, root: Path) -> bool:
        """Whether this runs the server of the install directory `root`."""
        registered = self.install_directory
        return registered is not None and same_directory(registered, root)

    def describe(self) -> str:
        """What it runs, for a sentence: the command, or the URL (headers by name only)."""
        if self.is_stdio:
            return f"`{shlex.join(self.argv)}`"
        if self.url is not None:
            kind = "an SSE" if self.transport == "sse" else "an HTTP"
            named = f" (headers: {', '.join(self.headers)})" if self.headers else ""
            return f"{kind} registration of {self.url}{named}"
        return f"a registration it shows only as {self.status or 'present'}"


def same_directory(first: Path, second: Path) -> bool:
    """Whether two absolute paths name one directory: as written, or once links resolve."""
    return first == second or os.path.realpath(first) == os.path.realpath(second)
