"""What every client shares: its CLI, the environment it gives a server, its registration.

Never a client's configuration file: Claude Code rewrites `~/.claude.json` itself, and
Codex owns `config.toml`. Each client is a subclass of `Client` (`claude_code`, `codex`)
holding the environment it gives a server, its register, unregister and read-back. A
registration is remove-then-add (both clients refuse to add a name twice), then read back,
and a read-back that differs from what setup verified fails loudly.

Every CLI runs in the user's home directory (`neutral_directory`): `claude mcp get`
reports the registration in effect for the directory it runs in, so from a project holding
a local-scope `kinetis-docs` it would report that one instead of the user's (see `scope`).
"""

from __future__ import annotations

import abc
import os
import shutil
from collections.abc import Mapping, Sequence

from ..children import Captured, run_captured
from ..errors import InstallerError
from .registration import Registration

SERVER_NAME = "kinetis-docs"
# The name the HTTP route's page registers it under: one of its own, which setup never
# replaces, and which `status` recognises as a user of the route.
HTTP_SERVER_NAME = "kinetis-docs-http"
# `claude mcp get` starts the server to report its status; a page is not read.
CLI_TIMEOUT_SECONDS = 120.0


def neutral_directory() -> str:
    """Where the client CLIs run: the user's home directory (the root, should it be missing).

    `claude mcp get` reports the registration in effect for the directory it runs in, so
    run from a project holding a local-scope `kinetis-docs`, it would report that one.
    """
    home = os.path.expanduser("~")  # noqa: PTH111 - a str for the child's cwd
    return home if os.path.isdir(home) else os.sep  # noqa: PTH112


# A variable whose name holds one of these may hold a credential: named, its value not shown.
_SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD")


def may_be_secret(name: str) -> bool:
    """Whether the variable `name` may hold a credential, by its name."""
    upper = name.upper()
    return any(word in upper for word in _SECRET_WORDS)


class Client(abc.ABC):
    """One MCP client: its CLI, the environment it gives a server, its registration."""

    label: str
    executable: str
    argument: str | None  # what names this client to `kinetis-docs setup`, if anything

    def check_hint(self) -> str:
        """The command a user runs to see the registration."""
        return f"{self.executable} mcp get {SERVER_NAME}"

    @property
    @abc.abstractmethod
    def remove_hint(self) -> str:
        """The command a user runs to remove the user-wide registration."""

    @property
    @abc.abstractmethod
    def config_file(self) -> str:
        """Where the client's CLI keeps its registrations, as a user names the file: only
        named in a message, never read or written here."""

    @property
    def arguments(self) -> list[str]:
        """What follows `kinetis-docs setup` (or `uninstall`) for this client."""
        return [self.argument] if self.argument else []

    def cli_on_path(self) -> str | None:
        """The absolute path of the client's CLI on PATH, or None."""
        return shutil.which(self.executable)

    def find_cli(self) -> str:
        """The absolute path of the client's CLI on PATH, or `InstallerError`."""
        found = self.cli_on_path()
        if found is None:
            raise InstallerError(
                f"The {self.label} CLI `{self.executable}` is not on PATH. Install "
                f"{self.label}, make sure `{self.executable}` runs in this shell, and run "
                "setup again."
            )
        return found

    def registered_environment(
        self,
        environ: Mapping[str, str],  # noqa: ARG002 - a client that drops variables overrides
    ) -> dict[str, str]:
        """The variables the registration itself records: none, unless the client drops some."""
        return {}

    def launch_environment(
        self, environ: Mapping[str, str], registered: Mapping[str, str]
    ) -> dict[str, str]:
        """The environment this client, started from `environ`, will give the server."""
        return dict(environ) | dict(registered)

    def register(self, cli: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Replace any `kinetis-docs` registration with `argv` (and `env`); read it back.

        Raises `InstallerError` when the client refuses, or reports anything other than
        what was registered.
        """
        self.unregister(cli)
        added = run_cli(cli, self._add_arguments(argv, env))
        if added.returncode != 0:
            raise cli_failed(self, "add the registration", added)
        shown = self.registration(cli)
        if shown is None:
            raise mismatch(self, "it reports no registration at all")
        self._check(shown, argv, env)

    def dropped_settings(
        self,
        existing: Registration,  # noqa: ARG002 - a client whose `mcp add` cannot write all overrides
    ) -> list[str]:
        """What replacing `existing` drops that a user set by hand and setup does not write
        again, one `key = value` each as the client's configuration writes it: nothing,
        unless the client's `mcp add` cannot write every setting its configuration holds."""
        return []

    @abc.abstractmethod
    def unregister(self, cli: str) -> bool:
        """Remove the `kinetis-docs` registration; whether there was one to remove."""

    @abc.abstractmethod
    def registration(self, cli: str, name: str = SERVER_NAME) -> Registration | None:
        """The registration of `name` (`kinetis-docs`) the client reports, or None when it
        has none."""

    @abc.abstractmethod
    def _add_arguments(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        """`mcp add` and its arguments, for this client's CLI."""

    @abc.abstractmethod
    def _check(self, shown: Registration, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Raise `InstallerError` unless `shown` is the registration of `argv` and `env`."""


def run_cli(cli: str, arguments: list[str]) -> Captured:
    """Run a client's CLI with `arguments`, in `neutral_directory`, its output captured."""
    # The client's CLI sees this process's whole environment, as from the user's shell.
    return run_captured(
        [cli, *arguments], env=os.environ, timeout=CLI_TIMEOUT_SECONDS, cwd=neutral_directory()
    )


def cli_failed(client: Client, what: str, completed: Captured) -> InstallerError:
    """The client's CLI could not do `what`: the command, its status and its line of why."""
    return InstallerError(
        f"{client.label} could not {what} (`{client.executable} "
        f"{' '.join(completed.argv[1:3])}` exited with status "
        f"{completed.returncode}{_what_it_said(completed)})."
    )


def _what_it_said(completed: Captured) -> str:
    """The line of a failed CLI's output that says why: its error line, else its last."""
    lines = [
        line.strip()
        for line in (completed.stderr.strip() or completed.stdout.strip()).splitlines()
        if line.strip()
    ]
    # Codex follows its `Error: ...` line with a backtrace when RUST_BACKTRACE is set.
    errors = [line for line in lines if line.lower().startswith("error")]
    said = errors[0] if errors else (lines[-1] if lines else "")
    return f": {said}" if said else ""


# What a CLI says when the file or directory it writes cannot be written: the errno's text
# (Node's code, Rust's `os error N`) for a permission refused and a read-only file system.
_UNWRITABLE = (
    "permission denied",
    "read-only file system",
    "eacces",
    "erofs",
    "os error 13",
    "os error 30",
)


def could_not_write(message: str) -> bool:
    """Whether a client CLI's failure, as `cli_failed` words it, is its configuration
    refusing the write."""
    lowered = message.lower()
    return any(said in lowered for said in _UNWRITABLE)


def mismatch(client: Client, detail: str) -> InstallerError:
    """The client reports another registration than the one setup verified."""
    return InstallerError(
        f"{client.label} does not report the registration setup verified: {detail}. "
        f"Inspect it with `{client.check_hint()}` and run setup again."
    )
