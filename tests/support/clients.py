"""Recording stand-ins for the `claude` and `codex` CLIs, put on PATH by the tests.

Each stub is a small Python script that appends its argv to a JSON-lines log and keeps the
registrations in a JSON file, answering `mcp remove`, `mcp add` and `mcp get` the way the
real CLI does (same exit codes and the output setup reads back):

- `claude mcp remove NAME --scope user` exits 1 with `No MCP server named ...` when absent;
  `claude mcp add` refuses an existing name; `claude mcp get NAME` starts the registered
  command with its own environment, sends `initialize`, and prints `✓ Connected` only when
  it is answered — as Claude Code does.
- `codex mcp remove NAME` exits 0 when absent; `codex mcp add [--env K=V]... NAME -- CMD...`
  overwrites; `codex mcp get NAME --json` prints the entry in Codex's layout
  (`transport.command`, `.args`, `.env`).

A stub can be told to fail one subcommand (`fail={"add": "..."}`), for error paths.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What Codex passes a stdio MCP server from its own environment (codex-rs/rmcp-client,
# DEFAULT_ENV_VARS on Unix), written out independently of the installer's copy.
CODEX_LAUNCH_WHITELIST = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING",
    "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
]  # fmt: skip

_STUB = r"""#!{python}
import json, os, subprocess, sys, threading

LOG = {log!r}
STATE = {state!r}
KIND = {kind!r}
FAIL = {fail!r}
args = sys.argv[1:]
with open(LOG, "a") as log:
    log.write(json.dumps(args) + "\n")

def load():
    try:
        with open(STATE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {{}}

def save(servers):
    with open(STATE, "w") as f:
        json.dump(servers, f)

def connected(entry):
    env = dict(os.environ) if KIND == "claude" else entry["launch_env"]
    try:
        process = subprocess.Popen(
            [entry["command"], *entry["args"]], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return False
    request = {{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {{
        "protocolVersion": "2025-06-18", "capabilities": {{}},
        "clientInfo": {{"name": "stub", "version": "0"}}}}}}
    timer = threading.Timer(30, process.kill)
    timer.start()
    try:
        out, _ = process.communicate(json.dumps(request).encode() + b"\n")
    finally:
        timer.cancel()
    for line in out.splitlines():
        try:
            if "serverInfo" in json.loads(line).get("result", {{}}):
                return True
        except ValueError:
            pass
    return False

if len(args) < 2 or args[0] != "mcp":
    sys.exit("stub: only `mcp` is implemented")
command = args[1]
if command in FAIL:
    print(FAIL[command], file=sys.stderr)
    sys.exit(1)
servers = load()
rest = args[2:]
if KIND == "claude":
    if command == "remove":
        name = rest[0]
        if name not in servers:
            print(f'No MCP server named "{{name}}" in user scope', file=sys.stderr)
            sys.exit(1)
        del servers[name]
        save(servers)
        print(f"Removed MCP server {{name}} from user config")
    elif command == "add":
        dash = rest.index("--")
        options, words = rest[:dash], rest[dash + 1:]
        name = options[-1]
        if name in servers:
            print(f"MCP server {{name}} already exists in user config", file=sys.stderr)
            sys.exit(1)
        servers[name] = {{"command": words[0], "args": words[1:], "env": {{}}}}
        save(servers)
        print(f"Added stdio MCP server {{name}} to user config")
    elif command == "get":
        name = rest[0]
        if name not in servers:
            # What Claude Code 2.1 prints (on stderr) for a name it does not have.
            said = f'No MCP server named "{{name}}". Run `claude mcp add` to add one.'
            print(said, file=sys.stderr)
            sys.exit(1)
        entry = servers[name]
        status = "✓ Connected" if connected(entry) else "✘ Failed to connect"
        print(f"{{name}}:")
        print("  Scope: User config (available in all your projects)")
        print(f"  Status: {{status}}")
        print("  Type: stdio")
        print(f"  Command: {{entry['command']}}")
        print(f"  Args: {{' '.join(entry['args'])}}")
        print("  Environment:")
        for key, value in (entry.get("env") or {{}}).items():
            print(f"    {{key}}={{value}}")
    else:
        sys.exit(f"stub: claude mcp {{command}} is not implemented")
else:
    if command == "remove":
        name = rest[0]
        if servers.pop(name, None) is None:
            print(f"No MCP server named '{{name}}' found.")
        else:
            save(servers)
            print(f"Removed global MCP server '{{name}}'.")
    elif command == "add":
        dash = rest.index("--")
        options, words = rest[:dash], rest[dash + 1:]
        env, name, i = {{}}, None, 0
        while i < len(options):
            option = options[i]
            if option.startswith("--env="):
                key, _, value = option[len("--env="):].partition("=")
                env[key] = value
            elif option == "--env":
                key, _, value = options[i + 1].partition("=")
                env[key] = value
                i += 1
            else:
                name = option
            i += 1
        whitelist = {whitelist!r}
        launch_env = {{k: os.environ[k] for k in whitelist if k in os.environ}} | env
        servers[name] = {{"command": words[0], "args": words[1:], "env": env or None,
                          "launch_env": launch_env}}
        save(servers)
        print(f"Added global MCP server '{{name}}'.")
    elif command == "get":
        name = rest[0]
        if name not in servers:
            sys.exit(f"Error: No MCP server named '{{name}}' found.")
        entry = servers[name]
        print(json.dumps({{"name": name, "enabled": True, "transport": {{
            "type": "stdio", "command": entry["command"], "args": entry["args"],
            "env": entry["env"], "env_vars": [], "cwd": None}}}}, indent=2))
    else:
        sys.exit(f"stub: codex mcp {{command}} is not implemented")
"""


@dataclass(frozen=True)
class StubClient:
    """One stub CLI: where it lives, what it was called with, what it holds."""

    kind: str
    path: Path
    log: Path
    state: Path

    def calls(self) -> list[list[str]]:
        """Every argv (without the program name) the stub received, in order."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def registrations(self) -> dict[str, Any]:
        """The servers the stub holds, by name."""
        if not self.state.exists():
            return {}
        loaded: dict[str, Any] = json.loads(self.state.read_text())
        return loaded

    def clear_log(self) -> None:
        self.log.unlink(missing_ok=True)


def install_stub(
    kind: str,
    bin_dir: Path,
    state_dir: Path,
    *,
    fail: dict[str, str] | None = None,
) -> StubClient:
    """Write a stub `claude` or `codex` into `bin_dir`; its log and state go to `state_dir`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    log = state_dir / f"{kind}-calls.jsonl"
    state = state_dir / f"{kind}-servers.json"
    path = bin_dir / kind
    path.write_text(
        _STUB.format(
            python=sys.executable,
            log=os.fspath(log),
            state=os.fspath(state),
            kind=kind,
            fail=fail or {},
            whitelist=CODEX_LAUNCH_WHITELIST,
        )
    )
    path.chmod(0o755)
    return StubClient(kind, path, log, state)
