"""Claude Code: registered at user scope; it starts a server with the environment it
inherited, from the shell that started it, so the server sees what setup saw.

Claude Code has no machine-readable read-back (`claude mcp get` prints `Args:` joined by
spaces), so the command this installer registers is split again by its known shape,
keeping a path's spaces.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence

from ..errors import InstallerError
from ..names import DOCS_DIR_OPTION, START_ARGUMENTS
from .base import (
    SERVER_NAME,
    Client,
    cli_failed,
    may_be_secret,
    mismatch,
    run_cli,
)
from .registration import STDIO, Registration
from .scope import other_scope


class ClaudeCode(Client):
    """Claude Code: user scope; it starts a server with the environment it inherited."""

    label = "Claude Code"
    executable = "claude"
    argument = None
    remove_hint = f"claude mcp remove {SERVER_NAME} --scope user"
    config_file = "~/.claude.json"

    def unregister(self, cli: str) -> bool:
        removed = run_cli(cli, ["mcp", "remove", SERVER_NAME, "--scope", "user"])
        if removed.returncode == 0:
            return True
        if "No MCP server named" in removed.stdout + removed.stderr:
            return False
        raise cli_failed(self, "remove the existing registration", removed)

    def registration(self, cli: str, name: str = SERVER_NAME) -> Registration | None:
        shown = run_cli(cli, ["mcp", "get", name])
        if shown.returncode != 0:
            said = shown.stdout + shown.stderr
            # Claude Code 2.x says "No MCP server named ..."; earlier releases said "found".
            if "No MCP server named" in said or "No MCP server found" in said:
                return None
            raise cli_failed(self, f"read its {name} registration", shown)
        return _claude_registration(shown.stdout)

    def dropped_settings(self, existing: Registration) -> list[str]:
        """The variables of `existing`'s `env`: setup registers none with Claude Code, so
        each was added by hand (`claude mcp add -e`, or in `~/.claude.json`), and each is
        written as it goes back into the entry's `"env"`. One whose name suggests a
        credential is named without its value."""
        dropped = []
        for name, value in sorted(existing.env.items()):
            member = json.dumps(name)
            if may_be_secret(name):
                dropped.append(f'"env": {{{member}: ...}} (value not shown)')
            else:
                dropped.append(f'"env": {{{member}: {json.dumps(value)}}}')
        return dropped

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
            raise mismatch(self, f"it reports {shown.describe()}, not `{shlex.join(argv)}`")
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
