"""Register the server with Claude Code or Codex, through their own CLIs only.

Never a client's configuration file: Claude Code rewrites `~/.claude.json` itself, and
Codex owns `config.toml`. Each client is a class (`ClaudeCode`, `Codex`) holding the
environment it gives a server, its register, unregister and read-back. A registration is
remove-then-add (both clients refuse to add a name twice), then read back, and a read-back
that differs from what setup verified fails loudly.

The environment a client gives the server, which the verification must reproduce:

- Claude Code starts a server with its own environment, inherited from the shell that
  started it, so the server sees what setup saw.
- Codex starts a server with a short fixed list of variables (`CODEX_DEFAULT_ENVIRONMENT`,
  from `codex-rs/rmcp-client/src/utils.rs`) plus the `env` table of its registration.
  A proxy, a CA bundle or a package mirror set in the user's shell would not reach the
  server. `codex mcp add` can only record values (`--env KEY=VALUE`); the `env_vars`
  pass-through list exists only in `config.toml`, which setup must not edit. So setup
  records the values of `CODEX_PASSED_VARIABLES` that are set in its own environment;
  the cost is that they are a snapshot, and a changed proxy needs `setup codex` again.
  Those holding paths (`PATH_VARIABLES`) are recorded absolute: Codex starts the server in
  a directory of its own choosing, where a path relative to setup's would mean nothing.

A registration this installer wrote runs `DIR/current/bin/python -I -m
kinetis_mcp_docs.installer.start [--docs-dir PAGES]`; `Registration.install_directory` and
`Registration.pages` read `DIR` and `PAGES` back from what a client reports.
"""

from __future__ import annotations

import abc
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinetis_mcp_docs.installer.children import Captured, run_captured
from kinetis_mcp_docs.installer.directory import absolute
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.names import CURRENT_NAME, DOCS_DIR_OPTION, START_MODULE

SERVER_NAME = "kinetis-docs"
# `claude mcp get` starts the server to report its status; a page is not read.
CLI_TIMEOUT_SECONDS = 120.0

CODEX_DEFAULT_ENVIRONMENT = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
)
_PROXIES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")
CODEX_PASSED_VARIABLES = (
    # What the page fetch (httpx) honours: proxies in both spellings, and the CA bundle.
    *_PROXIES,
    *(name.lower() for name in _PROXIES),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    # Where pip finds packages, so the daily update under Codex uses the mirror that setup
    # used. A pip config file needs nothing: HOME is passed and pip finds it there.
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_TRUSTED_HOST",
    "PIP_CERT",
    "PIP_CLIENT_CERT",
    "PIP_CONFIG_FILE",
)
# The recorded variables that hold a path (or, for the lists, paths and URLs), and what
# separates the entries of a list: OpenSSL's path separator, and pip's whitespace.
PATH_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_CONFIG_FILE")
PATH_LIST_VARIABLES = {"SSL_CERT_DIR": os.pathsep, "PIP_FIND_LINKS": None}


@dataclass(frozen=True)
class Registration:
    """A `kinetis-docs` registration as the client's CLI reports it.

    `args` is what the client shows: Claude Code prints the arguments joined by spaces, so
    for it an argument holding a space cannot be told apart from two. `status` is Claude
    Code's connection check (`✓ Connected`, ...) and `scope` where it keeps the
    registration; Codex reports neither.
    """

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    status: str | None = None
    scope: str | None = None

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    @property
    def install_directory(self) -> Path | None:
        """The install directory whose server this runs, if this installer wrote it."""
        command = Path(self.command)
        if self.args[:3] != ["-I", "-m", START_MODULE] or not command.is_absolute():
            return None
        if command.parts[-3:] != (CURRENT_NAME, "bin", "python"):
            return None
        return command.parents[2]

    @property
    def pages(self) -> str | None:
        """The `--docs-dir` it serves pages from, None for the Kinetis repository.

        The option is the last one written, so whatever follows it is the directory, even
        when Claude Code shows the arguments joined by spaces.
        """
        if DOCS_DIR_OPTION not in self.args:
            return None
        return " ".join(self.args[self.args.index(DOCS_DIR_OPTION) + 1 :])

    def runs_from(self, root: Path) -> bool:
        """Whether this runs the server of the install directory `root`."""
        registered = self.install_directory
        return registered is not None and same_directory(registered, root)


def same_directory(first: Path, second: Path) -> bool:
    """Whether two absolute paths name one directory: as written, or once links resolve."""
    return first == second or os.path.realpath(first) == os.path.realpath(second)


class Client(abc.ABC):
    """One MCP client: its CLI, the environment it gives a server, its registration."""

    label: str
    executable: str
    argument: str | None  # what names this client to `kinetis-docs setup`, if anything

    def check_hint(self) -> str:
        """The command a user runs to see the registration."""
        return f"{self.executable} mcp get {SERVER_NAME}"

    def our_command(self, verb: str) -> str:
        """`kinetis-docs VERB` for this client: `kinetis-docs setup codex`, say."""
        return " ".join(["kinetis-docs", verb, *([self.argument] if self.argument else [])])

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
        added = _run(cli, self._add_arguments(argv, env))
        if added.returncode != 0:
            raise _cli_failed(self, "add the registration", added)
        shown = self.registration(cli)
        if shown is None:
            raise _mismatch(self, "it reports no registration at all")
        self._check(shown, argv, env)

    @abc.abstractmethod
    def unregister(self, cli: str) -> bool:
        """Remove the `kinetis-docs` registration; whether there was one to remove."""

    @abc.abstractmethod
    def registration(self, cli: str) -> Registration | None:
        """The `kinetis-docs` registration the client reports, or None when it has none."""

    @abc.abstractmethod
    def _add_arguments(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        """`mcp add` and its arguments, for this client's CLI."""

    @abc.abstractmethod
    def _check(self, shown: Registration, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Raise `InstallerError` unless `shown` is the registration of `argv` and `env`."""


class ClaudeCode(Client):
    """Claude Code: user scope; it starts a server with the environment it inherited."""

    label = "Claude Code"
    executable = "claude"
    argument = None

    def unregister(self, cli: str) -> bool:
        removed = _run(cli, ["mcp", "remove", SERVER_NAME, "--scope", "user"])
        if removed.returncode == 0:
            return True
        if "No MCP server named" in removed.stdout + removed.stderr:
            return False
        raise _cli_failed(self, "remove the existing registration", removed)

    def registration(self, cli: str) -> Registration | None:
        shown = _run(cli, ["mcp", "get", SERVER_NAME])
        if shown.returncode != 0:
            said = shown.stdout + shown.stderr
            # Claude Code 2.x says "No MCP server named ..."; earlier releases said "found".
            if "No MCP server named" in said or "No MCP server found" in said:
                return None
            raise _cli_failed(self, "read the registration back", shown)
        fields, env = _claude_fields(shown.stdout)
        if "Command" not in fields:
            return None
        return Registration(
            command=fields["Command"],
            args=fields.get("Args", "").split(),
            env=env,
            status=fields.get("Status", ""),
            scope=fields.get("Scope", ""),
        )

    def _add_arguments(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],  # noqa: ARG002 - Claude Code passes on its own environment
    ) -> list[str]:
        # Options before the name: `claude mcp add -e` would swallow every word up to `--`.
        return ["mcp", "add", "--scope", "user", SERVER_NAME, "--", *argv]

    def _check(
        self,
        shown: Registration,
        argv: Sequence[str],
        env: Mapping[str, str],  # noqa: ARG002 - none is registered with Claude Code
    ) -> None:
        if shown.command != argv[0]:
            raise _mismatch(self, f"its command is {shown.command!r}, not {argv[0]!r}")
        if " ".join(shown.args) != " ".join(argv[1:]):
            raise _mismatch(
                self, f"its args is {' '.join(shown.args)!r}, not {' '.join(argv[1:])!r}"
            )
        if not (shown.scope or "").startswith("User"):
            raise _mismatch(
                self, f"the registration it reports is not at user scope: {shown.scope!r}"
            )
        status = shown.status or ""
        if "Connected" not in status or "Failed" in status:
            raise InstallerError(
                f"Claude Code registered {SERVER_NAME} but reports its status as {status!r} "
                f"rather than Connected. Run `{self.check_hint()}` to see why."
            )


def _claude_fields(output: str) -> tuple[dict[str, str], dict[str, str]]:
    """`Name: value` lines of `claude mcp get` (first of each), and its `Environment:` list."""
    fields: dict[str, str] = {}
    env: dict[str, str] = {}
    in_environment = False
    for line in output.splitlines():
        text = line.strip()
        key, equals, setting = text.partition("=")
        if in_environment and equals and key and not set(key) & {" ", ":"}:
            env[key] = setting
            continue
        in_environment = False
        name, separator, value = text.partition(":")
        if separator and name and " " not in name and name not in fields:
            fields[name] = value.strip()
            in_environment = name == "Environment"
    return fields, env


class Codex(Client):
    """Codex: it starts a server with a short fixed list of variables, plus the recorded ones."""

    label = "Codex"
    executable = "codex"
    argument = "codex"

    def registered_environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        passed = {name: environ[name] for name in CODEX_PASSED_VARIABLES if name in environ}
        for name in PATH_VARIABLES:
            if passed.get(name):
                passed[name] = absolute(passed[name])
        for name, separator in PATH_LIST_VARIABLES.items():
            if passed.get(name):
                entries = passed[name].split(separator)
                passed[name] = (separator or " ").join(
                    absolute(entry) if entry and "://" not in entry else entry for entry in entries
                )
        return passed

    def launch_environment(
        self, environ: Mapping[str, str], registered: Mapping[str, str]
    ) -> dict[str, str]:
        passed = {name: environ[name] for name in CODEX_DEFAULT_ENVIRONMENT if name in environ}
        return passed | dict(registered)

    def unregister(self, cli: str) -> bool:
        removed = _run(cli, ["mcp", "remove", SERVER_NAME])
        if removed.returncode != 0:
            raise _cli_failed(self, "remove the existing registration", removed)
        # Codex exits 0 either way, and says which.
        return "No MCP server named" not in removed.stdout + removed.stderr

    def registration(self, cli: str) -> Registration | None:
        shown = _run(cli, ["mcp", "get", SERVER_NAME, "--json"])
        if shown.returncode != 0:
            if "No MCP server named" in shown.stdout + shown.stderr:
                return None
            raise _cli_failed(self, "read the registration back", shown)
        entry = _codex_entry(shown.stdout)
        command, args, env = entry.get("command"), entry.get("args"), entry.get("env") or {}
        if not isinstance(command, str):
            return None
        return Registration(
            command=command,
            args=[str(arg) for arg in args] if isinstance(args, list) else [],
            env={str(key): str(value) for key, value in env.items()}
            if isinstance(env, dict)
            else {},
        )

    def _add_arguments(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        options = [f"--env={name}={value}" for name, value in sorted(env.items())]
        return ["mcp", "add", *options, SERVER_NAME, "--", *argv]

    def _check(self, shown: Registration, argv: Sequence[str], env: Mapping[str, str]) -> None:
        if shown.argv != list(argv):
            raise _mismatch(self, f"it reports the command {shown.command!r} {shown.args!r}")
        if shown.env != dict(env):
            raise _mismatch(self, f"its environment holds {sorted(shown.env)}, not {sorted(env)}")


CLAUDE = ClaudeCode()
CODEX = Codex()
CLIENTS = (CLAUDE, CODEX)


def client_named(name: str | None) -> Client:
    """`None` (no argument) is Claude Code; `"codex"` is Codex."""
    return CODEX if name == "codex" else CLAUDE


def _codex_entry(output: str) -> dict[str, Any]:
    """The stdio launch settings from `codex mcp get --json`, old or new layout."""
    try:
        document = json.loads(output[output.find("{") :])
    except ValueError:
        raise InstallerError(
            f"Codex did not print JSON for `codex mcp get {SERVER_NAME} --json`; "
            "update Codex and run setup again."
        ) from None
    if not isinstance(document, dict):
        return {}
    transport = document.get("transport")
    # Newer Codex nests command, args and env under "transport"; older ones did not.
    return transport if isinstance(transport, dict) else document


def _run(cli: str, arguments: list[str]) -> Captured:
    # The client's CLI sees this process's whole environment, as from the user's shell.
    return run_captured([cli, *arguments], env=os.environ, timeout=CLI_TIMEOUT_SECONDS)


def _cli_failed(client: Client, what: str, completed: Captured) -> InstallerError:
    said = (completed.stderr.strip() or completed.stdout.strip()).splitlines()
    detail = f": {said[-1]}" if said else ""
    return InstallerError(
        f"{client.label} could not {what} (`{client.executable} "
        f"{' '.join(completed.argv[1:3])}` exited with status "
        f"{completed.returncode}{detail})."
    )


def _mismatch(client: Client, detail: str) -> InstallerError:
    return InstallerError(
        f"{client.label} does not report the registration setup verified: {detail}. "
        f"Inspect it with `{client.check_hint()}` and run setup again."
    )
