"""A query as the relevance ranking reads it: its words, its names and its phrases.

- **Words**: lowercased and stemmed, as a page's text is; the `MAX_TERMS` rarest.
- **Names** (see `names`): each also looked up whole, among names; names a slash lists
  (`MULTI/EXEC`) each apart (`_unlisted`). Where some page holds a
  name whole, the words it is made of stand for a piece of it, and weigh `PIECE_WEIGHT`
  (`--no-verify` is the name, not "no" and "verify"); where none does, they weigh fully.
  They are looked for among the words of pages' titles' and headings' names too (`parts`),
  but for a name of one word (`HSET`), which is already the query's word and its name.
- **A question's own words** (see `question_words`) weigh `FILLER_WEIGHT`, unless the
  query is nothing else.
- **A pasted log's context** (see `_context`): where some of its lines name an error, the
  words only the others hold weigh `CONTEXT_WEIGHT`, and make no phrase.
- **A question's rare words** weigh less, and its common ones more (`_leveled`): where the
  query is prose (holds a question's own word) and names no error, each word's idf is
  pulled halfway toward the mean of its words'.
- **Phrases**: every run of three neighbouring words (the `MAX_PHRASES` rarest), so that a
  pasted error message finds the page that quotes it. A phrase of words most pages hold is
  not asked for (`_telling`): Tantivy checks a phrase position by position on every page
  holding all of its words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from .names import names, term, words_of, written
from .question_words import is_question_word

MAX_TERMS = 32
MAX_PHRASES = 8
PHRASE_WORDS = 3
# A word standing for a piece of a name the query writes whole, and a question's own word.
PIECE_WEIGHT = 0.5
FILLER_WEIGHT = 0.3
# A word only on the lines around a pasted log's message (see `_context`): at 0.5 or 0.3
# eslint's MRR@10 0.818 (its pasted errors' 0.777), at full weight 0.811 (0.760); nuxt and
# redis, whose pasted errors are one line each, alike.
CONTEXT_WEIGHT = 0.5
# A word of a query in prose naming no error is ranked on its idf times (the mean idf of the
# query's words / its idf) ** LEVELING: the geometric mean of the two at 0.5. A question's
# rarest word is most often the asker's (a word of the situation, "blows up", "epoch"), not
# the answer's, which holds more of its words: a page saying the one rare word outranked it.
# MRR@10 on nuxt / eslint / redis 0.893 / 0.848 / 0.938 (questions 0.861 / 0.754 / 0.874)
# against 0.888 / 0.831 / 0.921 (0.854 / 0.702 / 0.842) at 0. Leveling every query naming no
# error, identifiers too (`routeRules swr`): 0.883 / 0.842 / 0.939. At 0.4 alike, at 0.75
# and 1 less (nuxt 0.857, 0.823); idf made steeper rather than flatter, less on every tree.
LEVELING = 0.5
# A phrase all of whose words are on more than this share of the pages, and on more than
# `COMMON_PAGES`, is not asked for.
COMMON_SHARE = 0.5
COMMON_PAGES = 100
_RUNS = re.compile(r"[^\W_]+")
# What names an error on a line of a log, as loggers and tools label one: a name ending in
# Error, Exception or Warning, or a level (error, warn, warning, fatal) before a colon
# (`TypeError:`, `error:`, `Parsing error:`, `[tool warn]:`), before a code and a colon (a
# compiler's `error TS2304:`) or after a line and column (a linter's `3:12  error`); a
# level in parentheses (`(error)`) and a server's `ERR` reply. The word alone names none:
# "custom error page" asks a question.
_LABEL = re.compile(
    r"""(?:^|\s)-?(?:
        [\w.]*(?:Error|Exception|Warning):
      | (?i:error|warn|warning|fatal)\]?(?:\s+[A-Z]+\d+)?:
      | \d+:\d+\s+(?i:error|warning)\b
      | \((?i:error|warning)\)
      | ERR\b
    )""",
    re.VERBOSE,
)
_SURROGATE = re.compile("[\ud800-\udfff]")
# Two words joined in a name by what is no part of a word (`.`, `:`, `-`, `/`).
_JOINED = re.compile(r"[^\W_][^\w$]+[^\W_]")


# Words joined by slashes alone (`MULTI/EXEC`, `pub/sub`, `js/recommended`): a list of names
# where each of them is a name by itself (see `_unlisted`).
_SLASHED = re.compile(r"[A-Za-z]+(?:/[A-Za-z]+)+")


class Counts(Protocol):
    """What a query is read against: how many pages there are, and hold a term."""

    @property
    def pages(self) -> int: ...

    def frequency(self, term: str) -> int:
        """How many pages hold `term`, in the field holding it most."""
        ...


@dataclass(frozen=True)
class Query:
    """A query as the indexes read it."""

    words: tuple[str, ...]  # stemmed, rarest first
    names: tuple[str, ...] = ()  # the names some page holds, as `names.term` makes them
    parts: tuple[str, ...] = ()  # the words the query's names are made of, stemmed
    phrases: tuple[tuple[str, ...], ...] = ()
    pieces: frozenset[str] = frozenset()
    filler: frozenset[str] = frozenset()
    context: frozenset[str] = frozenset()
    # Whether it names an error (`_LABEL`): a message pasted from a log, not a question.
    message: bool = False
    # The query's words as it spells them, lowercased: a snippet looks for them too.
    spelled: tuple[str, ...] = ()
    # Its names of several words that some page holds, as it writes them
    # (`languageOptions.globals`, `app:error`): a snippet looks for them whole.
    whole: tuple[str, ...] = ()
    # What each of `words` weighs in the ranking beside `weight` (see `_leveled`).
    levels: tuple[float, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.words or self.names)

    def weight(self, word: str) -> float:
        """What one of `words` weighs beside a word the query is about."""
        if word in self.pieces:
            return PIECE_WEIGHT
        if word in self.filler:
            return FILLER_WEIGHT
        if word in self.context:
            return CONTEXT_WEIGHT
        return 1.0

    def ranked_weight(self, word: str) -> float:
        """What one of `words` weighs in a page's score: `weight`, leveled."""
        level = self.levels[self.words.index(word)] if self.levels else 1.0
        return self.weight(word) * level


def read(
    text: str,
    counts: Counts,
    analyze: Callable[[str], list[str]],
    *,
    for_ties: bool = False,
) -> Query:
    """`text` as a query, `analyze` giving the stemmed words of a text as pages are read;
    `for_ties`, as owndocs's ties read it, as the relevance ranking read it before (see
    `relevance.TIES_TITLE_WEIGHT`): a name of one word a part of itself, no context, and
    never a message.

    A lone surrogate (JSON's `"\\udfff"` is valid JSON, not Unicode) is read as U+FFFD, as
    a UTF-8 decoder reads a broken sequence: Tantivy takes only Unicode. Neither letter nor
    digit, it separates words as punctuation does.
    """
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)
    words = analyze(text)
    rarity = {word: counts.frequency(word) for word in dict.fromkeys(words)}
    chosen = sorted(rarity, key=rarity.__getitem__)[:MAX_TERMS]
    named = written(text) if for_ties else _unlisted(written(text))
    held = [name for name in named if counts.frequency(term(name))]
    alone = set(analyze(" ".join(chunk for chunk in text.split() if not names(chunk))))
    pieces = {word for name in held for word in analyze(words_of(name))} - alone
    # A name of one word (`HSET`, `FUNCTION`) is made of itself: already the query's word
    # and its name, it counted a third time as a part (redis's pasted errors' Hit@1 0.844,
    # 0.875 without; the mean MRR@10 of the tuned trees 0.861, 0.866 without).
    made_of = [analyze(words_of(name)) for name in named]
    least = 1 if for_ties else 2
    parts = tuple(dict.fromkeys(word for found in made_of if len(found) >= least for word in found))
    context = frozenset() if for_ties else _context(text, analyze)
    message = not for_ties and _LABEL.search(text) is not None
    filler = _filler(text, analyze)
    about = [
        word
        for word in chosen
        if rarity[word] and word not in pieces and word not in filler and word not in context
    ]
    # Only a query written in prose (it holds a question's own word: "how", "the", "a"): an
    # identifier's words and a message's are what it says, rare or not.
    leveled = not for_ties and not message and bool(filler)
    return Query(
        words=tuple(chosen),
        names=tuple(dict.fromkeys(term(name) for name in held))[:MAX_TERMS],
        parts=parts[:MAX_TERMS],
        phrases=_phrases(words, rarity, counts, context),
        pieces=frozenset(pieces),
        filler=filler,
        context=context,
        message=message,
        spelled=tuple(dict.fromkeys(word.lower() for word in _RUNS.findall(text)))[:MAX_TERMS],
        whole=tuple(dict.fromkeys(name for name in held if _JOINED.search(name))),
        levels=_leveled(chosen, about, rarity, counts.pages) if leveled else (),
    )


def _unlisted(named: list[str]) -> list[str]:
    """`named`, a name that lists names with slashes read as those names: `MULTI/EXEC` is
    two commands, the slash saying "and", and the page about both writes them apart; the
    one page writing them joined outranked it. Words a slash joins that are no names by
    themselves (`js/recommended`, `pub/sub`) stay one name."""
    found: list[str] = []
    for name in named:
        parts = name.split("/")
        listed = _SLASHED.fullmatch(name) and all(written(part) == [part] for part in parts)
        found.extend(parts if listed else [name])
    return found


def idf(pages: int, frequency: int) -> float:
    """BM25's idf of a term `frequency` of `pages` pages hold, as Tantivy computes it."""
    return math.log(1 + (pages - frequency + 0.5) / (frequency + 0.5))


def _leveled(
    words: list[str], about: list[str], rarity: dict[str, int], pages: int
) -> tuple[float, ...]:
    """What each of `words` weighs so that its idf counts as the geometric mean (at
    `LEVELING` 0.5) of its own and of the mean idf of `about`, the words the query is about
    that some page holds: one rare word of a question no longer outweighs the others."""
    if len(about) < 2:
        return ()
    mean = sum(idf(pages, rarity[word]) for word in about) / len(about)
    return tuple(
        (mean / rare) ** LEVELING if (rare := idf(pages, rarity[word])) > 0 else 1.0
        for word in words
    )


def _filler(text: str, analyze: Callable[[str], list[str]]) -> frozenset[str]:
    """The words that stand only for a question's own words, unless the query is nothing
    else (then they are what it asks)."""
    own: set[str] = set()
    other: set[str] = set()
    for chunk in text.split():
        (own if is_question_word(chunk) else other).update(analyze(chunk))
    return frozenset(own - other) if other else frozenset()


def _context(text: str, analyze: Callable[[str], list[str]]) -> frozenset[str]:
    """The words only on the lines around a pasted log's message: where some of its lines,
    not all, name an error (`_LABEL`), the others are its context (the command run, a
    banner, a version, the file linted, the stack frames), unless a line naming the error
    says the word too."""
    lines = [line for line in text.splitlines() if line.strip()]
    stating = [bool(_LABEL.search(line)) for line in lines]
    if all(stating) or not any(stating):
        return frozenset()
    message: set[str] = set()
    around: set[str] = set()
    for line, states in zip(lines, stating, strict=True):
        (message if states else around).update(analyze(line))
    return frozenset(around - message)


def _phrases(
    words: list[str], rarity: dict[str, int], counts: Counts, context: frozenset[str]
) -> tuple[tuple[str, ...], ...]:
    """The `MAX_PHRASES` rarest runs of the query's words, none of its context's: a phrase
    of the banner around a pasted message ("Oops! Something went wrong!") found the page
    whose examples throw it."""
    runs = dict.fromkeys(
        tuple(words[start : start + PHRASE_WORDS]) for start in range(len(words) - PHRASE_WORDS + 1)
    )
    kept = [
        run
        for run in runs
        if len(set(run)) == PHRASE_WORDS and all(rarity[word] for word in run)
        if not context.intersection(run)
        if _telling(run, rarity, counts)
    ]
    kept.sort(key=lambda run: sum(rarity[word] for word in run))
    return tuple(kept[:MAX_PHRASES])


def _telling(words: Iterable[str], rarity: dict[str, int], counts: Counts) -> bool:
    """Whether a phrase of `words` is asked for: not if each of them is on more than
    `COMMON_SHARE` of the pages and on more than `COMMON_PAGES`. Such a phrase's pages are
    half the tree or more, and a phrase is checked, position by position, on every page
    holding all of its words (no bound on its score lets Tantivy skip one): over 1,000
    pages of 20 KB, a query of such phrases cost 30 ms, and in owndocs mode, whose ties ask
    for the pages of each tie apart, 170 to 190 ms. Over a hundred pages or fewer any
    phrase costs little."""
    most = max(COMMON_SHARE * counts.pages, COMMON_PAGES)
    return min(rarity[word] for word in words) <= most
