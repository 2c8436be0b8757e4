"""`kinetis_read_doc` and `kinetis_search_doc`: a window and a search of one catalogue page.

Their schemas are closed. Every argument is read and checked before the page is fetched;
a window or search that ran and was refused is a result with `isError: true` carrying
only its code, not an exception.
"""

from __future__ import annotations

from ..codec import dumps
from ..core.lines import MAX_LINE_COUNT, read_window, search_lines
from .base import Integer, Text, Tool, Toolset, check_closed, input_schema, refuse_unknown

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ClassVar

    from .base import Argument, Arguments, Result

    PageReader = Callable[[str], "str | None"]
    """The current text of a catalogue page by URI; None when the URI names no page."""
    Builder = Callable[[str, str], "dict[str, object] | None"]
    """A tool's document from (uri, text), or None when `startLine` is out of range."""

READ_DOC = "kinetis_read_doc"
SEARCH_DOC = "kinetis_search_doc"
MAX_QUERY_LENGTH = 256

URI = Text(
    "uri",
    {
        "type": "string",
        "minLength": 1,
        "description": "A catalogue page, e.g. kinetis://docs/agent-workflow (see resources/list).",
    },
)
_START_LINE = {"type": "integer", "minimum": 1, "default": 1}
WINDOW_START = Integer("startLine", {**_START_LINE, "description": "First line to return, from 1."})
LINE_COUNT = Integer(
    "lineCount",
    {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LINE_COUNT,
        "default": MAX_LINE_COUNT,
        "description": "Most lines to return, 1 to 200.",
    },
)
QUERY = Text(
    "query",
    {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_QUERY_LENGTH,
        "description": "Literal text to find (1 to 256 characters, no pattern syntax).",
    },
)
SEARCH_START = Integer("startLine", {**_START_LINE, "description": "First line to scan, from 1."})

_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": True,
}

_REFUSED_UNKNOWN: dict[str, object] = {"status": "resource_unknown"}
_REFUSED_RANGE: dict[str, object] = {"status": "line_out_of_range"}


class _PageTool(Tool):
    """A tool over one catalogue page. A call checks the closed schema, reads the typed
    arguments, then fetches the page once and builds the tool's document from it."""

    __slots__ = ("_read",)
    accepted: ClassVar[tuple[Argument, ...]]
    required: ClassVar[tuple[str, ...]]

    def __init__(self, read: PageReader, name: str, title: str, description: str) -> None:
        super().__init__(
            {
                "name": name,
                "title": title,
                "description": description,
                "inputSchema": input_schema(self.accepted, self.required, closed=True),
                "annotations": {"title": title, **_ANNOTATIONS},
            }
        )
        self._read = read

    def call(self, arguments: Arguments) -> Result:
        check_closed(self.name, arguments, self.accepted, self.required)
        uri = URI.take(self.name, arguments)
        build = self.builder(arguments)
        text = self._read(uri)
        if text is None:
            return document_result(_REFUSED_UNKNOWN, is_error=True)
        document = build(uri, text)
        if document is None:
            return document_result(_REFUSED_RANGE, is_error=True)
        return document_result(document, is_error=False)

    def builder(self, arguments: Arguments) -> Builder:
        """Reads the arguments after `uri`; what builds the document from the page's text."""
        raise NotImplementedError


class ReadDoc(_PageTool):
    """`kinetis_read_doc`: one bounded window of lines of one page."""

    __slots__ = ()
    accepted = (URI, WINDOW_START, LINE_COUNT)
    required = ("uri",)

    def __init__(self, read: PageReader) -> None:
        super().__init__(
            read,
            READ_DOC,
            "Read a Kinetis docs page",
            "Read a window of lines of one Kinetis documentation page, fetched live. "
            "Returns at most lineCount lines (default and maximum 200) and at most "
            "32 KiB, never splitting a line. Continue with startLine = endLine + 1 "
            "while hasMore is true. Refusals: resource_unknown (no such page), "
            "line_out_of_range.",
        )

    def builder(self, arguments: Arguments) -> Builder:
        start_line = WINDOW_START.take(READ_DOC, arguments)
        line_count = LINE_COUNT.take(READ_DOC, arguments)
        return lambda uri, text: window_document(uri, text, start_line, line_count)


class SearchDoc(_PageTool):
    """`kinetis_search_doc`: the lines of one page that contain a literal string."""

    __slots__ = ()
    accepted = (URI, QUERY, SEARCH_START)
    required = ("uri", "query")

    def __init__(self, read: PageReader) -> None:
        super().__init__(
            read,
            SEARCH_DOC,
            "Search a Kinetis docs page",
            "Find the lines of one Kinetis documentation page that contain a literal, "
            "case-sensitive string; then read around a match with kinetis_read_doc. "
            "At most 50 matches; when hasMore is true, continue with startLine = last "
            "match line + 1. Refusals: resource_unknown, line_out_of_range.",
        )

    def builder(self, arguments: Arguments) -> Builder:
        query = QUERY.take(SEARCH_DOC, arguments)
        start_line = SEARCH_START.take(SEARCH_DOC, arguments)
        return lambda uri, text: search_document(uri, text, query, start_line)


def doc_toolset(read: PageReader) -> Toolset:
    """Both tools over `read`; an unknown tool name is `InvalidArguments`."""
    return Toolset((ReadDoc(read), SearchDoc(read)), refuse_unknown)


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


def document_result(document: dict[str, object], *, is_error: bool) -> Result:
    """A `tools/call` result carrying `document` as compact JSON text and as structuredContent."""
    return {
        "content": [{"type": "text", "text": dumps(document)}],
        "structuredContent": document,
        "isError": is_error,
    }
