"""A query past the bound is answered on its most informative leading words within it.

What a query costs grows with its different words: in owndocs mode a word holding
punctuation is looked for in every page's text (see `contract`). So a query is ranked on
at most `MAX_WORDS` different words (whitespace-separated, lowercased, as the contract
splits a query) of at most `MAX_CHARACTERS` in all. A longer one, most often a log or a
stack trace an agent pastes, is not refused: its first `LEADING_WORDS` different words are
read, the most informative of them kept within the bound (a word's rarest term over the
pages; a question's own words, and words no page holds, the least), and it is ranked on
those, in the query's order, as written, on the lines it writes them on: a pasted log's
lines tell its message from the command, banner and stack frames around it (see
`query`). The result then says how many words it used.

Reading a query costs a look-up per different word of its leading part and nothing for
the rest: a 2 MiB query costs what one of `LEADING_WORDS` words does.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_WORDS = 32
MAX_CHARACTERS = 1000
# How many different words of a long query are read to choose from: the bound's eight
# times over, so that a paragraph of 60 words is read whole.
LEADING_WORDS = 8 * MAX_WORDS
# A word is at most this long where a query's leading part is cut (the bound's length).
_LONGEST_WORD = MAX_CHARACTERS


def within(query: str) -> bool:
    """Whether `query` is within the bound, and is ranked as it is."""
    return len(query) <= MAX_CHARACTERS and len(set(query.lower().split())) <= MAX_WORDS


def bounded(query: str, informative: Callable[[str], float]) -> tuple[str, int | None]:
    """`query` and None when it is within the bound; else its most informative leading words
    within the bound, in its order and as written (each once), and how many they are.

    `informative(word)` rates a word as written: the higher, the more it tells pages apart.
    Of words rated alike, the earlier is kept.
    """
    if within(query):
        return query, None
    # A word lowercased -> as the query first writes it, and the line it is on.
    first: dict[str, tuple[str, int]] = {}
    for number, written_line in enumerate(_leading(query).split("\n")):
        for word in written_line.split():
            lowered = word.lower()
            if lowered not in first:
                first[lowered] = (word, number)
                if len(first) == LEADING_WORDS:
                    break
        if len(first) == LEADING_WORDS:
            break
    rated = sorted(enumerate(first.values()), key=lambda item: (-informative(item[1][0]), item[0]))
    kept: list[tuple[int, tuple[str, int]]] = []
    length = -1
    for place, (word, line) in rated:
        if len(kept) == MAX_WORDS:
            break
        if length + 1 + len(word) <= MAX_CHARACTERS:
            kept.append((place, (word, line)))
            length += 1 + len(word)
    kept.sort()
    written: list[str] = []
    last_line = -1
    for _, (word, line) in kept:
        if written:
            written.append("\n" if line != last_line else " ")
        written.append(word)
        last_line = line
    return "".join(written), len(kept)


def _leading(query: str) -> str:
    """`query`'s leading part: enough characters for `LEADING_WORDS` words of the bound's
    length, without the last word when the cut falls inside it."""
    reach = (LEADING_WORDS + 1) * (_LONGEST_WORD + 1)
    if len(query) <= reach or query[reach].isspace():
        return query[:reach]
    head = query[:reach].rsplit(None, 1)
    return head[0] if len(head) == 2 else ""
