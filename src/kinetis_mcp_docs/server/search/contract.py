"""The contract's scoring (`--ranking owndocs`), exactly, at a cost bounded for every token.

The query is lowercased and split on whitespace; for each token a page gains 4 when its
title contains it and 1 more when its title, body or URL contains it ("contains": substring
containment of the lowercased token in the lowercased text).

Bodies are never scanned: `bodies` keeps each page's distinct chunks, indexed by their runs
of characters. A page holds every character of a token it holds, and each character's pages
are kept too: they answer a token of one character outright.

Titles and URLs are short, but a token is looked for in every one of them: each of their
characters and pairs of characters is kept with the bitmask of the pages holding it, so a
token of one or two characters is answered outright, and a longer one only checked against
the pages holding each of its pairs.

A token of four characters or more is known by its candidates in bodies, a superset of the
pages holding it: a page's count starts as if it held each, and a group of equal score is
final only when none of its pages is a candidate still (`_groups`). So a candidate is read
only when a group shown could hold it, which most are not.

Scores are counted for every page at once, as bit planes (plane `i` holds bit `i` of every
page's score): adding a token's weight to the pages of a bitmask is a few operations on
whole bitmasks, and the pages of the best score left are found plane by plane, from the
top. So nothing of a search loops over the pages one by one.

A snapshot is never changed: `copy` makes the next one, which commits its changes to the
bodies' index once they are in (`settle`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from itertools import repeat

from .bodies import Bodies, BodyIndex, mask_of

TITLE_WEIGHT = 4
MATCH_WEIGHT = 1
_PIECE = 2


def chunks_of(folded_body: str) -> set[str]:
    return set(folded_body.split())


def characters_of(joined_chunks: str) -> set[str]:
    """The characters of a body, from its distinct chunks joined by blanks (`Bodies.add`'s):
    every character a token can hold, in about half the text a body's own would read."""
    return set(joined_chunks)


class _Masks:
    """Bitmasks of pages by key (a character, a pair of them), kept whole once settled.

    Pages come in bulk (a tree's thousands at its first build): each page's slot is listed
    under each of its keys, and each key's list joins its mask once, when settled. Setting
    the page's bit in the key's mask made a new integer as wide as the site each time: at
    10,000 pages most of the contract's indexing, and heaps of freed integers.
    """

    __slots__ = ("_pending", "masks")

    def __init__(self, masks: dict[str, int] | None = None) -> None:
        self.masks: dict[str, int] = {} if masks is None else dict(masks)
        self._pending: defaultdict[str, list[int]] = defaultdict(list)

    def add(self, keys: Iterable[str], slot: int) -> None:
        # `map` lists the slot under each key with no step of the interpreter's a key.
        deque(map(list.append, map(self._pending.__getitem__, keys), repeat(slot)), maxlen=0)

    def remove(self, keys: Iterable[str], slot: int) -> None:
        self.settle()
        keep = ~(1 << slot)
        masks = self.masks
        for key in keys:
            left = masks[key] & keep
            if left:
                masks[key] = left
            else:
                del masks[key]

    def settle(self) -> None:
        masks = self.masks
        for key, slots in self._pending.items():
            masks[key] = masks.get(key, 0) | mask_of(slots)
        self._pending.clear()


class ContractScores:
    """The pages' lowercased titles, URLs and body chunks: what the contract's scoring reads."""

    def __init__(self) -> None:
        self._labels: dict[int, tuple[str, str]] = {}  # slot -> (folded title, folded url)
        # Character or pair of characters -> bitmask of the slots whose title (or URL) holds
        # it; character -> bitmask of the slots whose body holds it.
        self._title_pieces = _Masks()
        self._url_pieces = _Masks()
        self._characters = _Masks()
        self._every = 0
        self._bodies = Bodies(BodyIndex())

    def copy(self) -> ContractScores:
        scores = ContractScores.__new__(ContractScores)
        scores._labels = dict(self._labels)
        scores._title_pieces = _Masks(self._title_pieces.masks)
        scores._url_pieces = _Masks(self._url_pieces.masks)
        scores._characters = _Masks(self._characters.masks)
        scores._every = self._every
        scores._bodies = self._bodies.copy()
        return scores

    def add(self, slot: int, folded_title: str, folded_url: str, folded_body: str) -> None:
        """Index a page at the free `slot` (only on a copy not yet searched)."""
        self._labels[slot] = (folded_title, folded_url)
        self._title_pieces.add(_pieces(folded_title), slot)
        self._url_pieces.add(_pieces(folded_url), slot)
        self._every |= 1 << slot
        joined = self._bodies.add(slot, chunks_of(folded_body))
        self._characters.add(characters_of(joined), slot)

    def remove(self, slot: int) -> None:
        """Remove the page at `slot` (only on a copy): its characters are read from its
        chunks as the bodies kept them, as they were when it was added."""
        title, url = self._labels.pop(slot)
        self._title_pieces.remove(_pieces(title), slot)
        self._url_pieces.remove(_pieces(url), slot)
        self._every &= ~(1 << slot)
        self._characters.remove(characters_of(self._bodies.remove(slot)), slot)

    def settle(self) -> None:
        """Commit the changes since the copy, before any search."""
        for masks in (self._title_pieces, self._url_pieces, self._characters):
            masks.settle()
        self._bodies.settle()

    def abandon(self) -> None:
        """Drop the changes since the copy (which is then never searched)."""
        self._bodies.abandon()

    def ranked(self, query: str, limit: int) -> list[tuple[int, list[int]]]:
        """The pages scoring above zero for `query`, as groups of equal score, best first,
        until the groups hold `limit` pages (or there are no more)."""
        tokens = query.lower().split()
        counter = _Counter()
        scored = 0
        # A token of four characters or more whose body pages are known only as candidates
        # (see `bodies`): each is counted as holding it, until a group reaches it (`_groups`).
        unsettled: list[tuple[str, int, int]] = []  # (token, weight, pages that may not)
        for token in dict.fromkeys(tokens):  # a repeated token scores again, found once
            weight = tokens.count(token)
            in_title = self._in_labels(token, 0, self._title_pieces.masks)
            in_url = self._in_labels(token, 1, self._url_pieces.masks) & ~in_title
            in_body, sure = self._in_bodies(token)
            found = (in_url | in_body) & ~in_title
            counter.add(in_title, (TITLE_WEIGHT + MATCH_WEIGHT) * weight)
            counter.add(found, MATCH_WEIGHT * weight)
            scored |= in_title | found
            doubtful = found & ~in_url & ~sure
            if doubtful:
                unsettled.append((token, weight, doubtful))
        groups = []
        left = limit
        for score, mask in self._groups(counter, scored, unsettled):
            slots = list(_slots(mask))
            groups.append((score, slots))
            left -= len(slots)
            if left <= 0:
                break
        return groups

    def _groups(
        self, counter: _Counter, among: int, unsettled: list[tuple[str, int, int]]
    ) -> Iterator[tuple[int, int]]:
        """The pages of `among` as (score, bitmask of the pages with it), highest first.

        `counter` holds each page's score as if it held every token it is a candidate for:
        never less than its own. The pages of the highest count are a group once none of them
        is a candidate still: every other page counts less, so scores less. Until then, the
        pages of the highest count are looked for each token they may hold, and a token not
        found is taken off their count. So only pages that could reach a group shown are
        read: most candidates of a common word never are (a word every title of the first
        group holds settles it with no page read at all)."""
        left = among
        while left:
            count, best = counter.best(left)
            asked_any = 0
            for _, _, doubtful in unsettled:
                asked_any |= doubtful & best
            if not asked_any:
                yield count, best
                left &= ~best
                continue
            still = []
            for token, weight, doubtful in unsettled:
                asked = doubtful & best
                if asked:
                    refuted = asked & ~self._bodies.holding(token, asked, _slots(asked))
                    if refuted:
                        counter.subtract(refuted, weight * MATCH_WEIGHT)
                if doubtful & ~asked:
                    still.append((token, weight, doubtful & ~asked))
            unsettled = still
            left &= ~(asked_any & ~counter.nonzero())  # a page left holding no token

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
        # The pages found listed and made one mask at the end: a bit set a page made a new
        # integer as wide as the site each time (a third of a 60-word paragraph's search).
        labels = self._labels
        return mask_of(slot for slot in _slots(possible) if token in labels[slot][which])

    def _in_bodies(self, token: str) -> tuple[int, int]:
        """A bitmask of pages holding every page whose body contains `token`, and the bitmask
        of those of them known to."""
        if len(token) == 1:
            found = self._characters.masks.get(token, 0)
            return found, found
        return self._bodies.candidates(token)


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

    def subtract(self, mask: int, weight: int) -> None:
        """Take `weight` off the count of every page in `mask` (each counting at least that)."""
        planes = self.planes
        for place in range(weight.bit_length()):
            if not weight >> place & 1:
                continue
            borrow, level = mask, place
            while borrow:
                held = planes[level]
                planes[level] = held ^ borrow
                borrow &= ~held
                level += 1

    def nonzero(self) -> int:
        """The pages counting above zero."""
        every = 0
        for plane in self.planes:
            every |= plane
        return every

    def best(self, among: int) -> tuple[int, int]:
        """The highest count of the pages of `among` (not 0), and the bitmask of those."""
        best, count = among, 0
        for level in range(len(self.planes) - 1, -1, -1):
            with_bit = best & self.planes[level]
            if with_bit:
                best, count = with_bit, count | 1 << level
        return count, best


def _slots(mask: int) -> Iterator[int]:
    """The positions of the set bits of a non-negative `mask`, lowest first."""
    bits = bin(mask)[:1:-1]
    found = bits.find("1")
    while found >= 0:
        yield found
        found = bits.find("1", found + 1)
