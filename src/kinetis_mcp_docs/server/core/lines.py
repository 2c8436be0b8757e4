"""Page window and page search: pure functions over a page's text.

A line is everything up to and including a `\\n`, so CRLF, blank lines and a missing
final newline all survive, and successive windows concatenate to the page byte for byte.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_WINDOW_BYTES = 32_768
MAX_LINE_COUNT = 200
MAX_MATCHES = 50


# Span sizes, largest first, in which `line_offset` counts newlines before it narrows down.
_SPANS = (65_536, 4_096, 256, 16)


def line_offset(text: str, line: int) -> int | None:
    """Where line `line` (from 1) starts, or None when the page has no such line.

    Newlines are counted span by span with `str.count`, narrowing to smaller spans, so the
    cost is linear in the page's size whatever its line count: a page of 2-byte lines
    takes no more Python steps than one of 80-byte lines.
    """
    skipped = line - 1  # the newlines before the line's start
    start = 0
    stop = len(text)
    for span in _SPANS:
        while skipped:
            end = min(stop, start + span)
            if end == start:
                return None  # fewer newlines than that
            found = text.count("\n", start, end)
            if found >= skipped:
                stop = end  # the newline sought lies in [start, end)
                break
            skipped -= found
            start = end
    for _ in range(skipped):
        start = text.index("\n", start) + 1
    return start if start < len(text) else None


def _utf8_size(piece: str) -> int:
    return len(piece) if piece.isascii() else len(piece.encode("utf-8"))


class Window:
    """A run of whole lines: `start_line`..`end_line`, and whether the page goes on."""

    __slots__ = ("content", "end_line", "has_more", "start_line")

    def __init__(self, start_line: int, end_line: int, content: str, *, has_more: bool) -> None:
        self.start_line = start_line
        self.end_line = end_line
        self.content = content
        self.has_more = has_more


def read_window(
    text: str, start_line: int, line_count: int, *, max_bytes: int = MAX_WINDOW_BYTES
) -> Window | None:
    """Up to `line_count` lines from `start_line`, within `max_bytes` of UTF-8.

    The first line is returned whole whatever its size, so a caller always has a line
    to continue from; after it, a line that would pass `max_bytes` ends the window.
    None means `start_line` is past the last line.
    """
    start = line_offset(text, start_line)
    if start is None:
        return None
    end = start
    used = 0
    taken = 0
    while taken < line_count and end < len(text):
        newline = text.find("\n", end)
        line_end = len(text) if newline < 0 else newline + 1
        size = _utf8_size(text[end:line_end])
        if taken and used + size > max_bytes:
            break
        used += size
        taken += 1
        end = line_end
    return Window(start_line, start_line + taken - 1, text[start:end], has_more=end < len(text))


class Match:
    """One matching line: its number and its content without the terminator."""

    __slots__ = ("content", "line")

    def __init__(self, line: int, content: str) -> None:
        self.line = line
        self.content = content


class SearchResult:
    __slots__ = ("has_more", "matches")

    def __init__(self, matches: list[Match], *, has_more: bool) -> None:
        self.matches = matches
        self.has_more = has_more


def search_lines(
    text: str, query: str, start_line: int, *, max_matches: int = MAX_MATCHES
) -> SearchResult | None:
    """The lines from `start_line` on whose content contains `query`, literally.

    Content is a line without its `\\n` or `\\r\\n`, so a query holding a line break
    matches nothing. None means `start_line` is past the last line.
    """
    offset = line_offset(text, start_line)
    if offset is None:
        return None
    matches: list[Match] = []
    if "\n" in query:
        return SearchResult(matches, has_more=False)
    find = _finder(query)
    line = start_line
    line_start = offset  # start of the line numbered `line`
    position = offset
    while True:
        found = find(text, position)
        if found < 0:
            return SearchResult(matches, has_more=False)
        crossed = text.count("\n", line_start, found)
        if crossed:
            line += crossed
            line_start = text.rindex("\n", line_start, found) + 1
        newline = text.find("\n", found)
        content_end = len(text) if newline < 0 else newline
        if newline > line_start and text[newline - 1] == "\r":
            content_end = newline - 1
        if len(matches) == max_matches:
            return SearchResult(matches, has_more=True)
        matches.append(Match(line, text[line_start:content_end]))
        if newline < 0:
            return SearchResult(matches, has_more=False)
        position = line_start = newline + 1
        line += 1


def _finder(query: str) -> Callable[[str, int], int]:
    """Where `query` next occurs in a line's content, from a position: -1 when nowhere.

    A hit can run into a line's terminator only by ending in the `\\r` of a `\\r\\n`, so a
    query ending in `\\r` is looked for where no `\\n` follows it, by the regular expression
    engine: skipping such hits one by one in Python took 5.9 s of CPU on 4 MiB of `\\r\\n`
    lines, and takes 67 ms so.
    """
    if not query.endswith("\r"):
        return lambda text, position: text.find(query, position)
    import re  # noqa: PLC0415 - only for such a query: `re` stays out of a client's start

    pattern = re.compile(re.escape(query) + "(?!\n)")

    def find(text: str, position: int) -> int:
        hit = pattern.search(text, position)
        return -1 if hit is None else hit.start()

    return find
