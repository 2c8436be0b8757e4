"""Register the server with Claude Code or Codex, through their own CLIs only.

Never a client's configuration file: Claude Code rewrites `~/.claude.json` itself, and
Codex owns `config.toml`. Each registration is remove-then-add (both clients refuse to add
a name twice), then read back, and a read-back that differs from what setup verified fails
loudly.

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
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kinetis_mcp_docs.installer.errors import InstallerError

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


@dataclass(frozen=True)
class Client:
    """One MCP client: what the user calls it and the CLI that manages its servers."""

    label: str
    executable: str

    def check_hint(self) -> str:
        """The command a user runs to see the registration."""
        if self is CODEX:
            return f"codex mcp get {SERVER_NAME}"
        return f"claude mcp get {SERVER_NAME}"


CLAUDE = Client("Claude Code", "claude")
CODEX = Client("Codex", "codex")


def client_named(name: str | None) -> Client:
    """`None` (no argument) is Claude Code; `"codex"` is Codex."""
    return CODEX if name == "codex" else CLAUDE


def find_cli(client: Client) -> str:
    """The absolute path of the client's CLI on PATH, or `InstallerError`."""
    found = shutil.which(client.executable)
    if found is None:
        raise InstallerError(
            f"The {client.label} CLI `{client.executable}` is not on PATH. Install "
            f"{client.label}, make sure `{client.executable}` runs in this shell, and run "
            "setup again."
        )
    return found


def registered_environment(client: Client, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables the registration itself records (Codex only; see the module doc)."""
    if client is not CODEX:
        return {}
    return {name: environ[name] for name in CODEX_PASSED_VARIABLES if name in environ}


def launch_environment(
    client: Client, environ: Mapping[str, str], registered: Mapping[str, str]
) -> dict[str, str]:
    """The environment `client`, started from `environ`, will give the server."""
    if client is not CODEX:
        return dict(environ) | dict(registered)
    passed = {name: environ[name] for name in CODEX_DEFAULT_ENVIRONMENT if name in environ}
    return passed | dict(registered)


def register(client: Client, cli: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Replace any `kinetis-docs` registration with `argv` (and `env`), and read it back."""
    if client is CODEX:
        _register_codex(cli, argv, env)
    else:
        _register_claude(cli, argv)


def _register_claude(cli: str, argv: Sequence[str]) -> None:
    removed = _run(cli, ["mcp", "remove", SERVER_NAME, "--scope", "user"])
    if removed.returncode != 0 and "No MCP server named" not in removed.stdout + removed.stderr:
        raise _cli_failed(CLAUDE, "remove the existing registration", removed)
    # Options before the name: `claude mcp add -e` would swallow every word up to `--`.
    added = _run(cli, ["mcp", "add", "--scope", "user", SERVER_NAME, "--", *argv])
    if added.returncode != 0:
        raise _cli_failed(CLAUDE, "add the registration", added)
    shown = _run(cli, ["mcp", "get", SERVER_NAME])
    if shown.returncode != 0:
        raise _cli_failed(CLAUDE, "read the registration back", shown)
    fields = _claude_fields(shown.stdout)
    expected = {"Command": argv[0], "Args": " ".join(argv[1:])}
    for name, value in expected.items():
        if fields.get(name) != value:
            raise _mismatch(CLAUDE, f"its {name.lower()} is {fields.get(name)!r}, not {value!r}")
    if not fields.get("Scope", "").startswith("User"):
        raise _mismatch(
            CLAUDE, f"the registration it reports is not at user scope: {fields.get('Scope')!r}"
        )
    status = fields.get("Status", "")
    if "Connected" not in status or "Failed" in status:
        raise InstallerError(
            f"Claude Code registered {SERVER_NAME} but reports its status as {status!r} "
            f"rather than Connected. Run `claude mcp get {SERVER_NAME}` to see why."
        )


def _claude_fields(output: str) -> dict[str, str]:
    """`Name: value` lines of `claude mcp get`, first occurrence of each name."""
    fields: dict[str, str] = {}
    for line in output.splitlines():
        name, separator, value = line.strip().partition(":")
        if separator and name and " " not in name and name not in fields:
            fields[name] = value.strip()
    return fields


def _register_codex(cli: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
    removed = _run(cli, ["mcp", "remove", SERVER_NAME])
    if removed.returncode != 0:
        raise _cli_failed(CODEX, "remove the existing registration", removed)
    options = [f"--env={name}={value}" for name, value in sorted(env.items())]
    added = _run(cli, ["mcp", "add", *options, SERVER_NAME, "--", *argv])
    if added.returncode != 0:
        raise _cli_failed(CODEX, "add the registration", added)
    shown = _run(cli, ["mcp", "get", SERVER_NAME, "--json"])
    if shown.returncode != 0:
        raise _cli_failed(CODEX, "read the registration back", shown)
    entry = _codex_entry(shown.stdout)
    if entry.get("command") != argv[0] or entry.get("args") != list(argv[1:]):
        raise _mismatch(
            CODEX, f"it reports the command {entry.get('command')!r} {entry.get('args')!r}"
        )
    if (entry.get("env") or {}) != dict(env):
        names = sorted((entry.get("env") or {}).keys())
        raise _mismatch(CODEX, f"its environment holds {names}, not {sorted(env)}")


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


def _run(cli: str, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [cli, *arguments],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=CLI_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InstallerError(
            f"`{cli} {' '.join(arguments)}` did not finish within {CLI_TIMEOUT_SECONDS:.0f} s."
        ) from None
    except OSError as error:
        raise InstallerError(f"Could not run {cli} ({error.strerror or error}).") from error


def _cli_failed(
    client: Client, what: str, completed: subprocess.CompletedProcess[str]
) -> InstallerError:
    said = (completed.stderr.strip() or completed.stdout.strip()).splitlines()
    detail = f": {said[-1]}" if said else ""
    return InstallerError(
        f"{client.label} could not {what} (`{client.executable} "
        f"{' '.join(str(part) for part in completed.args[1:3])}` exited with status "
        f"{completed.returncode}{detail})."
    )


def _mismatch(client: Client, detail: str) -> InstallerError:
    return InstallerError(
        f"{client.label} does not report the registration setup verified: {detail}. "
        f"Inspect it with `{client.check_hint()}` and run setup again."
    )
