"""A page's text as search reads it: frontmatter, title, sections, and snippet helpers.

Of YAML only top-level `key: value` lines (quoted or not) and block scalars are read. A
page's sections are cut at its headings outside code fences; each knows the page line it
starts on, counted in the file as it is (frontmatter included), so that a window read at
that line shows it.
"""

from __future__ import annotations

import re

SNIPPET_LENGTH = 240
SNIPPET_LEAD = 60
# A frontmatter line's key and value; the value's blanks are stripped after the match, since
# a lazy value before them cost a line of blanks inside a value its length squared.
_FRONTMATTER_FIELD = re.compile(r"([A-Za-z_][\w-]*)\s*:(.*)")
# A YAML block scalar's header: `>` (folded) or `|` (literal), its indicators, a comment.
_BLOCK_SCALAR = re.compile(r"[>|][1-9+-]{0,2}(?:\s+#.*)?")
# A heading line (its text in group 1) and a code fence's opening or closing line.
# Each line pattern begins with the newline before its line: the regular expression engine
# looks for a leading literal quickly, where a MULTILINE `^` is tried at every character (a
# page's sections took five times as long). `sections` searches "\n" + the body, so that a
# match starts at its line's offset in the body. The heading's closing `#`s are stripped
# by `_heading_text`, not by the pattern: a lazy text before them made a line of `# # # ...`
# cost its length squared (a line of 8,000 characters, 4 s).
_HEADING_LINE = re.compile(r"\n[^\S\n]*(#{1,6})[ \t]+([^\n]*)")
_FENCE_LINE = re.compile(r"\n[^\S\n]*(?:```|~~~)")
# What ends a line for `str.splitlines` ("\r\n" ends one line: its "\n" starts none that a
# fence or a title could open), and what opens a fence or a `# ` title at a line's start.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{_LINE_BREAKS}]")
_TITLE_OR_FENCE = re.compile("```|~~~|# ")
# What parts a page's paragraphs, and what opens a block that is no paragraph of prose for
# an owndocs snippet's fallback (`first_paragraph`).
_BLANK_LINES = re.compile(r"\n\s*\n")
_NO_PROSE = ("#", "```", "~~~", "|", "<", "import ", "---")


# Where a page points rather than what it says: a Markdown link's or image's target
# (`](/api/use-cookie#set-cookie)`), a reference link's definition line, a heading's anchor
# (`{#set-cookie}`) and an HTML `href`. One pattern of alternatives that each start with a
# literal, which the regular expression engine finds quickly: 0.24 s over 45 MB.
# A target holds no blank, bracket or parenthesis, so that each `](` reads to the first of
# those at most: `[^)]*` made a line of 33,000 `[](` cost its length squared (6 s).
_LINK_TARGET = re.compile(
    r"\]\([^()\[\]\s]*(?:\s+\"[^\"\n]*\")?\)|\n[ \t]*\[[^\]\n]+\]:[^\n]*|\{#[^}\n]*\}"
    r"|href=(?:\"[^\"\n]*\"|'[^'\n]*')"
)


def without_link_targets(text: str) -> str:
    """`text` without the targets and anchors of its links, which are not the page's own
    words: a page linking to `#set-cookie` does not say "set cookie", and a page that only
    links to a definition is not about it."""
    if "](" in text or "]:" in text or "{#" in text or "href=" in text:
        return _LINK_TARGET.sub("] ", text)
    return text


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """A page's YAML frontmatter as flat `key: value` strings, and the text after it.

    A top-level value on its own line, quoted or not, or a block scalar (`key: >` or
    `key: |` and the indented lines below it, joined on one line); nothing else of YAML.
    """
    if not text.startswith("---"):
        return {}, text
    first_break = text.find("\n")
    if first_break < 0 or text[3:first_break].strip():
        return {}, text
    end = text.find("\n---", first_break)
    while end >= 0:
        line_end = text.find("\n", end + 1)
        closing = text[end + 4 : len(text) if line_end < 0 else line_end]
        if not closing.strip():
            break
        end = text.find("\n---", end + 1)
    if end < 0:
        return {}, text
    fields: dict[str, str] = {}
    lines = text[first_break + 1 : end].splitlines()
    index = 0
    while index < len(lines):
        matched = _FRONTMATTER_FIELD.match(lines[index])
        index += 1
        if not matched:
            continue
        value = matched.group(2).strip()
        if _BLOCK_SCALAR.fullmatch(value):
            # `title: >` or `|`: the value is the indented lines below, on one line here.
            block = []
            while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
                block.append(lines[index].strip())
                index += 1
            value = " ".join(part for part in block if part)
        else:
            value = _unquoted(value)
        fields.setdefault(matched.group(1), value)
    line_end = text.find("\n", end + 1)
    return fields, "" if line_end < 0 else text[line_end + 1 :]


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def title_line(body: str) -> tuple[int, int] | None:
    """Where the first `# ` heading line outside code fences starts and ends.

    Lines are `str.splitlines`' lines. Only the lines that open a fence or a title are
    looked at, up to the title: the lines of a whole page were split for it on every
    snippet, where the title is most often the body's first line.
    """
    fenced = False
    for found in _TITLE_OR_FENCE.finditer(body):
        if found.start() and body[found.start() - 1] not in _LINE_BREAKS:
            continue
        if found.group() != "# ":
            fenced = not fenced
        elif not fenced:
            start = found.start()
            end = _LINE_BREAK.search(body, start)
            if end is None:
                return start, len(body)
            crlf = end.group() == "\r" and body.startswith("\n", end.end())
            return start, end.end() + crlf
    return None


def first_heading(body: str, span: tuple[int, int] | None) -> str:
    """The text of the first `# ` heading outside code fences, or '': `span` is where
    `title_line(body)` found its line."""
    return "" if span is None else body[span[0] + 2 : span[1]].strip().rstrip("#").strip()


def first_paragraph(body: str, no_prose: tuple[str, ...] = _NO_PROSE) -> str:
    """The first paragraph of prose: of the blocks blank lines part, the first that opens
    with none of `no_prose` (by default a heading, a fence, a table, an import or markup)."""
    for block in _BLANK_LINES.split(body):
        stripped = block.strip()
        if stripped and not stripped.startswith(no_prose):
            return stripped
    return ""


class Section:
    """A run of a page's lines from one heading (or the page's start) to the next."""

    __slots__ = ("heading", "level", "line", "offset", "text")

    def __init__(self, line: int, heading: str, text: str, offset: int = 0, level: int = 0) -> None:
        self.line = line  # the page line (from 1) the section starts on
        self.heading = heading  # the heading's text, '' for what comes before the first
        self.text = text
        self.offset = offset  # where in the page's text it starts
        self.level = level  # its heading's `#`s, 0 for what comes before the first


def sections(text: str, body: str | None = None) -> list[Section]:
    """The sections of a page's whole text: the frontmatter is no section, and the text
    before the first heading is one with no heading (left out when blank). Lines are
    counted at `\\n` only, as a window read counts them. `body` is the text without its
    frontmatter, when the caller has split it already."""
    if body is None:
        _, body = split_frontmatter(text)
    line = 1 + text.count("\n", 0, len(text) - len(body))
    searched = "\n" + body  # see `_HEADING_LINE`
    marks = sorted(
        [(found.start(), None, 0) for found in _FENCE_LINE.finditer(searched)]
        + [
            (found.start(), _heading_text(found.group(2)), len(found.group(1)))
            for found in _HEADING_LINE.finditer(searched)
        ],
        key=lambda mark: mark[0],
    )
    starts: list[tuple[int, str, int]] = [(0, "", 0)]
    fenced = False
    for position, heading, level in marks:
        if heading is None:
            fenced = not fenced
        elif not fenced:
            starts.append((position, heading, level))
    found: list[Section] = []
    counted = 0
    ends = [start for start, _, _ in starts[1:]] + [len(body)]
    for (start, heading, level), end in zip(starts, ends, strict=True):
        line += body.count("\n", counted, start)
        counted = start
        content = body[start:end]
        if heading or content.strip():
            found.append(Section(line, heading, content, len(text) - len(body) + start, level))
    return found


def _heading_text(line: str) -> str:
    """A heading line's text after its `#`s: without the `\\r` of a CRLF line, the closing
    `#`s and the blanks around them."""
    return (line[:-1] if line.endswith("\r") else line).rstrip(" \t#")


def clip(text: str, length: int = SNIPPET_LENGTH) -> str:
    """`text` on one line (whitespace runs collapsed), cut at a word to `length` code points."""
    # Collapsing a text's beginning gives the beginning of collapsing it: once that is longer
    # than `length`, the cut below reads nothing past it.
    flat = " ".join(text[: 2 * length].split())
    if len(flat) <= length < len(text):
        flat = " ".join(text.split())
    if len(flat) <= length:
        return flat
    cut = flat[: length - 1]
    space = cut.rfind(" ")
    if space > length // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def around(body: str, position: int, length: int = SNIPPET_LENGTH) -> str:
    """At most `length` code points of `body` on one line, starting a little before `position`.

    It reads `body` up to `around_reads(position, length)` at most.
    """
    start = _around_start(body, position)
    return _shown(body[start : around_reads(position, length)], start, length)


def around_known(text: str, position: int, length: int = SNIPPET_LENGTH) -> str | None:
    """`around(body, position, length)` for every `body` that starts with `text`, or None
    when what follows `text` could still change it.

    Whitespace runs are collapsed before the snippet is cut, so the characters after a
    window's end change nothing once the window, collapsed, is longer than the snippet:
    collapsing a text's beginning gives the beginning of collapsing the text.
    """
    start = _around_start(text, position)
    window = text[start : around_reads(position, length)]
    if start + len(window) < around_reads(position, length):
        room = length if not start else length - 1
        if len(" ".join(window.split())) <= room:
            return None
    return _shown(window, start, length)


def _around_start(body: str, position: int) -> int:
    start = max(0, position - SNIPPET_LEAD)
    if start:
        space = body.find(" ", start, position)
        start = space + 1 if space >= 0 else start
    return start


def _shown(window: str, start: int, length: int) -> str:
    if not start:
        return clip(window, length)
    return "…" + clip(window, length - 1)


def around_reads(position: int, length: int = SNIPPET_LENGTH) -> int:
    """Where `around(body, position, length)` stops reading `body`."""
    return position + 4 * length
