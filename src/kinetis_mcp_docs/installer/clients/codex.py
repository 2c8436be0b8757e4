"""Codex: it starts a server with a short fixed list of variables, plus the recorded ones.

Codex starts a server with `CODEX_DEFAULT_ENVIRONMENT` (from
`codex-rs/rmcp-client/src/utils.rs`) plus the `env` table of its registration. A proxy, a
CA bundle or a package mirror set in the user's shell would not reach the server. `codex
mcp add` can only record values (`--env KEY=VALUE`); the `env_vars` pass-through list exists
only in `config.toml`, which setup must not edit. So setup records the values of
`CODEX_PASSED_VARIABLES` that are set in its own environment; the cost is that they are a
snapshot, and a changed proxy needs `setup codex` again. Those holding paths
(`PATH_VARIABLES`) are recorded absolute: Codex starts the server in a directory of its own
choosing, where a path relative to setup's would mean nothing.

Re-registering is `codex mcp remove` then `codex mcp add`, which writes a whole new entry:
whatever a user added to the old one by hand in `config.toml` (a timeout, a tool list,
`env_vars`, `cwd`, another variable) is gone. `codex mcp get --json` reports those
settings, so setup names what it drops (`dropped_settings`) for the user to add back.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InstallerError
from .base import (
    SERVER_NAME,
    Client,
    cli_failed,
    may_be_secret,
    mismatch,
    run_cli,
)
from .registration import Registration

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

# The settings of an entry that only config.toml holds (`codex mcp add` writes none), as
# `codex mcp get --json` prints them, each with the value it prints when the entry does not
# set it: at the top of its document, then beside the command (`env_vars`, `cwd`).
_ENTRY_SETTINGS: dict[str, object] = {
    "startup_timeout_sec": None,
    "tool_timeout_sec": None,
    "enabled": True,
    "enabled_tools": None,
    "disabled_tools": None,
}
_LAUNCH_SETTINGS: dict[str, object] = {"cwd": None, "env_vars": []}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class Codex(Client):
    """Codex: it starts a server with a short fixed list of variables, plus the recorded ones."""

    label = "Codex"
    executable = "codex"
    argument = "codex"
    remove_hint = f"codex mcp remove {SERVER_NAME}"
    # CODEX_HOME moves it; the message names the variable rather than guess its value.
    config_file = "config.toml in CODEX_HOME (~/.codex unless set)"

    def registered_environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        passed = {name: environ[name] for name in CODEX_PASSED_VARIABLES if name in environ}
        for name in PATH_VARIABLES:
            if passed.get(name):
                passed[name] = _absolute(passed[name])
        for name, separator in PATH_LIST_VARIABLES.items():
            if passed.get(name):
                entries = passed[name].split(separator)
                passed[name] = (separator or " ").join(
                    _absolute(entry) if entry and "://" not in entry else entry for entry in entries
                )
        return passed

    def launch_environment(
        self, environ: Mapping[str, str], registered: Mapping[str, str]
    ) -> dict[str, str]:
        passed = {name: environ[name] for name in CODEX_DEFAULT_ENVIRONMENT if name in environ}
        return passed | dict(registered)

    def unregister(self, cli: str) -> bool:
        removed = run_cli(cli, ["mcp", "remove", SERVER_NAME])
        if removed.returncode != 0:
            raise cli_failed(self, "remove the existing registration", removed)
        # Codex exits 0 either way, and says which.
        return "No MCP server named" not in removed.stdout + removed.stderr

    def registration(self, cli: str, name: str = SERVER_NAME) -> Registration | None:
        shown = run_cli(cli, ["mcp", "get", name, "--json"])
        if shown.returncode != 0:
            if "No MCP server named" in shown.stdout + shown.stderr:
                return None
            raise cli_failed(self, f"read its {name} registration", shown)
        return _codex_registration(shown.stdout)

    def dropped_settings(self, existing: Registration) -> list[str]:
        """What `existing` holds that replacing it drops and setup does not write again.

        Its settings only `config.toml` holds, and the variables of its `env` that setup
        does not record: those it does (`CODEX_PASSED_VARIABLES`) it takes from the shell it
        runs in, every run. A variable whose name suggests a credential is named without its
        value.
        """
        # `enabled` is not one to add back: setup registers the server to run, and one
        # turned off is a problem `status` reports (setup says it turns it on again).
        dropped = [
            f"{key} = {_toml(value)}"
            for key, value in existing.settings.items()
            if key != "enabled"
        ]
        for name, value in sorted(existing.env.items()):
            if name in CODEX_PASSED_VARIABLES:
                continue
            key = f"env.{_toml_key(name)}"
            shown = f"{key} (value not shown)" if may_be_secret(name) else f"{key} = {_toml(value)}"
            dropped.append(shown)
        return dropped

    def _add_arguments(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        options = [f"--env={name}={value}" for name, value in sorted(env.items())]
        return ["mcp", "add", *options, SERVER_NAME, "--", *argv]

    def _check(self, shown: Registration, argv: Sequence[str], env: Mapping[str, str]) -> None:
        if shown.argv != list(argv):
            raise mismatch(self, f"it reports {shown.describe()}, not `{shlex.join(argv)}`")
        if shown.env != dict(env):
            raise mismatch(self, f"its environment holds {sorted(shown.env)}, not {sorted(env)}")


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
    settings = _settings(document, _ENTRY_SETTINGS)
    if isinstance(command, str):
        args, env = entry.get("args"), entry.get("env")
        return Registration(
            command=command,
            args=[str(arg) for arg in args] if isinstance(args, list) else [],
            env={str(key): str(value) for key, value in env.items()}
            if isinstance(env, dict)
            else {},
            settings=settings | _settings(entry, _LAUNCH_SETTINGS),
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
        transport=str(entry.get("type") or "streamable_http"),
        url=url,
        headers=headers,
        settings=settings,
    )


def _settings(printed: dict[str, Any], unset: dict[str, object]) -> dict[str, object]:
    """The settings of `unset` that `printed` holds with another value than when unset."""
    return {
        key: printed[key]
        for key, default in unset.items()
        if printed.get(key) is not None and printed[key] != default
    }


def _toml(value: object) -> str:
    """`value`, as `codex mcp get --json` printed it, written as config.toml writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # Codex prints a timeout of 30 as 30.0
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return f"[{', '.join(_toml(item) for item in value)}]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{_toml_key(str(key))} = {_toml(item)}" for key, item in value.items())
        return f"{{ {pairs} }}" if pairs else "{}"
    # A JSON string is a TOML basic string, control characters escaped.
    return json.dumps(str(value), ensure_ascii=False)


def _toml_key(name: str) -> str:
    """`name` as a TOML key: bare where it can be, else quoted."""
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _absolute(path: str) -> str:
    """`path` with `~` expanded, made absolute against this process's directory."""
    return os.path.abspath(os.path.expanduser(path))  # noqa: PTH100, PTH111
