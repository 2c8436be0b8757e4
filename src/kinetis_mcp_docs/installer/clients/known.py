"""The clients this installer knows, and which one a command's argument names."""

from __future__ import annotations

from kinetis_mcp_docs.installer.clients.base import Client
from kinetis_mcp_docs.installer.clients.claude_code import ClaudeCode
from kinetis_mcp_docs.installer.clients.codex import Codex

CLAUDE = ClaudeCode()
CODEX = Codex()
CLIENTS: tuple[Client, ...] = (CLAUDE, CODEX)


def client_named(name: str | None) -> Client:
    """`None` (no argument) is Claude Code; `"codex"` is Codex."""
    return CODEX if name == "codex" else CLAUDE
