"""Which pages' bodies contain a token, for the contract's scoring.

A token holds no whitespace, so a body contains it exactly when one of the body's chunks
(its runs of non-whitespace, `str.split`'s) does. Each page's distinct chunks are kept,
lowercased and joined by blanks, as UTF-8 (about 0.45 of the text: a match of a token's
UTF-8 is a match of the token, UTF-8 being self-synchronising), and indexed in Tantivy by
the runs of three characters they hold, a blank before the first chunk and after the
last; a run across two chunks holds a blank, which no token does. So a token of:
- three characters is on exactly the pages holding it as a run;
- two is on exactly the pages holding a run with it in (a regular expression over the
  index's runs, a blank at either end included: a chunk of two characters has no run of
  its own);
- more is on some of the pages holding all of its runs of three (at most `MOST_GRAMS` of
  them, spread over it): its candidates. A candidate is checked in its chunks (`in` on
  bytes, nothing copied) only when the scoring asks (`holding`): only the pages a group
  shown could hold are (see `contract`); checking every candidate was most of a search's
  time ("static": 2,604 candidates, 1,153 holding it, each about 2.4 us).
Runs of two characters indexed too made the index's build half as long again.

Tantivy gathers every page's runs in its own thread, as the pages come: nothing of it
loops over a page's characters in the interpreter. A token's candidates are remembered by
the snapshot (the `REMEMBERED` last asked): the words a search repeats ("the", "is", "to")
are the costliest to gather, on most pages.

The index is shared by the snapshots built on it, as the relevance index is: a change is
written and committed, and a searcher opened on the result; a searcher keeps seeing the
segments it was opened on.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable
from itertools import repeat

import tantivy

MOST_GRAMS = 8
REMEMBERED = 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
_WRITER_HEAP = 30_000_000


def _index() -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("page", indexed=True, fast=True)
    builder.add_text_field("runs", tokenizer_name="runs", index_option="basic")
    index = tantivy.Index(builder.build())
    index.register_tokenizer(
        "runs", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(3, 3)).build()
    )
    return index


class BodyIndex:
    """The pages' chunks as Tantivy indexes them; `Bodies` snapshots search them."""

    def __init__(self) -> None:
        self._index = _index()
        self._lock = threading.Lock()  # one change at a time, from `writer` to `Bodies`
        self._writer: tantivy.IndexWriter | None = None

    def writer(self) -> tantivy.IndexWriter:
        """The writer of the change under way, opened on the first call of a change."""
        if self._writer is None:
            self._lock.acquire()
            self._writer = self._index.writer(_WRITER_HEAP, 1)
        return self._writer

    def committed(self) -> tantivy.Searcher | None:
        """Commit the change under way, if any; a searcher of the result (None when no
        change was ever made)."""
        if self._writer is not None:
            try:
                self._writer.commit()
                self._writer.wait_merging_threads()
            finally:
                self._writer = None
                self._lock.release()
            self._index.reload()
        return self._index.searcher()

    def abandoned(self) -> None:
        """Drop the change under way, if any."""
        if self._writer is not None:
            try:
                self._writer.rollback()
            finally:
                self._writer = None
                self._lock.release()

    @property
    def schema(self) -> tantivy.Schema:
        return self._index.schema


class Bodies:
    """The pages' distinct chunks, by slot, and what the index of their runs says."""

    def __init__(self, index: BodyIndex, chunks: dict[int, bytes] | None = None) -> None:
        self._index = index
        self._chunks: dict[int, bytes] = {} if chunks is None else dict(chunks)
        self._searcher: tantivy.Searcher | None = None
        self._remembered: OrderedDict[str, tuple[int, int]] = OrderedDict()
        self._remembering = threading.Lock()

    def copy(self) -> Bodies:
        return Bodies(self._index, self._chunks)

    def add(self, slot: int, chunks: Iterable[str]) -> str:
        """Index the page at `slot`; its chunks as kept, joined by blanks."""
        joined = " ".join(chunks)
        self._chunks[slot] = joined.encode("utf-8", "surrogatepass")
        self._index.writer().add_document(tantivy.Document(page=slot, runs=f" {joined} "))
        return joined

    def remove(self, slot: int) -> str:
        """Remove the page at `slot`; its chunks as they were kept, joined by blanks."""
        joined = self._chunks.pop(slot).decode("utf-8", "surrogatepass")
        self._index.writer().delete_documents_by_term("page", slot)
        return joined

    def settle(self) -> None:
        self._searcher = self._index.committed()

    def abandon(self) -> None:
        self._index.abandoned()

    def candidates(self, token: str) -> tuple[int, int]:
        """Of the pages whose body may hold `token` (lowercase, no whitespace, two characters
        or more): a bitmask of them, holding every page whose body does, and a bitmask of
        those known to (every one, for a token of two or three characters); `holding`
        settles the others."""
        with self._remembering:
            known = self._remembered.get(token)
            if known is not None:
                self._remembered.move_to_end(token)
                return known
        found = self._candidates(token)
        with self._remembering:
            self._remembered[token] = found
            if len(self._remembered) > REMEMBERED:
                self._remembered.popitem(last=False)
        return found

    def holding(self, token: str, asked: int, slots: Iterable[int]) -> int:
        """The bitmask of the pages of `asked` (at `slots`) whose body holds `token`: each
        page's chunks searched for its UTF-8 (`in` on bytes, nothing copied). What is found
        is remembered with the token's candidates, so that a search repeated, or a token
        asked again, reads no page twice: a query whose candidates hold few of its words
        read 7,000 pages of 20 KB (200 ms) each time it was asked."""
        encoded = token.encode("utf-8")
        chunks = self._chunks
        found = mask_of(slot for slot in slots if encoded in chunks[slot])
        with self._remembering:
            known = self._remembered.get(token)
            if known is not None:
                self._remembered[token] = (known[0] & ~(asked & ~found), known[1] | found)
        return found

    def _candidates(self, token: str) -> tuple[int, int]:
        searcher, schema = self._searcher, self._index.schema
        if searcher is None or (not token.isascii() and _SURROGATE.search(token)):
            return 0, 0  # a page is Unicode: it holds no lone surrogate
        if len(token) == 2:
            query = tantivy.Query.regex_query(schema, "runs", f".?{_escaped(token)}.?")
        elif len(token) == 3:
            query = tantivy.Query.term_query(schema, "runs", token)
        else:
            runs = list(dict.fromkeys(token[start : start + 3] for start in range(len(token) - 2)))
            if len(runs) > MOST_GRAMS:
                last = len(runs) - 1
                runs = [runs[place * last // (MOST_GRAMS - 1)] for place in range(MOST_GRAMS)]
            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, tantivy.Query.term_query(schema, "runs", run))
                    for run in runs
                ]
            )
        # Ordered by the page field, a hit holds its page's slot: half the time of scoring
        # them and reading each hit's slot from the field afterwards (0.9 against 1.7 ms for
        # the 6,462 pages with the runs of "with", of 9,746).
        hits = searcher.search(
            query, max(1, int(searcher.num_docs)), count=False, order_by_field="page"
        ).hits
        if not hits:
            return 0, 0
        candidates = mask_of(slot for slot, _ in hits)
        return candidates, candidates if len(token) <= 3 else 0


def _escaped(text: str) -> str:
    """`text` as a literal in a regular expression of Tantivy's (Rust's `regex` syntax): each
    mark in a class of its own (`\\<` is a word's start there, not `<`), but those that mean
    something in a class, which take a backslash."""
    return "".join(
        char
        if char.isalnum() or not char.isascii()
        else f"\\{char}"
        if char in _IN_CLASS
        else f"[{char}]"
        for char in text
    )


# What a class of a regular expression takes a backslash before.
_IN_CLASS = "[]\\^-&~"


def mask_of(slots: Iterable[int]) -> int:
    """The bitmask of `slots`: each slot's digit set in a text of binary digits, made one
    integer at the end (an integer made for every slot copies the mask each time); the
    digits are set by `map`, with no step of the interpreter's a slot."""
    listed = list(slots)
    if not listed:
        return 0
    digits = bytearray(b"0") * (max(listed) + 1)
    deque(map(digits.__setitem__, listed, repeat(_ONE)), maxlen=0)
    digits.reverse()
    return int(digits, 2)


_ONE = ord("1")
