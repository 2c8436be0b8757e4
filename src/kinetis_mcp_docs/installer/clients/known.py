"""The clients this installer knows, and which one a command's argument names."""

from __future__ import annotations

from .base import Client
from .claude_code import ClaudeCode
from .codex import Codex

CLAUDE = ClaudeCode()
CODEX = Codex()
CLIENTS: tuple[Client, ...] = (CLAUDE, CODEX)


def client_named(name: str | None) -> Client:
    """`None` (no argument) is Claude Code; `"codex"` is Codex."""
    return CODEX if name == "codex" else CLAUDE
