"""Markdown's blocks around a line of a page, read in its UTF-8 without splitting it into
lines: what a line defines (a heading's words, a list item's or a table row's first word),
whether a line is code (in a fence, or indented as a code block) and the sentence its block
follows, where a wrapped paragraph starts, and whether an entry of its own lies between two
lines. `passages` chooses a snippet's line with them and where the snippet starts.

`fences` is where the lines opening and closing the page's fences start, in order: a place
after an odd number of them is inside a fence.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

# What a line defines: any word of a heading, else the first word of a list item or a table
# row, the `code` or **bold** a line starts with, or the first word inside the HTML tags a
# line opens with (`<details><summary><code>PXAT ms</code>`, `<dt>`): snippets showing the
# answer on redis from 41 to 46%, nuxt and eslint unchanged.
HEADING = re.compile(rb"\s*#{1,6}\s+(.*)")
DEFINING = re.compile(
    rb"\s*(?:(?:[-*+]|\d+[.)]|\|)[`*_\s]*|(?:<[a-z][^<>\n]*>[^\S\n]*)+[`*_]*|[`*_]+)"
    rb"([^\s`*|:,(<]+)"
)
# How many lines before a line indented as code are read for where its block starts, and
# before a block for the sentence introducing it: a longer run of indented lines is code.
_BLOCK_LINES = 12
# An entry's marked name: after a list marker or none, code, bold, an HTML tag or a table
# cell.
_ENTRY = re.compile(rb"[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+)?(?:`(?!``)|\*\*|__|<[a-z]|\|)")
# A list item's first line: the indented lines after it continue it, as no code.
_LIST_ITEM = re.compile(rb"[ \t]*(?:[-*+]|\d+[.)])[ \t]")
# A line that starts a block of its own (a list item, a table row, HTML, a quote, a
# heading, a container or template tag, a fence), not the next line of a paragraph.
_BLOCK_START = re.compile(rb"[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|[|<>#:{]|```|~~~)")
# A line of markup only, which no paragraph continues: a heading, HTML, a table row, a
# container or template tag (`::: warning`, `{{< highlight >}}`), a fence.
_MARKUP = re.compile(rb"[ \t]*(?:[|<#:{]|```|~~~)")


def line_at(data: bytes, start: int) -> bytes:
    """The line of `data` that starts at `start`, without its line break."""
    end = data.find(b"\n", start)
    return data[start:] if end < 0 else data[start:end]


def can_start(line: str) -> bool:
    """Whether a snippet may start at `line`: not blank, a fence or a rule."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("```", "~~~", "---"))


def between(data: bytes, start: int, end: int) -> int:
    """How much text (without the blanks that start and end its lines) lies from `start`
    to `end`."""
    return sum(len(content.strip()) for content in data[start:end].split(b"\n"))


def in_code(data: bytes, fences: Sequence[int], start: int) -> bool:
    """Whether the line starting at `start` is code: inside a fence, or of an indented
    block."""
    return _in_fence(fences, start) or _code_block(data, start) >= 0


def _in_fence(fences: Sequence[int], start: int) -> bool:
    """Whether the line starting at `start` is inside a fence, its opening line included:
    after an odd number of `fences`."""
    return bool(bisect_right(fences, start - 1) % 2)


def _indented(line: bytes) -> bool:
    return line.startswith((b"    ", b"\t"))


def _previous(data: bytes, start: int) -> int:
    """Where the line before the one starting at `start` (> 0) starts."""
    return data.rfind(b"\n", 0, start - 1) + 1


def _code_block(data: bytes, start: int) -> int:
    """Where the indented code block holding the line starting at `start` starts: -1 when
    that line is not one. A line indented by four spaces or a tab is code after a blank
    line, unless what it follows is a list item (whose content it continues)."""
    if not _indented(line_at(data, start)):
        return -1
    block, at, blank = start, start, False
    for _ in range(_BLOCK_LINES):
        if not at:
            return block if blank else -1
        at = _previous(data, at)
        line = line_at(data, at)
        if not line.strip():
            blank = True
        elif _indented(line):
            block, blank = at, False
        else:
            return block if blank and not _LIST_ITEM.match(line) else -1
    return block


def introduction(data: bytes, fences: Sequence[int], start: int) -> int:
    """Where the line of prose that introduces the code block holding the line starting at
    `start` starts ("Example:", "a message is logged at startup:"); -1 when that line is no
    code, or what its block follows is no prose (a heading, code, nothing)."""
    index = bisect_right(fences, start - 1)
    block = fences[index - 1] + 1 if index % 2 else _code_block(data, start)
    if block < 0:
        return -1
    at = block
    for _ in range(_BLOCK_LINES):
        if not at:
            break
        at = _previous(data, at)
        line = line_at(data, at)
        if not line.strip():
            continue
        if (
            HEADING.match(line)
            or _indented(line)
            or not can_start(line.decode("utf-8", "replace"))
            or _in_fence(fences, at)
        ):
            return -1
        return at
    return -1


def paragraph(data: bytes, fences: Sequence[int], start: int) -> int:
    """Where the paragraph holding the line starting at `start` starts: the first of the
    lines before it, with no blank line between, that continue one another (a list item's
    from its marker on), `_BLOCK_LINES` at most."""
    at = start
    for _ in range(_BLOCK_LINES):
        if not at or _BLOCK_START.match(line_at(data, at)):
            return at
        before = _previous(data, at)
        line = line_at(data, before)
        if not line.strip() or _MARKUP.match(line) or _in_fence(fences, before):
            return at
        at = before
    return start


def entry_between(data: bytes, fences: Sequence[int], start: int, end: int) -> bool:
    """Whether a line after the one starting at `start`, and before `end`, is an entry of
    its own: it names a word as a definition does (see `DEFINING`), in code, bold, an
    HTML tag or a table cell, outside a fence."""
    at = data.find(b"\n", start) + 1
    while 0 < at < end:
        line = line_at(data, at)
        if _ENTRY.match(line) and DEFINING.match(line.lower()) and not _in_fence(fences, at):
            return True
        at = data.find(b"\n", at) + 1
    return False
