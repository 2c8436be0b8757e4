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
`Registration.pages` read `DIR` and `PAGES` back from what a client reports. Claude Code
has no machine-readable read-back (`claude mcp get` prints `Args:` joined by spaces), so
that command is split again by its known shape, keeping a path's spaces. Any other
registration is read back as what it is: another command, or an HTTP (or SSE) one, by its
URL and the names of its headers — never their values, which may be credentials.

Every CLI runs in the user's home directory: `claude mcp get` reports the registration in
effect for the directory it runs in, so from a project holding a local-scope
`kinetis-docs` it would report that one instead of the user's. A non-user scope it reports
even there is named, with how to remove it (`other_scope`).
"""

from __future__ import annotations

import abc
import json
import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinetis_mcp_docs.installer.children import Captured, run_captured
from kinetis_mcp_docs.installer.directory import absolute
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.names import CURRENT_NAME, DOCS_DIR_OPTION, START_ARGUMENTS

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


STDIO = "stdio"


@dataclass(frozen=True)
class Registration:
    """A `kinetis-docs` registration as the client's CLI reports it.

    A stdio registration has a `command` and its `args`; an HTTP one (`http` or Codex's
    `streamable_http`) or an SSE one has a `url` and the names of its `headers`, never their
    values, which may be credentials. `transport` is empty when the client shows neither:
    Claude Code shows a project-scope server awaiting approval by its scope and status alone.
    `status` is Claude Code's connection check (`✔ Connected`, ...) and `scope` where it
    keeps the registration (`User config (...)`); Codex reports neither.
    """

    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    status: str | None = None
    scope: str | None = None
    transport: str = STDIO
    url: str | None = None
    headers: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    @property
    def is_stdio(self) -> bool:
        return self.transport == STDIO and bool(self.command)

    @property
    def scope_name(self) -> str | None:
        """Claude Code's scope in one word (`user`, `local`, `project`); None for Codex."""
        return self.scope.split()[0].lower() if self.scope else None

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


def neutral_directory() -> str:
    """Where the client CLIs run: the user's home directory (the root, should it be missing).

    `claude mcp get` reports the registration in effect for the directory it runs in, so
    run from a project holding a local-scope `kinetis-docs`, it would report that one.
    """
    home = os.path.expanduser("~")  # noqa: PTH111 - a str for the child's cwd
    return home if os.path.isdir(home) else os.sep  # noqa: PTH112


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


@dataclass(frozen=True)
class OtherScope:
    """A registration reported at another scope than user: what it is, and how to remove it."""

    what: str
    remove: str


def other_scope(client: Client, shown: Registration) -> OtherScope | None:
    """Whether `shown` is at another scope than user, as Claude Code reports it.

    Seen from the home directory (`neutral_directory`), a local-scope `kinetis-docs` for that
    directory hides the user-scope one this installer manages, and a project-scope one (a
    `.mcp.json` there or above) is reported only when there is no user-scope one. None for a
    user-scope registration, and for Codex, which reports no scope.
    """
    scope = shown.scope_name
    if scope is None or scope == "user":
        return None
    where = neutral_directory()
    remove = f"`{client.executable} mcp remove {SERVER_NAME} --scope {scope}`"
    if scope == "local":
        return OtherScope(
            what=(
                f"{client.label} reports a local-scope {SERVER_NAME} for {where}, which hides "
                f"the user-scope one there: sessions started in {where} run {shown.describe()}"
            ),
            remove=f"{remove}, run in {where}",
        )
    if scope == "project":
        return OtherScope(
            what=(
                f"{client.label} reports a project-scope {SERVER_NAME}, from a .mcp.json in "
                f"{where} or a directory above it, and no user-scope one"
            ),
            remove=f"{remove}, run in the directory holding that .mcp.json",
        )
    return OtherScope(
        what=f"{client.label} reports {SERVER_NAME} at another scope than user ({shown.scope})",
        remove=f"`{client.check_hint()}`, run in {where}, shows where it comes from",
    )


def hiding_registration(client: Client, shown: Registration | None) -> OtherScope | None:
    """`shown` as `other_scope` words it when it is a local-scope registration for the home
    directory, which hides the user-scope one there; else None."""
    if shown is None or shown.scope_name != "local":
        return None
    return other_scope(client, shown)


class ClaudeCode(Client):
    """Claude Code: user scope; it starts a server with the environment it inherited."""

    label = "Claude Code"
    executable = "claude"
    argument = None
    remove_hint = f"claude mcp remove {SERVER_NAME} --scope user"

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
            raise _cli_failed(self, f"read its {SERVER_NAME} registration", shown)
        return _claude_registration(shown.stdout)

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
        scoped = other_scope(self, shown)
        if scoped is not None:
            raise InstallerError(
                f"{scoped.what}. Remove it with {scoped.remove}, then run setup again; the "
                "user-scope registration setup added stays meanwhile."
            )
        if shown.argv != list(argv):
            raise _mismatch(self, f"it reports {shown.describe()}, not `{shlex.join(argv)}`")
        status = shown.status or ""
        if "Connected" not in status or "Failed" in status:
            raise InstallerError(
                f"Claude Code registered {SERVER_NAME} but reports its status as {status!r} "
                f"rather than Connected. Run `{self.check_hint()}` to see why."
            )


def _claude_registration(output: str) -> Registration | None:
    """What `claude mcp get` printed, read back; None when it shows no registration.

    It prints `  Name: value` lines, and under `Environment:` and `Headers:` one
    `    KEY=value` or `    Name: value` line each (a header's value is not kept).
    """
    fields: dict[str, str] = {}
    blocks: dict[str, list[str]] = {"Environment": [], "Headers": []}
    block: list[str] | None = None
    for line in output.splitlines():
        if block is not None and line.startswith("    "):
            block.append(line.strip())
            continue
        block = None
        name, separator, value = line[2:].partition(":")
        if not line.startswith("  ") or not separator or not name or " " in name:
            continue
        if name in blocks:
            block = blocks[name]
        elif name not in fields:
            # Only the separating space goes: Args keeps a path's own spaces.
            fields[name] = value.removeprefix(" ")
    command = fields.get("Command", "").strip()
    if not command and "URL" not in fields and "Scope" not in fields:
        return None
    return Registration(
        command=command,
        args=_claude_arguments(fields.get("Args", "")) if command else [],
        env=dict(entry.split("=", 1) for entry in blocks["Environment"] if "=" in entry),
        status=fields.get("Status", "").strip(),
        scope=fields.get("Scope", "").strip(),
        transport=fields.get("Type", "").strip().lower() or (STDIO if command else ""),
        url=fields["URL"].strip() if "URL" in fields else None,
        headers=[entry.partition(":")[0].strip() for entry in blocks["Headers"]],
    )


def _claude_arguments(text: str) -> list[str]:
    """`Args:` as Claude Code prints it, the arguments joined by spaces, split back.

    The command this installer registers is split by its known shape, so its `--docs-dir`
    comes back whole, whatever spaces the path holds. Another command's arguments are split
    at every run of spaces, which is the most the printed line tells.
    """
    ours = " ".join(START_ARGUMENTS)
    with_pages = f"{ours} {DOCS_DIR_OPTION} "
    if text == ours:
        return list(START_ARGUMENTS)
    if text.startswith(with_pages) and len(text) > len(with_pages):
        return [*START_ARGUMENTS, DOCS_DIR_OPTION, text[len(with_pages) :]]
    return text.split()


class Codex(Client):
    """Codex: it starts a server with a short fixed list of variables, plus the recorded ones."""

    label = "Codex"
    executable = "codex"
    argument = "codex"
    remove_hint = f"codex mcp remove {SERVER_NAME}"

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
            raise _cli_failed(self, f"read its {SERVER_NAME} registration", shown)
        return _codex_registration(shown.stdout)

    def _add_arguments(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        options = [f"--env={name}={value}" for name, value in sorted(env.items())]
        return ["mcp", "add", *options, SERVER_NAME, "--", *argv]

    def _check(self, shown: Registration, argv: Sequence[str], env: Mapping[str, str]) -> None:
        if shown.argv != list(argv):
            raise _mismatch(self, f"it reports {shown.describe()}, not `{shlex.join(argv)}`")
        if shown.env != dict(env):
            raise _mismatch(self, f"its environment holds {sorted(shown.env)}, not {sorted(env)}")


CLAUDE = ClaudeCode()
CODEX = Codex()
CLIENTS = (CLAUDE, CODEX)


def client_named(name: str | None) -> Client:
    """`None` (no argument) is Claude Code; `"codex"` is Codex."""
    return CODEX if name == "codex" else CLAUDE


def _codex_registration(output: str) -> Registration | None:
    """What `codex mcp get --json` printed, old layout or new, read back.

    A stdio server has a command; a streamable HTTP one a URL, whose headers (set in
    `config.toml`, or read from variables) are kept by name only.
    """
    try:
        document = json.loads(output[output.find("{") :])
    except ValueError:
        raise InstallerError(
            f"Codex did not print JSON for `codex mcp get {SERVER_NAME} --json`; update Codex."
        ) from None
    if not isinstance(document, dict):
        return None
    transport = document.get("transport")
    # Newer Codex nests the launch settings under "transport"; older ones did not.
    entry: dict[str, Any] = transport if isinstance(transport, dict) else document
    command, url = entry.get("command"), entry.get("url")
    if isinstance(command, str):
        args, env = entry.get("args"), entry.get("env")
        return Registration(
            command=command,
            args=[str(arg) for arg in args] if isinstance(args, list) else [],
            env={str(key): str(value) for key, value in env.items()}
            if isinstance(env, dict)
            else {},
        )
    if not isinstance(url, str):
        return None
    headers = [
        str(name)
        for table in ("http_headers", "env_http_headers")
        if isinstance(entry.get(table), dict)
        for name in entry[table]
    ]
    if entry.get("bearer_token_env_var"):
        headers.append("Authorization")
    return Registration(
        transport=str(entry.get("type") or "streamable_http"), url=url, headers=headers
    )


def _run(cli: str, arguments: list[str]) -> Captured:
    # The client's CLI sees this process's whole environment, as from the user's shell.
    return run_captured(
        [cli, *arguments], env=os.environ, timeout=CLI_TIMEOUT_SECONDS, cwd=neutral_directory()
    )


def _cli_failed(client: Client, what: str, completed: Captured) -> InstallerError:
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


def _mismatch(client: Client, detail: str) -> InstallerError:
    return InstallerError(
        f"{client.label} does not report the registration setup verified: {detail}. "
        f"Inspect it with `{client.check_hint()}` and run setup again."
    )
