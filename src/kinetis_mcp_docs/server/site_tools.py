"""`search_docs` and `fetch_page`: the HTTP route's two tools, over a set of pages by URL path.

Their definitions are the contract's, word for word but for the product's name. A result
is one text block holding a JSON document written with two-space indentation; a failure
the tool reports itself (an empty query, a page not found, an unknown tool name) is a
text block with `isError: true`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .page_paths import page_path, page_segments
from .tools import Number, Text, Tool, Toolset, input_schema

if TYPE_CHECKING:
    from .site import SitePages
    from .tools import Arguments, Result

SEARCH_DOCS = "search_docs"
FETCH_PAGE = "fetch_page"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20

QUERY = Text("query", {"type": "string", "description": "Free-text search query."})
LIMIT = Number(
    "limit",
    {
        "type": "number",
        "description": "Maximum number of results to return.",
        "default": DEFAULT_LIMIT,
    },
    low=1,
    high=MAX_LIMIT,
)
URL = Text("url", {"type": "string", "description": 'Page path starting with "/" or relative.'})


def text_result(text: str, *, is_error: bool = False) -> Result:
    """A `tools/call` result of one text block; `isError` only when it is one."""
    result: Result = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _document(document: dict[str, object]) -> Result:
    return text_result(json.dumps(document, indent=2, ensure_ascii=False))


class _SiteTool(Tool):
    """A tool over the site's pages."""

    __slots__ = ("_pages",)

    def __init__(self, definition: dict[str, object], pages: SitePages) -> None:
        super().__init__(definition)
        self._pages = pages


class SearchDocs(_SiteTool):
    """`search_docs`: the pages matching a free-text query, best first."""

    __slots__ = ()

    def __init__(self, pages: SitePages) -> None:
        super().__init__(
            {
                "name": SEARCH_DOCS,
                "description": (
                    "Search Kinetis documentation by free-text query. Returns matching pages "
                    "with title, URL, and snippet."
                ),
                "inputSchema": input_schema((QUERY, LIMIT), ("query",), closed=False),
            },
            pages,
        )

    def call(self, arguments: Arguments) -> Result:
        # `null` is an absent query, as the contract's route reads it; a number is refused.
        present = arguments.get("query") is not None
        query = QUERY.optional(SEARCH_DOCS, arguments) if present else None
        limit = LIMIT.take(arguments)
        if query is None or not query.split():
            return text_result("Missing or empty query.", is_error=True)
        hits = self._pages.search(query, limit)
        results = [{"title": hit.title, "url": hit.url, "snippet": hit.snippet} for hit in hits]
        return _document({"query": query, "results": results})


class FetchPage(_SiteTool):
    """`fetch_page`: a page's file (or the page on main) exactly as it is, frontmatter included."""

    __slots__ = ()

    def __init__(self, pages: SitePages) -> None:
        super().__init__(
            {
                "name": FETCH_PAGE,
                "description": (
                    "Fetch the raw Markdown or MDX content of a documentation page by URL path "
                    '(for example, "/agent-workflow").'
                ),
                "inputSchema": input_schema((URL,), ("url",), closed=False),
            },
            pages,
        )

    def call(self, arguments: Arguments) -> Result:
        segments = page_segments(URL.take(FETCH_PAGE, arguments))
        path = page_path(segments)
        key = self._pages.resolve(segments)
        if key is None:
            return text_result(f"Page not found: {path}", is_error=True)
        return _document({"url": path, "content": self._pages.read(key, path)})


def _unknown_tool(name: str) -> Result:
    return text_result(f"Unknown tool: {name}", is_error=True)


def site_toolset(pages: SitePages) -> Toolset:
    """Both tools over `pages`; an unknown tool name is a result with `isError: true`."""
    return Toolset((SearchDocs(pages), FetchPage(pages)), _unknown_tool)
