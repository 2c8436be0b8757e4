"""DocsApplication: the catalogue, the whole-page read and both tools, without any wire.

This is the embeddable core. The stdio server wraps it in JSON-RPC; a host server can
compose it in its own process and publish the same resources and tools beside its own.
Errors are this module's exceptions; each host maps them to its own wire.

Importing this module is cheap, because the stdio server imports it on every spawn:
`json`, `typing` (through `pages`) and the HTTP client are imported on the first page
read, which pays for the network anyway.
"""

from __future__ import annotations

from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

from .. import __version__
from . import catalogue
from .lines import read_window, search_lines
from .tools import READ_DOC, TOOLS, ArgumentError, validate_arguments

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from .pages import PageSource

SERVER_NAME = "kinetis-mcp-docs"

INSTRUCTIONS = (
    "This server serves the current Kinetis documentation, fetched live from the Kinetis "
    "repository. Read these pages rather than answering Kinetis questions from memory. "
    "Start with kinetis://docs/agent-workflow. Read a page with kinetis_read_doc, a bounded "
    "window of lines (continue at endLine + 1 while hasMore is true); locate a named term in "
    "a page you know with kinetis_search_doc, then read a window around the match; use "
    "resources/read only when you need a whole page. Pages come from the main branch, so "
    "they can describe behaviour newer than the Kinetis release installed in the project "
    "you are working on: check that release before relying on a recent feature."
)


class DocsError(Exception):
    """Base of the errors DocsApplication raises."""


class InvalidArguments(DocsError):
    """Arguments or a tool name outside the contract (JSON-RPC -32602)."""


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


class DocsApplication:
    """The Kinetis docs resources and tools over a page source. Safe to call from threads."""

    def __init__(self, source: PageSource | None = None) -> None:
        self._source = source
        self._source_lock = allocate_lock()

    @property
    def server_info(self) -> dict[str, str]:
        return {"name": SERVER_NAME, "version": __version__}

    @property
    def instructions(self) -> str:
        return INSTRUCTIONS

    def resources(self) -> list[dict[str, object]]:
        """Every catalogue page, as `resources/list` entries."""
        return catalogue.resources()

    def read_resource(self, uri: object) -> dict[str, object]:
        """One `resources/read` contents entry holding the whole page."""
        if not isinstance(uri, str) or not uri:
            raise InvalidArguments('"uri" must be a non-empty string.')
        slug = catalogue.slug_of(uri)
        if slug is None:
            raise UnknownResource(uri)
        return {"uri": uri, "mimeType": catalogue.MIME_TYPE, "text": self._fetch(uri, slug)}

    def tools(self) -> list[dict[str, object]]:
        """Both tool definitions, as `tools/list` entries."""
        return [dict(tool) for tool in TOOLS]

    def call_tool(self, name: object, arguments: object = None) -> dict[str, object]:
        """Run a tool: a `tools/call` result with the document as text and as structuredContent.

        Arguments are validated completely before any page is fetched. A window or search
        that ran and was refused is a result with `isError: true`, not an exception.
        """
        if not isinstance(name, str):
            raise InvalidArguments('"name" must be a string naming a tool.')
        try:
            checked = validate_arguments(name, {} if arguments is None else arguments)
        except ArgumentError as error:
            raise InvalidArguments(str(error)) from None
        uri = str(checked["uri"])
        slug = catalogue.slug_of(uri)
        if slug is None:
            return _tool_result({"status": "resource_unknown"}, is_error=True)
        text = self._fetch(uri, slug)
        start_line = int(str(checked["startLine"]))
        if name == READ_DOC:
            document = window_document(uri, text, start_line, int(str(checked["lineCount"])))
        else:
            document = search_document(uri, text, str(checked["query"]), start_line)
        if document is None:
            return _tool_result({"status": "line_out_of_range"}, is_error=True)
        return _tool_result(document, is_error=False)

    def close(self) -> None:
        with self._source_lock:
            if self._source is not None:
                self._source.close()

    def _fetch(self, uri: str, slug: str) -> str:
        from .pages import PageFetchError  # noqa: PLC0415 - see the module's docstring

        source = self._page_source()
        try:
            return source.fetch(slug)
        except PageFetchError as error:
            raise PageUnavailable(uri, error.url, error.reason) from error

    def _page_source(self) -> PageSource:
        with self._source_lock:
            if self._source is None:
                # Imported here: httpx costs more start-up time than everything else.
                from .fetcher import HttpPageSource  # noqa: PLC0415

                self._source = HttpPageSource()
            return self._source


def window_document(
    uri: str, text: str, start_line: int, line_count: int
) -> dict[str, object] | None:
    """The `kinetis_read_doc` success document, or None when `start_line` is out of range."""
    window = read_window(text, start_line, line_count)
    if window is None:
        return None
    return {
        "status": "ok",
        "uri": uri,
        "startLine": window.start_line,
        "endLine": window.end_line,
        "hasMore": window.has_more,
        "content": window.content,
    }


def search_document(uri: str, text: str, query: str, start_line: int) -> dict[str, object] | None:
    """The `kinetis_search_doc` success document, or None when `start_line` is out of range."""
    found = search_lines(text, query, start_line)
    if found is None:
        return None
    return {
        "status": "ok",
        "uri": uri,
        "query": query,
        "startLine": start_line,
        "matches": [{"line": match.line, "content": match.content} for match in found.matches],
        "hasMore": found.has_more,
    }


def _tool_result(document: dict[str, object], *, is_error: bool) -> dict[str, object]:
    import json  # noqa: PLC0415 - see the module's docstring

    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": document,
        "isError": is_error,
    }
