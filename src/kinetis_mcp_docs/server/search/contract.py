"""The contract's scoring (`--ranking owndocs`), exactly, at a cost bounded for every token.

The query is lowercased and split on whitespace; for each token a page gains 4 when its
title contains it and 1 more when its title, body or URL contains it ("contains": substring
containment of the lowercased token in the lowercased text).

A token holds no whitespace, so any occurrence of it in a body lies inside one chunk of
that body, a maximal run of non-whitespace (`str.split`'s), and a body contains it exactly
when one of its chunks does. So bodies are never scanned: every distinct chunk of the site
is kept once, on one line of one string, beside the bitmask of the pages holding it, and
a token is found with one `str.find` pass over that string rather than over the text. The
pass stops as soon as no page that could still hold the token is left: a page holds every
character of a token it holds, and each character's pages are kept too (which also
answers a token of one character outright).

A snapshot is never changed: `changed` returns a new one sharing what it kept.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

TITLE_WEIGHT = 4
MATCH_WEIGHT = 1


def chunks_of(folded_body: str) -> set[str]:
    return set(folded_body.split())


class ContractScores:
    """The pages' lowercased titles, URLs and body chunks: what the contract's scoring reads."""

    def __init__(self) -> None:
        self._labels: dict[int, tuple[str, str]] = {}  # slot -> (folded title, folded url)
        self._chunks: dict[str, int] = {}  # chunk -> bitmask of the slots holding it
        self._pieces: dict[str, int] = {}  # character -> bitmask of the slots holding it
        self._every = 0
        self._vocabulary = ""
        self._starts: list[int] = []
        self._masks: list[int] = []
        self._vocabulary_stale = False

    def copy(self) -> ContractScores:
        scores = ContractScores()
        scores._labels = dict(self._labels)
        scores._chunks = dict(self._chunks)
        scores._pieces = dict(self._pieces)
        scores._every = self._every
        scores._vocabulary, scores._starts, scores._masks = (
            self._vocabulary,
            self._starts,
            self._masks,
        )
        return scores

    def add(self, slot: int, folded_title: str, folded_url: str, folded_body: str) -> None:
        """Index a page at the free `slot` (only on a copy not yet searched)."""
        bit = 1 << slot
        self._labels[slot] = (folded_title, folded_url)
        self._every |= bit
        chunks, pieces = self._chunks, self._pieces
        for chunk in chunks_of(folded_body):
            chunks[chunk] = chunks.get(chunk, 0) | bit
        for piece in set(folded_body):
            pieces[piece] = pieces.get(piece, 0) | bit
        self._vocabulary_stale = True

    def remove(self, slot: int, folded_body: str) -> None:
        """Remove the page at `slot`, whose body was `folded_body` (only on a copy)."""
        keep = ~(1 << slot)
        del self._labels[slot]
        self._every &= keep
        for chunk in chunks_of(folded_body):
            left = self._chunks[chunk] & keep
            if left:
                self._chunks[chunk] = left
            else:
                del self._chunks[chunk]
        for piece in set(folded_body):
            left = self._pieces[piece] & keep
            if left:
                self._pieces[piece] = left
            else:
                del self._pieces[piece]
        self._vocabulary_stale = True

    def settle(self) -> None:
        """Lay out the vocabulary after the last `add` or `remove`, before any search."""
        if not self._vocabulary_stale:
            return
        ordered = list(self._chunks)
        self._vocabulary = "\n".join(ordered)
        starts, position = [], 0
        for chunk in ordered:
            starts.append(position)
            position += len(chunk) + 1
        self._starts = starts
        self._masks = [self._chunks[chunk] for chunk in ordered]
        self._vocabulary_stale = False

    def scores(self, query: str) -> dict[int, int]:
        """Every page's score for `query`, the pages scoring zero left out."""
        tokens = query.lower().split()
        scores: dict[int, int] = {}
        for token in dict.fromkeys(tokens):  # a repeated token scores again, found once
            weight = tokens.count(token)
            in_title = in_url = 0
            for slot, (title, url) in self._labels.items():
                if token in title:
                    in_title |= 1 << slot
                elif token in url:
                    in_url |= 1 << slot
            found = (in_url | self._in_bodies(token, ~in_title)) & ~in_title
            for slot in _slots(in_title):
                scores[slot] = scores.get(slot, 0) + (TITLE_WEIGHT + MATCH_WEIGHT) * weight
            for slot in _slots(found):
                scores[slot] = scores.get(slot, 0) + MATCH_WEIGHT * weight
        return scores

    def _in_bodies(self, token: str, wanted: int) -> int:
        """A bitmask of the pages whose body contains `token`, exact among those in
        `wanted` (others may or may not be in it)."""
        pieces = self._pieces
        if len(token) == 1:
            return pieces.get(token, 0)
        # Only a page holding every character of the token can hold it.
        possible = self._every & wanted
        for piece in set(token):
            possible &= pieces.get(piece, 0)
            if not possible:
                return 0
        found = 0
        vocabulary, starts, masks = self._vocabulary, self._starts, self._masks
        last = len(starts) - 1
        position = vocabulary.find(token)
        while position >= 0:
            index = bisect_right(starts, position) - 1
            found |= masks[index]
            if found & possible == possible or index == last:
                break
            position = vocabulary.find(token, starts[index + 1])
        return found & possible


def _slots(mask: int) -> Iterator[int]:
    """The positions of the set bits of a non-negative `mask`, lowest first."""
    bits = bin(mask)[:1:-1]
    found = bits.find("1")
    while found >= 0:
        yield found
        found = bits.find("1", found + 1)
