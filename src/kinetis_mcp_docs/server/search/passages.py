"""Where a page answers a query: the line a snippet starts on, and the snippet.

The query's words (a question's own words, `how`, `I`, `my`, are not among them: see
`relevance`) are found in the page's body where a word of the text begins with one as
the query spells it, or with its stem (`lazi` finds `lazy`), at most `MAX_MATCHES` times
each; a word most pages hold (idf under `MIN_IDF`) tells no place from another and is not
looked for. The page is read as the UTF-8 bytes it is kept as, lowercased in ASCII only
(a third of the time of lowercasing text that holds one non-ASCII character): a word
spelled with a capital outside ASCII (`É`) is found as the page spells it, lowercase.

- **The snippet's line**: every line holding a word is scored by the words it holds. A word
  weighs its idf times how rare it is among the page's lines: on the page about `useFetch`
  every line says `useFetch`, and the line that answers "useFetch lazy" is the one saying
  `lazy`; a word of the page's title tells no line from another and weighs
  `TITLE_WORD_WEIGHT` of that. The words of the next two lines count half, since a snippet
  of 240 characters runs on; a word a line defines — the first word of a list item (and
  the aliases joined to it by `|`, `,` or "or") or of a table row, the `code` a line
  starts with, or the first word inside the HTML tags a line opens with (`<summary><code>`,
  `<dt>`), as reference pages introduce an option — counts twice there, and a word of
  a heading `HEADING_WEIGHT` times (a heading names what its whole section is about, an
  entry one item of it); the lines of the page's best section (the index's, see
  `relevance`) and of the section it is part of (the nearest before it under a heading of
  a higher level: an option's, above its example's; not the text before the first
  heading, which introduces the whole page) count half again, and a line of code
  half as much: it shows the words in use, where the prose around explains them
  (snippets showing the answer on the tuned trees from 68 / 33 / 41% to 70 / 39 / 43%).
  A line of code is inside a fence, or indented four spaces (or a tab) after a blank
  line, as Markdown's other code block is, unless the text it follows is a list item,
  whose content it continues.
  The earliest of the best lines wins. The snippet starts at that line, or earlier when
  the text from there to it is `HEADING_REACH` at most: when it is code, at the line of
  prose its block follows ("Example:", "a message is logged at startup:"), the sentence
  saying when an error comes, not the example quoting it (snippets showing the answer on
  nuxt / eslint / redis from 68 / 44 / 46% to 68 / 44 / 48%; the indented blocks alone
  68 / 44 / 46%, the introduction of fenced blocks alone 68 / 44 / 47%); when it is not,
  at the first line of its paragraph (a list item's marker), since a paragraph wrapped at
  80 columns has the words on one line and what they are about on the line before (from
  68 / 44 / 48% to 68 / 44 / 51%). From there it starts at the heading of its section
  when both fit in one snippet, so that it names what it is about, unless an entry of its
  own lies between them (a line naming a word in code, bold, an HTML tag or a table cell,
  as a definition does): `## Optional arguments` above the third option showed the first
  two as if they answered (from 68 / 44 / 51% to 68 / 44 / 52%). With no word found, the
  snippet starts at the body's first line. It shows a Markdown link as its text, without
  its address, an address written with a template's tags too (`{{< relref "/x" >}}`,
  `{% link x.md %}`): the room goes to the text that follows (snippets showing the answer
  on nuxt / eslint / redis from 68 / 44 / 52% to 68 / 44 / 53%). Its `line` is where a
  window read shows it.

What a line defines, whether it is code, and where its paragraph or its block's
introduction starts are read from Markdown's shapes in `blocks`.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .blocks import (
    DEFINING,
    HEADING,
    between,
    can_start,
    entry_between,
    in_code,
    introduction,
    line_at,
    paragraph,
)
from .page_text import SNIPPET_LENGTH, clip

# A line of code (inside a fence) shows a use of the words, prose explains them.
CODE_WEIGHT = 0.5
# How far a sum's rounding may take it past its bound, relatively.
_ROUNDING = 1e-9
_FENCE = re.compile(rb"\n[ \t]*(?:```|~~~)")
FOLLOWING_LINES = 2
FOLLOWING_WEIGHT = 0.5
DEFINITION_WEIGHT = 2.0
# A heading names what its whole section is about, a list item or a table row one entry of
# it: a word a heading names counts this much, more than one an entry names.
HEADING_WEIGHT = 2.5
BEST_SECTION_WEIGHT = 1.5
TITLE_WORD_WEIGHT = 0.1
# A heading is shown above the best line when this much text at most lies between them;
# and the sentence introducing a block of code above its line, the start of a paragraph
# above its line.
HEADING_REACH = 200
# A word's first places in a page read, at most: its first 32 tell its use (snippets
# showing the answer on nuxt / eslint / redis 67 / 43 / 41% at 32, 67 / 39 / 41% at 64,
# 67 / 39 / 39% at 16).
MAX_MATCHES = 32
# What a line's first byte is when it may be a heading or an entry (`blocks.HEADING`,
# `blocks.DEFINING`, both of which may open with blanks), and when it may be an entry only.
_ANY_OPENING = frozenset(b" \t\n\r\x0b\x0c#")
_ENTRY_OPENING = frozenset(b"-*+|<`_0123456789")
# BM25's idf of a word three pages in four hold.
MIN_IDF = 0.3
# The words a snippet of `SNIPPET_LENGTH` characters can show come from this many lines.
_SHOWN_LINES = 12
# A word a list item names beside its first, joined to it by `|`, `,` or "or": the aliases
# of one entry (`- \`placeholder\` | \`fallback\`: ...`).
_ALIAS = re.compile(rb"[`*_]*[^\S\n]*(?:\||,|or\b)[^\S\n]*[`*_]*([^\s`*|:,(]+)")
# A Markdown link or image: the snippet shows its text, not its address, which may hold a
# template's tags (`{{< relref "/commands/brpop" >}}`, `{{ site.baseurl }}/x`, `{% link %}`);
# written as one run of plain characters between each tag and the next, so that a failed
# match backtracks once, not once per way of splitting the run.
_LINK = re.compile(
    r"!?\[([^[\]\n]*)\]\([^()\s{}]*(?:(?:\{\{[^{}\n]*\}\}|\{%[^{}\n]*%\})[^()\s{}]*)*\)"
)
# The bytes a word is made of: ASCII letters and digits, and every byte of a character
# outside ASCII.
_WORD_BYTES = frozenset(
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" + bytes(range(0x80, 0x100))
)


@dataclass(frozen=True)
class Word:
    """A word of the query: its idf, and where lowercased UTF-8 holds it."""

    weight: float
    found: re.Pattern[bytes]


def word_pattern(spellings: Sequence[str]) -> re.Pattern[bytes]:
    """Where lowercased UTF-8 holds one of `spellings` (lowercase). Only the places a word
    begins are kept, by the caller: a boundary in the pattern itself would cost the regular
    expression its fast search for the literal (ten times slower)."""
    ordered = sorted(
        {
            re.escape(spelling.encode("utf-8", "surrogatepass"))
            for spelling in spellings
            if spelling
        },
        key=len,
    )
    return re.compile(b"|".join(reversed(ordered)))


@dataclass(frozen=True)
class Passage:
    """Where a page answers a query: the snippet's line, and the snippet."""

    line: int
    snippet: str


@dataclass(frozen=True)
class PageShape:
    """Where a page's sections start: their first lines, and their offsets in its UTF-8;
    how many lines it has (its line breaks and one); and each section's heading level (its
    `#`s, 0 for the text before the first heading; none known: no section is another's)."""

    lines: tuple[int, ...]
    offsets: tuple[int, ...]
    line_count: int
    levels: tuple[int, ...] = ()
    # Where its fences' lines start (`fences_of`), when read once for every search: None,
    # read by each search.
    fences: Sequence[int] | None = None


def fences_of(data: bytes, shape: PageShape) -> list[int]:
    """Where the lines opening and closing the fences of a page (its UTF-8, lowercased or
    not: a fence holds no letter) start, from its first section's line break on."""
    begin = shape.offsets[0] if shape.offsets else 0
    return [found.start() for found in _FENCE.finditer(data, max(0, begin - 1))]


def read_page(
    data: bytes,
    shape: PageShape,
    lowered: bytes,
    words: dict[str, Word],
    *,
    best_section: int = -1,
    title_words: frozenset[str] = frozenset(),
    length: int = SNIPPET_LENGTH,
) -> Passage:
    """The best section of the page (its UTF-8 `data`, and `data.lower()`) for `words`, and
    the passage to show from it.

    The page is not split into lines: only the lines holding a word, and the few a snippet
    shows, are read, from where they start (splitting a 20 KB page and counting its lines
    was a third of this).
    """
    offsets = shape.offsets
    begin = offsets[0] if offsets else 0  # where the first section's line starts
    first = shape.lines[0] - 1 if shape.lines else 0
    found = _find(lowered, begin, words)
    if not found:
        return Passage(first + 1, _shown(data, begin, length))
    # Line (from 0) of each place, where each such line starts, and the words each holds.
    present: dict[int, set[str]] = {}
    starts: dict[int, int] = {}
    line, at = 0, 0
    for position, name in found:
        line += lowered.count(b"\n", at, position)
        at = position
        held = present.get(line)
        if held is None:
            held = present[line] = set()
            starts[line] = lowered.rfind(b"\n", 0, position) + 1
        held.add(name)
    fences = fences_of(lowered, shape) if shape.fences is None else shape.fences
    held_by = Counter(name for held in present.values() for name in held)
    counted = max(1, shape.line_count - first)
    weight = {
        name: word.weight
        * math.log(1 + counted / held_by[name])
        * (TITLE_WORD_WEIGHT if name in title_words else 1.0)
        for name, word in words.items()
        if held_by[name]
    }
    best = _best_line(
        data,
        shape,
        present,
        starts=starts,
        fences=fences,
        weight=weight,
        words=words,
        best_section=best_section,
    )
    if best < 0:
        return Passage(first + 1, _shown(data, begin, length))
    shown_from = starts[best]
    if in_code(data, fences, shown_from):
        begun = introduction(data, fences, shown_from)
    else:
        begun = paragraph(data, fences, shown_from)
    if 0 <= begun < shown_from and between(data, begun, shown_from) <= HEADING_REACH:
        best -= data.count(b"\n", begun, shown_from)
        shown_from = begun
    section = _section_of(shape.lines, best)
    heading = shape.lines[section] - 1 if shape.lines else first
    if heading < best:
        heading_from = offsets[section] if offsets else 0
        if between(data, heading_from, shown_from) <= HEADING_REACH and not entry_between(
            data, fences, heading_from, shown_from
        ):
            best, shown_from = heading, heading_from
    return Passage(best + 1, _shown(data, shown_from, length))


def _best_line(
    data: bytes,
    shape: PageShape,
    present: dict[int, set[str]],
    *,
    starts: dict[int, int],
    fences: Sequence[int],
    weight: dict[str, float],
    words: dict[str, Word],
    best_section: int,
) -> int:
    """The line (from 0) scoring best of those holding a word, the earliest of equals; -1
    when none scores above 0.

    A line's score is at most its words' weights, all defined on a heading, in the best
    section, plus all of the next lines': the lines are scored most promising first, until
    no line left can beat (or tie, being earlier) the best so far. Scoring every line that
    holds a word was most of a long query's snippet.
    """
    base = {number: math.fsum(weight[name] for name in held) for number, held in present.items()}
    sections = _best_sections(shape, best_section)
    boosted = {number for number in present if _section_of(shape.lines, number) in sections}
    # Each line bounded by what it can score: boosted only in the best sections, and its
    # words counting more only where its first character can open a heading or an entry.
    # On a long page most lines holding a word are prose elsewhere: bounded as tightly,
    # fewer of them are read and scored.
    boost = max(BEST_SECTION_WEIGHT, 1.0)
    bound = {
        number: (
            _most_named(data, starts[number]) * (boost if number in boosted else 1.0) * score
            + FOLLOWING_WEIGHT
            * sum(base.get(later, 0.0) for later in range(number + 1, number + 1 + FOLLOWING_LINES))
        )
        * (1 + _ROUNDING)
        for number, score in base.items()
    }
    best, best_score = -1, 0.0
    for number in sorted(present, key=lambda number: (-bound[number], number)):
        if bound[number] < best_score or (bound[number] == best_score and number > best >= 0):
            break
        raw = line_at(data, starts[number])
        if not can_start(raw.decode("utf-8", "replace")):
            continue
        held = present[number]
        score = _line_score(raw.lower(), held, words, weight)
        if number in boosted:
            score *= BEST_SECTION_WEIGHT
        following: set[str] = set()
        for later in range(number + 1, number + 1 + FOLLOWING_LINES):
            following |= present.get(later, set())
        score += FOLLOWING_WEIGHT * math.fsum(weight[name] for name in following - held)
        if in_code(data, fences, starts[number]):
            score *= CODE_WEIGHT
        if score > best_score or (score == best_score and 0 <= number < best):
            best, best_score = number, score
    return best


def _most_named(data: bytes, start: int) -> float:
    """The most a line's words can count for what it defines (see `_line_score`), by its
    first byte: a heading opens with `#`, an entry (`DEFINING`) with a list or table
    marker, a digit, an HTML tag or code or emphasis; a line opening with anything else
    defines nothing. A blank first may precede either."""
    first = data[start] if start < len(data) else None
    if first is None or first in _ANY_OPENING:
        return max(HEADING_WEIGHT, DEFINITION_WEIGHT)
    if first in _ENTRY_OPENING:
        return DEFINITION_WEIGHT
    return 1.0


def _best_sections(shape: PageShape, best_section: int) -> frozenset[int]:
    """The best section, and the section it is part of (the nearest before it whose heading
    is of a higher level, without its other parts): what the page says of the subject whose
    example or detail the best section is (`#### --fix` above `##### --fix example`). The
    text before the first heading is part of no section: it introduces the whole page, and
    a line of it mentioning the word outweighed the best section's own (snippets showing the
    answer on nuxt / eslint / redis from 76 / 49 / 55% to 76 / 50 / 55%)."""
    levels = shape.levels
    if not 0 < best_section < len(levels):
        return frozenset([best_section])
    level = levels[best_section]
    for parent in range(best_section - 1, -1, -1):
        if levels[parent] < level:
            return frozenset([best_section, parent] if levels[parent] else [best_section])
    return frozenset([best_section])


def _line_score(
    line: bytes, held: set[str], words: dict[str, Word], weight: dict[str, float]
) -> float:
    """What a line (lowercased UTF-8) holding `held` scores, the words it defines counting
    more. Sums exactly rounded, so that the order a set is read in (its strings' hashes,
    which differ from process to process) never changes which line wins."""
    score = math.fsum(weight[name] for name in held)
    defined = _defined(line, held, words)
    if defined:
        named = HEADING_WEIGHT if HEADING.match(line) else DEFINITION_WEIGHT
        score += (named - 1) * math.fsum(weight[name] for name in defined)
    return score


def _find(lowered: bytes, start: int, words: dict[str, Word]) -> list[tuple[int, str]]:
    """Where, from `start`, a word of the text begins with one of `words`, in text order."""
    found: list[tuple[int, str]] = []
    for name, word in words.items():
        if word.weight < MIN_IDF:
            continue
        count = 0
        for match in word.found.finditer(lowered, start):
            position = match.start()
            if position and lowered[position - 1] in _WORD_BYTES:
                continue  # inside a word, not at its beginning
            found.append((position, name))
            count += 1
            if count == MAX_MATCHES:
                break
    found.sort()
    return found


def _defined(line: bytes, held: set[str], words: dict[str, Word]) -> set[str]:
    """The words of `held` that `line` (lowercased UTF-8) defines."""
    heading = HEADING.match(line)
    if heading:
        named = heading.group(1)
    else:
        defining = DEFINING.match(line)
        if defining is None:
            return set()
        named = defining.group(1)
        if not line.lstrip().startswith(b"|"):  # in a table row `|` ends the cell
            at = defining.end()
            while alias := _ALIAS.match(line, at):
                named += b" " + alias.group(1)
                at = alias.end()
    return {
        name
        for name in held
        if any(
            not match.start() or named[match.start() - 1] not in _WORD_BYTES
            for match in words[name].found.finditer(named)
        )
    }


def _section_of(section_lines: Sequence[int], number: int) -> int:
    """The index of the section holding line `number` (from 0)."""
    return max(0, bisect_right(section_lines, number + 1) - 1)


def _shown(data: bytes, start: int, length: int) -> str:
    """The snippet of the lines of `data` from the one starting at `start`."""
    end = start
    for _ in range(_SHOWN_LINES):
        end = data.find(b"\n", end) + 1
        if not end:
            end = len(data) + 1
            break
    text = data[start : end - 1].decode("utf-8", "replace")
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    return clip(text, length)
