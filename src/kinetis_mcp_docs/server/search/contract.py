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
answers a token of one character outright). A token of three characters or more is first
looked for among the chunks holding the rarest of its trigrams (runs of three characters),
each chunk listed under every trigram it holds when the vocabulary is laid out: one
`in` for each such chunk rather than a pass over the whole vocabulary, which at 1,000
pages of 20 KB is 0.4 MB and took 0.2 ms a token (half of an ordinary two-word search).
When even its rarest trigram is in many chunks the pass is the cheaper and is taken.

Titles and URLs are short, but a token is looked for in every one of them: each of their
characters and pairs of characters is kept with the bitmask of the pages holding it, so a
token of one or two characters is answered outright, and a longer one only checked against
the pages holding each of its pairs.

Scores are counted for every page at once, as bit planes (plane `i` holds bit `i` of every
page's score): adding a token's weight to the pages of a bitmask is a few operations on
whole bitmasks, and the pages of the best score left are found plane by plane, from the
top. So nothing of a search loops over the pages one by one.

A snapshot is never changed: `changed` returns a new one sharing what it kept.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator

TITLE_WEIGHT = 4
MATCH_WEIGHT = 1
# Pages whose bits are gathered in masks of their own block before they join the site's
# masks (see `ContractScores.add`).
BLOCK_PAGES = 1024
# A run of this many characters of a token is looked up among the chunks holding it.
_GRAM = 3
# Checking one listed chunk costs about as much as this many characters of the pass over
# the whole vocabulary (about 100 ns against 0.5 ns a character, measured): past as many
# chunks, the pass is taken.
_CHUNK_CHECK_CHARS = 200


def chunks_of(folded_body: str) -> set[str]:
    return set(folded_body.split())


def characters_of(chunks: set[str]) -> set[str]:
    """The characters of a body's chunks: every one of its characters a token can hold.

    Read from the distinct chunks, half a body's length or less, rather than the body.
    """
    return set("".join(chunks))


class ContractScores:
    """The pages' lowercased titles, URLs and body chunks: what the contract's scoring reads."""

    def __init__(self) -> None:
        self._labels: dict[int, tuple[str, str]] = {}  # slot -> (folded title, folded url)
        # Character or pair of characters -> bitmask of the slots whose title (or URL) holds it.
        self._title_pieces: dict[str, int] = {}
        self._url_pieces: dict[str, int] = {}
        self._chunks: dict[str, int] = {}  # chunk -> bitmask of the slots holding it
        self._pieces: dict[str, int] = {}  # character -> bitmask of the slots holding it
        self._every = 0
        # The bits of pages added in one block of slots, not yet in `_chunks` and `_pieces`.
        self._block = -1
        self._block_chunks: dict[str, int] = {}
        self._vocabulary = ""
        self._starts: list[int] = []
        self._masks: list[int] = []
        self._ordered: list[str] = []  # the chunks, in the vocabulary's order
        # Trigram -> the positions in `_ordered` of the chunks holding it.
        self._grams: dict[str, array[int]] = {}
        self._vocabulary_stale = False

    def copy(self) -> ContractScores:
        self._join_block()
        scores = ContractScores()
        scores._labels = dict(self._labels)
        scores._title_pieces = dict(self._title_pieces)
        scores._url_pieces = dict(self._url_pieces)
        scores._chunks = dict(self._chunks)
        scores._pieces = dict(self._pieces)
        scores._every = self._every
        scores._vocabulary, scores._starts, scores._masks = (
            self._vocabulary,
            self._starts,
            self._masks,
        )
        scores._ordered, scores._grams = self._ordered, self._grams
        return scores

    def add(self, slot: int, folded_title: str, folded_url: str, folded_body: str) -> None:
        """Index a page at the free `slot` (only on a copy not yet searched).

        Setting a page's bit in the mask of each of its chunks makes a new integer as long
        as the site's highest slot, for every chunk of every page: at 10,000 pages that copying
        was half of the contract's indexing. A page's bits are set in masks of its block of
        `BLOCK_PAGES` slots instead, short whatever the site's size, and each block's mask
        joins the site's once per chunk, when a page of another block comes or at `settle`.
        """
        bit = 1 << slot
        self._labels[slot] = (folded_title, folded_url)
        for label, pieces_of in (
            (folded_title, self._title_pieces),
            (folded_url, self._url_pieces),
        ):
            for piece in _pieces(label):
                pieces_of[piece] = pieces_of.get(piece, 0) | bit
        self._every |= bit
        block, place = divmod(slot, BLOCK_PAGES)
        if block != self._block:
            self._join_block()
            self._block = block
        chunks = self._block_chunks
        in_block = 1 << place
        for chunk in chunks_of(folded_body):
            chunks[chunk] = chunks.get(chunk, 0) | in_block
        self._vocabulary_stale = True

    def _join_block(self) -> None:
        """Move the bits gathered for the last block into the site's masks.

        A page holds a character when one of its chunks does: the block's characters are
        read from its distinct chunks here, once, rather than from each page's (a
        character's pages are the pages of the chunks holding it).
        """
        if self._block < 0:
            return
        shift = self._block * BLOCK_PAGES
        chunks = self._chunks
        pieces: dict[str, int] = {}
        for chunk, bits in self._block_chunks.items():
            chunks[chunk] = chunks.get(chunk, 0) | bits << shift
            for piece in set(chunk):
                pieces[piece] = pieces.get(piece, 0) | bits
        for piece, bits in pieces.items():
            self._pieces[piece] = self._pieces.get(piece, 0) | bits << shift
        self._block_chunks.clear()
        self._block = -1

    def remove(self, slot: int, folded_body: str) -> None:
        """Remove the page at `slot`, whose body was `folded_body` (only on a copy)."""
        self._join_block()
        keep = ~(1 << slot)
        title, url = self._labels.pop(slot)
        for label, pieces_of in ((title, self._title_pieces), (url, self._url_pieces)):
            for piece in _pieces(label):
                left = pieces_of[piece] & keep
                if left:
                    pieces_of[piece] = left
                else:
                    del pieces_of[piece]
        self._every &= keep
        held = chunks_of(folded_body)
        for chunk in held:
            left = self._chunks[chunk] & keep
            if left:
                self._chunks[chunk] = left
            else:
                del self._chunks[chunk]
        for piece in characters_of(held):
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
        self._join_block()
        ordered = list(self._chunks)
        self._vocabulary = "\n".join(ordered)
        starts, position = [], 0
        for chunk in ordered:
            starts.append(position)
            position += len(chunk) + 1
        self._starts = starts
        self._masks = [self._chunks[chunk] for chunk in ordered]
        self._ordered = ordered
        self._grams = _grams_of(ordered)
        self._vocabulary_stale = False

    def ranked(self, query: str, limit: int) -> list[tuple[int, list[int]]]:
        """The pages scoring above zero for `query`, as groups of equal score, best first,
        until the groups hold `limit` pages (or there are no more)."""
        tokens = query.lower().split()
        counter = _Counter()
        scored = 0
        for token in dict.fromkeys(tokens):  # a repeated token scores again, found once
            weight = tokens.count(token)
            in_title = self._in_labels(token, 0, self._title_pieces)
            in_url = self._in_labels(token, 1, self._url_pieces) & ~in_title
            found = (in_url | self._in_bodies(token, ~in_title)) & ~in_title
            counter.add(in_title, (TITLE_WEIGHT + MATCH_WEIGHT) * weight)
            counter.add(found, MATCH_WEIGHT * weight)
            scored |= in_title | found
        groups = []
        left = limit
        for score, mask in counter.groups(scored):
            slots = list(_slots(mask))
            groups.append((score, slots))
            left -= len(slots)
            if left <= 0:
                break
        return groups

    def scores(self, query: str) -> dict[int, int]:
        """Every page's score for `query`, the pages scoring zero left out."""
        return {
            slot: score for score, slots in self.ranked(query, len(self._labels)) for slot in slots
        }

    def _in_labels(self, token: str, which: int, pieces: dict[str, int]) -> int:
        """A bitmask of the pages whose title (`which` 0) or URL (1) contains `token`."""
        if len(token) <= _PIECE:
            return pieces.get(token, 0)
        possible = self._every
        for start in range(len(token) - _PIECE + 1):
            possible &= pieces.get(token[start : start + _PIECE], 0)
            if not possible:
                return 0
        labels = self._labels
        found = 0
        for slot in _slots(possible):
            if token in labels[slot][which]:
                found |= 1 << slot
        return found

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
        if len(token) >= _GRAM:
            grams = self._grams
            listed = min(
                (
                    grams.get(token[start : start + _GRAM], _NONE)
                    for start in range(len(token) - _GRAM + 1)
                ),
                key=len,
            )
            if len(listed) * _CHUNK_CHECK_CHARS < len(vocabulary):
                ordered = self._ordered
                for index in listed:
                    if token in ordered[index]:
                        found |= masks[index]
                return found & possible
        last = len(starts) - 1
        position = vocabulary.find(token)
        while position >= 0:
            index = bisect_right(starts, position) - 1
            found |= masks[index]
            if found & possible == possible or index == last:
                break
            position = vocabulary.find(token, starts[index + 1])
        return found & possible


_PIECE = 2
_NONE: array[int] = array("i")


def _grams_of(chunks: list[str]) -> dict[str, array[int]]:
    """Each trigram of `chunks` -> the positions of the chunks holding it, in order (a
    chunk holding one twice is listed twice)."""
    grams: dict[str, array[int]] = {}
    for index, chunk in enumerate(chunks):
        for start in range(len(chunk) - _GRAM + 1):
            gram = chunk[start : start + _GRAM]
            listed = grams.get(gram)
            if listed is None:
                grams[gram] = listed = array("i")
            listed.append(index)
    return grams


def _pieces(label: str) -> set[str]:
    """Every character of `label` and every pair of neighbouring characters."""
    return set(label) | {label[start : start + _PIECE] for start in range(len(label) - 1)}


class _Counter:
    """A count per page, as bit planes: `planes[i]` holds bit `i` of every page's count."""

    __slots__ = ("planes",)

    def __init__(self) -> None:
        self.planes: list[int] = []

    def add(self, mask: int, weight: int) -> None:
        """Add `weight` to the count of every page in `mask`."""
        planes = self.planes
        for place in range(weight.bit_length()):
            if not weight >> place & 1:
                continue
            carry, level = mask, place
            while carry:
                if level >= len(planes):
                    planes.extend([0] * (level + 1 - len(planes)))
                held = planes[level]
                planes[level] = held ^ carry
                carry &= held
                level += 1

    def groups(self, among: int) -> Iterator[tuple[int, int]]:
        """The pages of `among` as (count, bitmask of the pages with it), highest first."""
        left = among
        while left:
            best, count = left, 0
            for level in range(len(self.planes) - 1, -1, -1):
                with_bit = best & self.planes[level]
                if with_bit:
                    best, count = with_bit, count | 1 << level
            yield count, best
            left &= ~best


def _slots(mask: int) -> Iterator[int]:
    """The positions of the set bits of a non-negative `mask`, lowest first."""
    bits = bin(mask)[:1:-1]
    found = bits.find("1")
    while found >= 0:
        yield found
        found = bits.find("1", found + 1)
