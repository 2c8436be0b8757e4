"""The passage a relevance-mode snippet shows: the line of the page where the query is answered.

Every line of the page's body is scored by the query's words it holds (a word is found where
a word of the text begins with it as the query spells it, or with its stem). A word weighs
its idf over the site times how rare it is among the page's own lines: on the page about
`useFetch` every line says `useFetch`, and the line that answers "useFetch lazy" is the one
saying `lazy`; a word of the page's title tells no line from another and weighs
`TITLE_WORD_WEIGHT` of that. The words of the next two lines count half, since a snippet of
240 characters runs on; a word a line defines — any word of a heading, the first word of a
list item or a table row, or the `code` a line starts with, as reference pages introduce an
option — counts twice there; and the lines of the section the ranking found best count half
again. The earliest of the best lines wins. The snippet starts at that line, or at the
heading of its section when both fit in one snippet, so that it names what it is about; its
`line` is where a window read shows it. With no word in any line (the page matched by its
title or description), it starts at the first line of the body.

What a page costs is bounded: each word is looked for at most `MAX_MATCHES` times.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from .page_text import SNIPPET_LENGTH, clip

FOLLOWING_LINES = 2
FOLLOWING_WEIGHT = 0.5
DEFINITION_WEIGHT = 2.0
BEST_SECTION_WEIGHT = 1.5
TITLE_WORD_WEIGHT = 0.1
# A heading is shown above the best line when this much text at most lies between them.
HEADING_REACH = 200
MAX_MATCHES = 64
# The words a snippet of `SNIPPET_LENGTH` characters can show come from this many lines.
_SHOWN_LINES = 12
# What a line defines: any word of a heading, else the first word of a list item or a table
# row, or the `code` or **bold** a line starts with.
_HEADING = re.compile(r"\s*#{1,6}\s+(.*)")
_DEFINING = re.compile(r"\s*(?:(?:[-*+]|\d+[.)]|\|)\s*[`*_\s]*|[`*_]+)([^\s`*|:,(]+)")


@dataclass(frozen=True)
class Word:
    """A word of the query: its weight, and where lowercased text holds it."""

    weight: float
    found: re.Pattern[str]


def word_pattern(spellings: Sequence[str]) -> re.Pattern[str]:
    """Where lowercased text holds one of `spellings` (lowercase); `best_passage` keeps the
    places a word begins (a boundary in the pattern would cost a regular expression its
    fast search for the literal)."""
    ordered = sorted({re.escape(spelling) for spelling in spellings if spelling}, key=len)
    return re.compile("|".join(reversed(ordered)))


def best_passage(
    text: str,
    section_lines: Sequence[int],
    best_section: int | None,
    words: dict[str, Word],
    *,
    title_words: frozenset[str] = frozenset(),
    length: int = SNIPPET_LENGTH,
) -> tuple[int, str]:
    """The page line the snippet starts on and the snippet (at most `length` code points).

    `text` is the whole page, `section_lines` the page lines its sections start on (the
    first is where the body starts), `best_section` the index of the best of them."""
    lowered = text.lower()
    starts = [0, *accumulate(len(line) + 1 for line in lowered.split("\n"))][:-1]
    first = section_lines[0] - 1 if section_lines else 0
    present: dict[int, set[str]] = {}  # line (from 0) -> the words it holds
    body = starts[min(first, len(starts) - 1)]
    for name, word in words.items():
        count = 0
        for found in word.found.finditer(lowered, body):
            at = found.start()
            if at and lowered[at - 1].isalnum():
                continue  # inside a word, not at its beginning
            present.setdefault(bisect_right(starts, at) - 1, set()).add(name)
            count += 1
            if count == MAX_MATCHES:
                break
    lines = text.split("\n")
    if not present:
        return first + 1, _shown(lines, first, length)
    counted = max(1, len(lines) - first)
    weight = {
        name: word.weight
        * math.log(1 + counted / sum(name in held for held in present.values()))
        * (TITLE_WORD_WEIGHT if name in title_words else 1.0)
        for name, word in words.items()
        if any(name in held for held in present.values())
    }
    best, best_score = -1, 0.0
    for number in sorted(present):
        line = lowered[starts[number] : starts[number + 1] if number + 1 < len(starts) else None]
        if not _can_start(line):
            continue
        held = present[number]
        score = sum(weight[name] for name in held)
        score += (DEFINITION_WEIGHT - 1) * sum(weight[name] for name in _defined(line, held, words))
        if _section_of(section_lines, number) == best_section:
            score *= BEST_SECTION_WEIGHT
        following: set[str] = set()
        for later in range(number + 1, number + 1 + FOLLOWING_LINES):
            following |= present.get(later, set())
        score += FOLLOWING_WEIGHT * sum(weight[name] for name in following - held)
        if score > best_score:
            best, best_score = number, score
    if best < 0:
        return first + 1, _shown(lines, first, length)
    heading = section_lines[_section_of(section_lines, best)] - 1
    between = sum(len(line.strip()) for line in lines[heading:best])
    if heading < best and between <= HEADING_REACH:
        best = heading
    return best + 1, _shown(lines, best, length)


def _defined(line: str, held: set[str], words: dict[str, Word]) -> set[str]:
    """The words of `held` that `line` (lowercased) defines."""
    heading = _HEADING.match(line)
    if heading:
        named = heading.group(1)
    else:
        defining = _DEFINING.match(line)
        if defining is None:
            return set()
        named = defining.group(1)
    return {
        name
        for name in held
        if any(not at or not named[at - 1].isalnum() for at in _places(words[name], named))
    }


def _places(word: Word, text: str) -> list[int]:
    return [found.start() for found in word.found.finditer(text)]


def _section_of(section_lines: Sequence[int], number: int) -> int:
    """The index of the section holding line `number` (from 0)."""
    return max(0, bisect_right(section_lines, number + 1) - 1)


def _shown(lines: list[str], start: int, length: int) -> str:
    return clip("\n".join(lines[start : start + _SHOWN_LINES]), length)


def _can_start(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("```", "~~~", "---"))
