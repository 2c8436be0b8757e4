"""Names: identifiers as a page or a query writes them, kept whole and unstemmed.

A stemmer is for words: it makes `cookies` and `cookie` one term, and so it makes
`Request.cookies` the words `request` and `cooki`, which every page about cookies holds.
So an identifier is also kept whole, as one term of its own, beside the words it is made
of: `Request.cookies`, `no-unused-vars`, `--no-verify`, `/permissive-`, `HeadersInit`,
`C2065`, `HSET`. Its term is its letters and digits, lowercased and joined, so that the
ways one name is written find one another (`use_fetch`, `use-fetch` and `useFetch` are
`usefetch`); the separators are dropped, not the name's meaning, since a name is never
stemmed and is looked up only among names.

What is a name is read from its shape alone, the same way in a page and in a query: words
joined by `.`, `::`, `->`, `_`, `-`, `/`, `:`, `#` or `@`; a flag or switch (`--fix`, `-c`,
`/EHsc`); a word with a capital inside (`useFetch`) or with letters and digits mixed
(`RESP3`); a word in capitals (`WRONGTYPE`). A name holds a letter; `12:7` and `3.75` are
no names.

A page names things where it writes code: its title, its headings and its code spans
(between backticks). Those are read for names, not its prose, which is most of its text
and, read for names too, cost five seconds over the 45 MB of a tree of 10,000 pages. A code
span's every token is taken as a name (`span_terms`): the query side asks only for names.
"""

from __future__ import annotations

import re

# Where a name starts: not inside a word (a name's own letters are matched from its first),
# and a letter ahead within its first 16 characters (looked for at most that far, so that
# a run of 100,000 dashes costs its length, not its length squared).
_NAME = re.compile(
    r"""(?<![\w$])(?=[\w$.:/#@-]{0,16}?[A-Za-z])(?:
        (?:--?|/)[A-Za-z][\w$]*(?:(?:::|->|[.:/#@-])[\w$]+)*-?        # --fix, -c, /permissive-
      | [\w$]+(?:(?:::|->|[.:/#@-])[\w$]+)+-?                         # Request.cookies, no-var
      | [\w$]*?(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Za-z0-9]_)[\w$]*  # useFetch, C2065, a_b
      | [A-Z][A-Z_]*[A-Z](?![\w$])                                      # HSET, WRONGTYPE
    )""",
    re.VERBOSE,
)
# The runs of a text's characters a name can hold, but those no name is found in: a word of
# small letters with or without a capital first ("Remarks") or a run of digits. The name
# pattern is tried where one of these starts, which is what a name's own bounds allow
# (blanks joining them): it tried at every character of a heading's words, as costly as
# the words are long, where most of them are words and none of them a name.
_MAY_HOLD_NAMES = re.compile(
    r"(?<![\w$.:/#@>-])(?![A-Z]?[a-z]*(?![\w$.:/#@>-]))(?!\d+(?![\w$.:/#@>-]))[\w$.:/#@>-]+"
)
_RUNS = re.compile(r"[^\W_]+")
_NOT_IN_TERM = re.compile(r"[^\w\s]|_")
# What separates the tokens of a line of code: blanks, brackets, quotes and operators.
_CODE_BREAK = re.compile(r"""[\s()\[\]{}<>,;=+*&|!?^~%'"`\\]+""")
# A span between backticks on one line (a fence's line, ``` and its language, holds none):
# a literal first, which the regular expression engine finds quickly.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# Where a capital starts a word inside a name: after a small letter or digit (useFetch), or
# ending a run of capitals before a small letter (XMLHttp).
_CAPITAL_INSIDE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def written(text: str) -> list[str]:
    """The names `text` writes, in order, as it writes them."""
    return _NAME.findall(" ".join(_MAY_HOLD_NAMES.findall(text)))


def names(text: str) -> list[str]:
    """The names `text` writes, in order, each as its term (see the module's docstring)."""
    return terms(text).split()


def terms(text: str) -> str:
    """`names(text)` as one text, the terms separated by blanks: three passes of the
    regular expression engine over `text`, and none of the interpreter's a name."""
    return _NOT_IN_TERM.sub("", " ".join(written(text))).lower()


def span_terms(code: str) -> str:
    """The terms of code spans' text, as `terms` makes them, the blanks between: every
    token of code, whatever its shape (between blanks, brackets, quotes, commas and
    operators), since a span holds names and the query side looks up only names. Two passes
    of the regular expression engine: reading a tree's spans for names by their shape cost
    it a second at 10,000 pages, this a tenth of that."""
    return _NOT_IN_TERM.sub("", _CODE_BREAK.sub(" ", code)).lower()


def term(name: str) -> str:
    """A name's term: its letters and digits, lowercased and joined."""
    return _NOT_IN_TERM.sub("", name).lower()


def code_spans(text: str) -> str:
    """The code spans of Markdown `text`, one a line: where a page's body names things."""
    return "\n".join(_CODE_SPAN.findall(text))


def words_of(name: str) -> str:
    """The words a name (or names, blanks between) is made of, as text for a stemmer to
    read: `HeadersInit` is "Headers Init", `use_fetch` "use fetch", `XMLHttpRequest` "XML
    Http Request"."""
    return " ".join(_RUNS.findall(_CAPITAL_INSIDE.sub(" ", name)))


def terms_and_words(text: str) -> tuple[str, str]:
    """`terms(text)`, and the words its names are made of (`words_of`), in one reading."""
    found = " ".join(written(text))
    return _NOT_IN_TERM.sub("", found).lower(), words_of(found)
