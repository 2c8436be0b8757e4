"""`search_docs` and `fetch_page`: the HTTP route's two tools, over a set of pages by URL path.

Their definitions are the contract's, word for word but for the product's name. A result
is one text block holding a JSON document written with two-space indentation; a failure
the tool reports itself (an empty query, a page not found, a tool name that is not one of
the two, whatever its type) is a text block with `isError: true`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from json.encoder import encode_basestring as _string
from typing import TYPE_CHECKING

from ..codec import LongInteger
from ..core.lines import MAX_LINE_COUNT, MAX_WINDOW_BYTES, read_window
from ..search import bounds
from ..search.index import Hits
from ..site.page_paths import page_path, page_segments
from ..site.pages import NothingReadable
from .base import Argument, Integer, Text, Tool, Toolset, input_schema

if TYPE_CHECKING:
    from ..search.index import Hit
    from ..site.pages import SitePages
    from .base import Arguments, Result

SEARCH_DOCS = "search_docs"
FETCH_PAGE = "fetch_page"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
# A query's cost grows with its different words: one past these bounds is ranked on its
# most informative leading words within them, and its result says how many it used
# (`termsUsed`; see `search.bounds`).
MAX_QUERY_CHARACTERS = bounds.MAX_CHARACTERS
MAX_QUERY_WORDS = bounds.MAX_WORDS

# What JavaScript's `Number(text)` trims as whitespace (its WhiteSpace and LineTerminator).
_JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    map(chr, range(0x2000, 0x200B))
)
# A run of it, matched by the regular-expression engine in C: `str.strip(chars)` costs
# four times as much a character, which a `limit` of 2 MB of whitespace makes 40 ms.
_JS_SPACE_RUN = re.compile(f"[{re.escape(_JS_SPACE)}]*")
_DIGITS = {16: b"0123456789abcdefABCDEF", 8: b"01234567", 2: b"01"}
_RADIX = {b"0x": 16, b"0X": 16, b"0o": 8, b"0O": 8, b"0b": 2, b"0B": 2}
_SIGNS = (b"+", b"-")


def js_number(value: object) -> int | float | None:
    """`value` as the number JavaScript's `Number(value)` makes of a number or a numeric
    string (`"10"`, `" 2.5e1 "`, `"0x10"`, `"-Infinity"`); None for anything else: other
    strings (`""` included, which JavaScript reads as 0), `null`, booleans, arrays,
    objects, and NaN. An integer may lie past every float (`10**309`): it is returned as is.

    A string is read in time linear in its length, by the bytes methods that run in C: a
    regular expression for the grammar backtracked, quadratically, on a long run of digits
    followed by a character no number holds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value  # a host in-process can pass NaN
    if not isinstance(value, str):
        return None
    # Every numeric literal is ASCII: what is not, beyond the whitespace trimmed, is no
    # number. ASCII text is trimmed as bytes, whose own whitespace is exactly JavaScript's.
    if value.isascii():
        return _numeric_literal(value.encode("ascii").strip())
    core = _js_trimmed(value)
    return _numeric_literal(core.encode("ascii")) if core.isascii() else None


def _js_trimmed(text: str) -> str:
    """`text` without JavaScript's whitespace at either end."""
    start = _space_run(text)
    if start == len(text):
        return ""
    return text[start : len(text) - _space_run(text[::-1])]


def _space_run(text: str) -> int:
    found = _JS_SPACE_RUN.match(text)
    return found.end() if found else 0


def _numeric_literal(text: bytes) -> int | float | None:
    """The value of a `StringNumericLiteral` without its whitespace; None if it is none."""
    radix = _RADIX.get(text[:2])
    if radix is not None:  # no sign: JavaScript reads "-0x10" as NaN
        digits = text[2:]
        if not digits or digits.translate(None, _DIGITS[radix]):
            return None
        return int(digits, radix)  # a hexadecimal literal past every float is an integer
    unsigned = text[1:] if text[:1] in _SIGNS else text
    if unsigned == b"Infinity":
        return -math.inf if text[:1] == b"-" else math.inf
    mantissa, marker, exponent = unsigned.replace(b"E", b"e").partition(b"e")
    if marker:
        exponent = exponent[1:] if exponent[:1] in _SIGNS else exponent
        if not exponent.isdigit():  # bytes: ASCII digits only
            return None
    whole, _, fraction = mantissa.partition(b".")
    if not (whole or fraction):
        return None
    if (whole and not whole.isdigit()) or (fraction and not fraction.isdigit()):
        return None
    return float(text)  # a literal too large for a float is an infinity, as in JavaScript


class LenientNumber(Argument):
    """A `number` that is never refused: floored and clamped to [low, high], a numeric string
    read as JavaScript reads it, anything else the schema's default."""

    __slots__ = ("high", "low")

    def __init__(self, name: str, schema: dict[str, object], *, low: int, high: int) -> None:
        super().__init__(name, schema)
        self.low = low
        self.high = high

    def problem(self, value: object) -> str | None:  # noqa: ARG002 - nothing is refused
        return None

    def take(self, arguments: Arguments) -> int:
        default = self.schema["default"]
        assert isinstance(default, int)  # noqa: S101 - the schema is written that way
        number = js_number(arguments.get(self.name, default))
        if number is None:
            return default
        # An integer is compared as it is: one past every float (10**309) has no float.
        if isinstance(number, float):
            if math.isinf(number):
                return self.high if number > 0 else self.low
            number = math.floor(number)
        return max(self.low, min(self.high, number))


QUERY = Text("query", {"type": "string", "description": "Free-text search query."})
LIMIT = LenientNumber(
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
# A window of the page, with kinetis_read_doc's rules (`lines.read_window`): either argument
# asks for one; without both the whole file comes back, as the contract has it.
START_LINE = Integer(
    "startLine",
    {
        "type": "integer",
        "minimum": 1,
        "default": 1,
        "description": (
            "First line to return, from 1 (a search result's `line`). With startLine or "
            "lineCount, a window of whole lines comes back instead of the whole file."
        ),
    },
)
LINE_COUNT = Integer(
    "lineCount",
    {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LINE_COUNT,
        "default": MAX_LINE_COUNT,
        "description": (
            f"Most lines to return, 1 to {MAX_LINE_COUNT}; the window also stops before "
            f"{MAX_WINDOW_BYTES // 1024} KiB, never splitting a line. Continue at endLine + 1 "
            "while hasMore is true."
        ),
    },
)


def text_result(text: str, *, is_error: bool = False) -> Result:
    """A `tools/call` result of one text block; `isError` only when it is one."""
    result: Result = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def search_document(query: str, hits: Iterable[Hit], terms_used: int | None = None) -> str:
    """`{"query": …, "termsUsed"?: …, "results": [{"title", "url", "snippet", "line"?}, …]}`
    exactly as `json.dumps(document, indent=2, ensure_ascii=False)` writes it; `termsUsed`
    only for a query past the bound, which was ranked on that many of its words.

    That call's indentation takes the standard library's pure-Python encoder (27 to 41 µs
    for five results); this writes the one shape a search returns, with the C string
    encoder the same call uses for each string (12 µs). `line` is in relevance mode only.
    """
    results = []
    for hit in hits:
        result = (
            '    {\n      "title": '
            + _string(hit.title)
            + ',\n      "url": '
            + _string(hit.url)
            + ',\n      "snippet": '
            + _string(hit.snippet)
        )
        if hit.line is not None:
            result += f',\n      "line": {int(hit.line)}'
        results.append(result + "\n    }")
    listed = "[\n" + ",\n".join(results) + "\n  ]" if results else "[]"
    used = "" if terms_used is None else f',\n  "termsUsed": {int(terms_used)}'
    return '{\n  "query": ' + _string(query) + used + ',\n  "results": ' + listed + "\n}"


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
        try:
            hits = self._pages.search(query, limit)
        except NothingReadable as error:  # not "no match": nothing could be searched
            return text_result(str(error), is_error=True)
        used = hits.terms_used if isinstance(hits, Hits) else None
        return text_result(search_document(query, hits, used))


class FetchPage(_SiteTool):
    """`fetch_page`: a page's file (or the page on main) exactly as it is, frontmatter included."""

    __slots__ = ()

    def __init__(self, pages: SitePages) -> None:
        super().__init__(
            {
                "name": FETCH_PAGE,
                "description": (
                    "Fetch the raw MDX content of a documentation page by URL path "
                    '(for example, "/getting-started/introduction"). With startLine or '
                    "lineCount, only a window of whole lines (at most 200 lines and 32 KiB)."
                ),
                "inputSchema": input_schema((URL, START_LINE, LINE_COUNT), ("url",), closed=False),
            },
            pages,
        )

    def call(self, arguments: Arguments) -> Result:
        segments = page_segments(URL.take(FETCH_PAGE, arguments))
        windowed = START_LINE.present(FETCH_PAGE, arguments) | LINE_COUNT.present(
            FETCH_PAGE, arguments
        )
        start_line = START_LINE.take(FETCH_PAGE, arguments)
        line_count = LINE_COUNT.take(FETCH_PAGE, arguments)
        path = page_path(segments)
        content = self._pages.read(segments, path)
        if content is None:
            return text_result(f"Page not found: {path}", is_error=True)
        if not windowed:
            return _document({"url": path, "content": content})
        window = read_window(content, start_line, line_count)
        if window is None:
            return text_result(
                json.dumps({"url": path, "status": "line_out_of_range"}, indent=2), is_error=True
            )
        return _document(
            {
                "url": path,
                "startLine": window.start_line,
                "endLine": window.end_line,
                "hasMore": window.has_more,
                "content": window.content,
            }
        )


def _unknown_tool(name: object) -> Result:
    # A name that is not a string (or none at all, `null`) is shown as the JSON it was; an
    # integer too long to convert, as its digits were sent.
    if isinstance(name, LongInteger):
        shown = name.text
    else:
        shown = name if isinstance(name, str) else json.dumps(name, ensure_ascii=False)
    return text_result(f"Unknown tool: {shown}", is_error=True)


class SiteToolset(Toolset):
    """The route's toolset: any `name` that is not one of its tools — missing, `null`, a
    number — is the contract's unknown tool, a result with `isError: true`."""

    __slots__ = ()

    def call(self, name: object, arguments: object = None) -> Result:
        if not isinstance(name, str):
            return _unknown_tool(name)
        return super().call(name, arguments)


def site_toolset(pages: SitePages) -> Toolset:
    """Both tools over `pages`; an unknown tool name is a result with `isError: true`."""
    return SiteToolset((SearchDocs(pages), FetchPage(pages)), _unknown_tool)
