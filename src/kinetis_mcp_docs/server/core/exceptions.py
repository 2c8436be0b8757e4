"""The exceptions the application core raises; each host maps them to its own wire.

The stdio server and the HTTP route both map them through one table
(`errors.ERRORS`), and a test holds that every class here has its entry there.
"""

from __future__ import annotations


class DocsError(Exception):
    """Base of the errors DocsApplication raises."""


class InvalidArguments(DocsError):
    """Arguments or a tool name outside the contract (JSON-RPC -32602)."""


class RejectedUrl(InvalidArguments):
    """A page URL refused before any file is opened; the message is the whole wire message.

    `Path traversal rejected` or `Malformed URL parameter`, as the HTTP route's contract
    words them, or `URL too long: ...` (JSON-RPC -32602).
    """


class UnknownResource(DocsError):
    """A resource URI outside the catalogue (MCP -32002); no fetch was made."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}")
        self.uri = uri


class PageUnavailable(DocsError):
    """The page could not be fetched or is not valid UTF-8 (JSON-RPC -32603)."""

    def __init__(self, uri: str, url: str, reason: str) -> None:
        super().__init__(f'Could not read "{uri}".')
        self.uri = uri
        self.url = url
        self.reason = reason
