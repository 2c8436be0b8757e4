"""Identifiers in text, and the words they are made of.

Tantivy's simple tokenizer, which reads the text, splits at anything that is neither a
letter nor a digit and keeps a camelCase word whole: `useAsyncData` is one term,
`use_async_data` and `import.meta.client` three. So that each form finds the others, every
identifier also contributes, beside the text, the words it is made of (`use async data`)
and, when it holds separators, the whole of it without them (`importmetaclient`, the term
`importMetaClient` would be). A query is read the same way, so an exact identifier matches
the one rare whole term, and a part matches the parts.
"""

from __future__ import annotations

import re

# A run of word characters joined by `.`, `:`, `/` or `-` (snake_case is one run); it is an
# identifier rather than a word when it holds a separator, an underscore or a `$`, or a
# capital after a lowercase letter or a digit. Prose holds few such marks: they are found
# first (`_MARK`), and only the runs around them are read, since a Python step for every
# word of the text would cost more than indexing it.
_COMPOUND = re.compile(r"[\w$]+(?:[.:/-][\w$]+)*")
_MARK = re.compile(r"(?<=[a-z0-9])[A-Z]|(?<=[\w$])[.:/-](?=[\w$])|[_$]")
_JOINING = frozenset("_$.:/-")
_ALPHANUMERIC = re.compile(r"[^\W_]+")
# camelCase and PascalCase parts; an acronym stays whole (`useRequestURL`: use, Request, URL).
_CAMEL = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+|[^\W\d_]+")


def identifier_words(text: str) -> str:
    """The words the identifiers in `text` are made of, and each separated identifier
    whole without its separators, as one line of words (empty when there are none)."""
    out: list[str] = []
    for compound in _compounds(text):
        runs = _ALPHANUMERIC.findall(compound)
        for run in runs:
            parts = _CAMEL.findall(run)
            if len(parts) > 1:
                out.extend(parts)
        if len(runs) > 1:
            out.append("".join(runs))
            out.extend(runs)
    return " ".join(out)


def _compounds(text: str) -> list[str]:
    """The identifiers in `text`, in order."""
    found: list[str] = []
    covered = 0
    for mark in _MARK.finditer(text):
        start = mark.start()
        if start < covered:
            continue
        while start > covered and (text[start - 1].isalnum() or text[start - 1] in _JOINING):
            start -= 1
        compound = _COMPOUND.search(text, start)
        if compound is None:
            break
        covered = compound.end()
        found.append(compound.group())
    return found
