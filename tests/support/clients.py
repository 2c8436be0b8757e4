"""Recording stand-ins for the `claude` and `codex` CLIs, put on PATH by the tests.

Each stub is a small Python script (`tests.support.stub_cli`) that appends its argv and
working directory to a JSON-lines log and keeps the registrations in JSON files, answering
`mcp remove`, `mcp add` and `mcp get` the way the real CLI does (same exit codes and the
output the installer reads back):

- `claude mcp remove NAME --scope user` exits 1 with `No MCP server named ...` when absent;
  `claude mcp add` refuses an existing name and defaults to local scope, kept per working
  directory; `claude mcp get NAME` reports the registration in effect for its working
  directory (local, else user, else a `.mcp.json`'s), prints `Args:` joined by spaces,
  starts a stdio command with its own environment, sends `initialize`, and prints
  `✔ Connected` only when it is answered — as Claude Code does. `--transport http` entries
  print their URL and headers.
- `codex mcp remove NAME` exits 0 when absent; `codex mcp add [--env K=V]... NAME -- CMD...`
  (or `NAME --url URL`) overwrites the whole entry; `codex mcp get NAME --json` prints the
  entry in Codex's layout (`transport.command`, `.args`, `.env`, `.env_vars`, `.cwd`; or
  `transport.url`), with the settings only `config.toml` holds (`enabled`, `enabled_tools`,
  `disabled_tools`, the two timeouts) from the entry a test wrote into the state, as a user
  edits `config.toml` by hand.

A stub can be told to fail one subcommand (`fail={"add": "..."}`), for error paths. A stub
`claude` whose state file cannot be written (made read-only by a mount) prints what it
changed and exits 0 having written nothing, as Claude Code does with a read-only
`~/.claude.json`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import stub_cli

# What Codex passes a stdio MCP server from its own environment (codex-rs/rmcp-client,
# DEFAULT_ENV_VARS on Unix), written out independently of the installer's copy.
CODEX_LAUNCH_WHITELIST = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING",
    "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
]  # fmt: skip

_MAIN = """
if __name__ == "__main__":
    sys.exit(
        main(log={log!r}, state={state!r}, kind={kind!r}, fail={fail!r}, whitelist={whitelist!r})
    )
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
        return [call["argv"] for call in self._logged()]

    def directories(self) -> list[str]:
        """The working directory of every call, in order."""
        return [call["cwd"] for call in self._logged()]

    def _logged(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    @property
    def local_state(self) -> Path:
        """Where the stub `claude` keeps local-scope registrations, by working directory."""
        return self.state.with_name(self.state.stem + "-local.json")

    def register_locally(self, directory: Path, entry: dict[str, Any]) -> None:
        """A local-scope `kinetis-docs` for `directory`, as `claude mcp add` run there makes."""
        key = os.path.realpath(directory)
        self.local_state.write_text(json.dumps({key: {"kinetis-docs": entry}}))

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
    stub = stub_at(kind, bin_dir, state_dir)
    body = Path(stub_cli.__file__).read_text(encoding="utf-8")
    ending = _MAIN.format(
        log=os.fspath(stub.log),
        state=os.fspath(stub.state),
        kind=kind,
        fail=fail or {},
        whitelist=CODEX_LAUNCH_WHITELIST,
    )
    stub.path.write_text(f"#!{sys.executable}\n{body}{ending}", encoding="utf-8")
    stub.path.chmod(0o755)
    return stub


def stub_at(kind: str, bin_dir: Path, state_dir: Path) -> StubClient:
    """The stub `install_stub(kind, bin_dir, state_dir)` writes (or wrote) there."""
    return StubClient(
        kind, bin_dir / kind, state_dir / f"{kind}-calls.jsonl", state_dir / f"{kind}-servers.json"
    )
