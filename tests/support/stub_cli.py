"""The body of the stub `claude` and `codex` CLIs (`tests.support.clients` writes them).

`install_stub` writes this module's text into an executable script, followed by a call of
`main` with where to log and keep state. What each answers is what Claude Code 2.1 and
Codex 0.171 print, as far as the installer reads it: the same exit codes, the same lines.

Claude Code keeps a registration at one of three scopes, and `claude mcp get` shows the one
in effect for the directory it runs in: local (the user's own, for that directory) before
user (every directory) before project (a `.mcp.json` in that directory or above, shown as
awaiting approval). `claude mcp add` defaults to local scope, as the real one does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_SCOPES = {
    "user": "User config (available in all your projects)",
    "local": "Local config (private to you in this project)",
    "project": "Project config (shared via .mcp.json)",
}


class _Stub:
    def __init__(self, state: str, whitelist: list[str]) -> None:
        self.state = Path(state)
        self.whitelist = whitelist

    @staticmethod
    def load(path: Path) -> dict[str, Any]:
        try:
            loaded: dict[str, Any] = json.loads(path.read_text())
        except FileNotFoundError:
            return {}
        return loaded

    @staticmethod
    def save(path: Path, servers: dict[str, Any]) -> None:
        path.write_text(json.dumps(servers))


def _say(*lines: str, error: bool = False) -> None:
    for line in lines:
        print(line, file=sys.stderr if error else sys.stdout)


def _connected(entry: dict[str, Any], env: dict[str, str]) -> bool:
    """Whether the registered command answers `initialize`: the client's health check."""
    if entry.get("type", "stdio") != "stdio":
        return False
    try:
        process = subprocess.Popen(
            [entry["command"], *entry["args"]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return False
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "stub", "version": "0"},
        },
    }
    timer = threading.Timer(30, process.kill)
    timer.start()
    try:
        out, _ = process.communicate(json.dumps(request).encode() + b"\n")
    finally:
        timer.cancel()
    return any(b'"serverInfo"' in line for line in out.splitlines())


def _options(words: list[str], valued: set[str]) -> tuple[dict[str, list[str]], list[str]]:
    """`--option value` (or `--option=value`) pairs, and the other words, before any `--`."""
    options: dict[str, list[str]] = {}
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            rest.extend(words[index:])
            break
        name, equals, value = word.partition("=")
        if name in valued:
            if not equals:
                index += 1
                value = words[index]
            options.setdefault(name, []).append(value)
        else:
            rest.append(word)
        index += 1
    return options, rest


def _first(options: dict[str, list[str]], *names: str, default: str) -> str:
    for name in names:
        if options.get(name):
            return options[name][0]
    return default


class _Claude:
    """Claude Code's three scopes, as seen from the working directory."""

    def __init__(self, stub: _Stub) -> None:
        self.stub = stub
        self.here = os.path.realpath(os.getcwd())  # noqa: PTH109 - the key Claude Code uses
        self.local_state = stub.state.with_name(stub.state.stem + "-local.json")
        self.locals = stub.load(self.local_state)
        self.project_file: Path | None = None
        for directory in (Path(self.here), *Path(self.here).parents):
            if (directory / ".mcp.json").is_file():
                self.project_file = directory / ".mcp.json"
                break
        self.scopes: dict[str, dict[str, Any]] = {
            "local": self.locals.get(self.here, {}),
            "user": stub.load(stub.state),
            "project": (
                stub.load(self.project_file).get("mcpServers", {}) if self.project_file else {}
            ),
        }

    def save(self, scope: str) -> None:
        held = self.scopes[scope]
        try:
            if scope == "user":
                self.stub.save(self.stub.state, held)
            elif scope == "local":
                self.stub.save(self.local_state, self.locals | {self.here: held})
            elif self.project_file is not None:
                self.stub.save(self.project_file, {"mcpServers": held})
        except OSError:
            # Claude Code 2.1 whose `~/.claude.json` cannot be written (a read-only file or
            # file system) says what it changed, writes nothing, and exits 0.
            pass
        modified = f"File modified: {os.environ.get('HOME', '')}/.claude.json"
        _say(f"{modified} [project: {self.here}]" if scope == "local" else modified)

    def remove(self, rest: list[str]) -> int:
        options, words = _options(rest, {"--scope", "-s"})
        name = words[0]
        found = [scope for scope, held in self.scopes.items() if name in held]
        scope = _first(options, "--scope", "-s", default="")
        if not scope and len(found) > 1:
            _say(f'MCP server "{name}" exists in multiple scopes:', error=True)
            return 1
        if not scope and not found:
            _say(f'No MCP server named "{name}". Run `claude mcp add` to add one.', error=True)
            return 1
        chosen = scope or found[0]
        outside = chosen == "project" and self.project_file != Path(self.here, ".mcp.json")
        if name not in self.scopes[chosen] or outside:
            where = ".mcp.json" if chosen == "project" else f"{chosen} scope"
            _say(f'No MCP server named "{name}" in {where}', error=True)
            return 1
        del self.scopes[chosen][name]
        _say(f"Removed MCP server {name if scope else repr(name)} from {chosen} config")
        self.save(chosen)
        return 0

    def add(self, rest: list[str]) -> int:
        gate = self.stub.state.with_name("add.gate")
        if gate.exists():
            # A test holds `mcp add` here, a FIFO's reader, until it closes its end.
            with gate.open("rb") as held:
                held.read()
        valued = {"--scope", "-s", "--transport", "-t", "--header", "-H", "--env", "-e"}
        options, words = _options(rest, valued)
        scope = _first(options, "--scope", "-s", default="local")
        transport = _first(options, "--transport", "-t", default="stdio")
        name, launch = words[0], [word for word in words[1:] if word != "--"]
        if name in self.scopes[scope]:
            _say(f"MCP server {name} already exists in {scope} config", error=True)
            return 1
        if transport == "stdio":
            env = dict(e.split("=", 1) for e in options.get("--env", []) + options.get("-e", []))
            entry = {"type": "stdio", "command": launch[0], "args": launch[1:], "env": env}
            _say(
                f"Added stdio MCP server {name} with command: {' '.join(launch)} to {scope} config"
            )
        else:
            headers = [
                h.partition(":") for h in options.get("--header", []) + options.get("-H", [])
            ]
            entry = {
                "type": transport,
                "url": launch[0],
                "headers": {key.strip(): value.strip() for key, _, value in headers},
            }
            kind = "HTTP" if transport == "http" else "SSE"
            _say(f"Added {kind} MCP server {name} with URL: {launch[0]} to {scope} config")
        self.scopes[scope][name] = entry
        self.save(scope)
        return 0

    def get(self, rest: list[str]) -> int:
        name = rest[0]
        found = [scope for scope, held in self.scopes.items() if name in held]
        if not found:
            _say(f'No MCP server named "{name}". Run `claude mcp add` to add one.', error=True)
            return 1
        scope = found[0]
        entry = self.scopes[scope][name]
        _say(f"{name}:", f"  Scope: {_SCOPES[scope]}")
        if scope == "project":
            _say("  Status: ⏸ Pending approval (run `claude` to approve)")
        else:
            env = dict(os.environ) | (entry.get("env") or {})
            status = "✔ Connected" if _connected(entry, env) else "✘ Failed to connect"
            transport = entry.get("type", "stdio")
            _say(f"  Status: {status}", f"  Type: {transport}")
            if transport == "stdio":
                # As Claude Code prints them: the arguments joined by spaces, lines trimmed.
                args = f"  Args: {' '.join(entry['args'])}".rstrip()
                _say(f"  Command: {entry['command']}", args, "  Environment:")
                _say(*(f"    {key}={value}" for key, value in (entry.get("env") or {}).items()))
            else:
                _say(f"  URL: {entry['url']}")
                if entry.get("headers"):
                    _say("  Headers:", *(f"    {k}: {v}" for k, v in entry["headers"].items()))
        _say("", f"To remove this server, run: claude mcp remove {name} -s {scope}")
        return 0


def _codex(stub: _Stub, command: str, rest: list[str]) -> int:
    servers = stub.load(stub.state)
    if command == "remove":
        name = rest[0]
        if servers.pop(name, None) is None:
            _say(f"No MCP server named '{name}' found.")
        else:
            stub.save(stub.state, servers)
            _say(f"Removed global MCP server '{name}'.")
        return 0
    if command == "add":
        options, words = _options(rest, {"--env", "--url", "--bearer-token-env-var"})
        name = words[0]
        if "--url" in options:
            servers[name] = {
                "url": options["--url"][0],
                "bearer_token_env_var": _first(options, "--bearer-token-env-var", default="")
                or None,
            }
        else:
            launch = words[words.index("--") + 1 :]
            env = dict(entry.split("=", 1) for entry in options.get("--env", []))
            passed = {key: os.environ[key] for key in stub.whitelist if key in os.environ}
            servers[name] = {
                "command": launch[0],
                "args": launch[1:],
                "env": env or None,
                "launch_env": passed | env,
            }
        stub.save(stub.state, servers)
        _say(f"Added global MCP server '{name}'.")
        return 0
    if command == "get":
        name = rest[0]
        if name not in servers:
            _say(f"Error: No MCP server named '{name}' found.", error=True)
            return 1
        entry = servers[name]
        if "url" in entry:
            transport = {
                "type": "streamable_http",
                "url": entry["url"],
                "bearer_token_env_var": entry.get("bearer_token_env_var"),
                "http_headers": entry.get("http_headers"),
                "env_http_headers": None,
                "http_headers_helper": None,
            }
        else:
            transport = {
                "type": "stdio",
                "command": entry["command"],
                "args": entry["args"],
                "env": entry.get("env"),
                "env_vars": entry.get("env_vars", []),
                "cwd": entry.get("cwd"),
            }
        # The settings only config.toml holds (`codex mcp add` writes none of them); Codex
        # prints a timeout as seconds in a float, and an unset one as null.
        timeouts = {
            name: None if entry.get(name) is None else float(entry[name])
            for name in ("startup_timeout_sec", "tool_timeout_sec")
        }
        document = {
            "name": name,
            "enabled": entry.get("enabled", True),
            "disabled_reason": None,
            "transport": transport,
            "enabled_tools": entry.get("enabled_tools"),
            "disabled_tools": entry.get("disabled_tools"),
            **timeouts,
        }
        print(json.dumps(document, indent=2))
        return 0
    _say(f"stub: codex mcp {command} is not implemented", error=True)
    return 2


def main(*, log: str, state: str, kind: str, fail: dict[str, str], whitelist: list[str]) -> int:
    """Answer `claude mcp ...` or `codex mcp ...` as the real CLI does; log every call."""
    args = sys.argv[1:]
    with Path(log).open("a") as calls:
        calls.write(json.dumps({"argv": args, "cwd": os.getcwd()}) + "\n")  # noqa: PTH109
    if len(args) < 2 or args[0] != "mcp":
        _say("stub: only `mcp` is implemented", error=True)
        return 2
    command, rest = args[1], args[2:]
    if command in fail:
        _say(fail[command], error=True)
        return 1
    stub = _Stub(state, whitelist)
    if kind == "codex":
        return _codex(stub, command, rest)
    claude = _Claude(stub)
    if command in {"remove", "add", "get"}:
        code: int = getattr(claude, command)(rest)
        return code
    _say(f"stub: claude mcp {command} is not implemented", error=True)
    return 2
