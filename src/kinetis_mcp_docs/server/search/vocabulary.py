"""Which pages' bodies contain a token: the site's distinct chunks, laid out compactly.

A token holds no whitespace, so a body contains it exactly when one of the body's chunks
(its maximal runs of non-whitespace, `str.split`'s) does. Every distinct chunk of the site
is kept once, in one UTF-8 string (`\\n` between chunks; a match of a token's UTF-8 is a
match of the token, UTF-8 being self-synchronising), the densest first, with the pages
holding it: as a bitmask for a chunk on `DENSE_PAGES` pages or more, else as a run of page
slots in one array. At 10,000 pages (45 MB of text: 325,000 distinct chunks, 1.8 million
chunk-page pairs) that is about 17 MB, where a bitmask a chunk took 270 MB (a Python
integer is as long as its highest bit, and most chunks are on one page of the thousands).

Finding a token's chunks: the chunks are cut into blocks of about `BLOCK_BYTES`, and a
Tantivy index of the blocks by the runs of three characters they hold names the blocks
that can hold the token (those holding all of its runs); only those are searched, densest
first. A token's pages are known before every block is searched when:
- every page that could hold it (holding each of its characters) is found; or
- the pages left to check hold few enough bytes between them that checking their text
  costs less than searching on (`holds`, the caller's; at most `VERIFIED_BYTES`).

The layout is made from each chunk's pages (`Layout.laid_out`); a change is laid out again
from the layout before it (`holding`), its pages removed and added.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, repeat

import tantivy

DENSE_PAGES = 64
BLOCK_BYTES = 8192
# The most bytes of body text checked directly for a token, rather than searching on.
VERIFIED_BYTES = 256 * 1024
# And the most pages: past as many, their sizes are not even added up.
_VERIFIED_PAGES = 256
_GRAM = 3
# A token's runs of three characters asked of the block index, at most (spread over it).
_MOST_GRAMS = 8
_WRITER_HEAP = 15_000_000
_ONE = ord("1")


def _block_index() -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("block", indexed=False, fast=True)
    builder.add_text_field("grams", tokenizer_name="grams", index_option="basic")
    index = tantivy.Index(builder.build())
    index.register_tokenizer(
        "grams", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(_GRAM, _GRAM)).build()
    )
    return index


@dataclass(frozen=True)
class Layout:
    """The site's distinct chunks and the pages holding each (see the module's docstring)."""

    text: bytes  # every chunk, "\n" after each, densest first
    starts: array[int]  # where each chunk starts in `text`, and `len(text)` last
    dense: list[int]  # the pages' bitmask of each of the first `len(dense)` chunks
    offsets: array[int]  # where each other chunk's pages start in `slots`, and its length
    slots: array[int]
    blocks: array[int]  # where each block starts in `text`, and `len(text)` last
    searcher: tantivy.Searcher | None
    schema: tantivy.Schema | None

    def holding(self, removed: set[int]) -> dict[bytes, array[int]]:
        """Each chunk's pages, as `laid_out` takes them, the pages of `removed` left out: to
        change them, then lay them out again."""
        chunks = self.text.split(b"\n")[:-1]
        dense = len(self.dense)
        holding = {}
        for index, chunk in enumerate(chunks):
            slots = self.dense[index] if index < dense else None
            found = array("I", _slots(slots)) if slots is not None else self._sparse(index - dense)
            if removed:
                found = array("I", [slot for slot in found if slot not in removed])
            if found:
                holding[chunk] = found
        return holding

    @classmethod
    def laid_out(cls, holding: dict[bytes, array[int]]) -> Layout:
        """The layout of each distinct chunk's pages (lowercased chunks in UTF-8, slots)."""
        ordered = sorted(holding, key=lambda chunk: -len(holding[chunk]))
        text = b"".join(chunk + b"\n" for chunk in ordered)
        starts = array("I", accumulate((len(chunk) + 1 for chunk in ordered), initial=0))
        dense_count = next(
            (index for index, chunk in enumerate(ordered) if len(holding[chunk]) < DENSE_PAGES),
            len(ordered),
        )
        dense = [mask_of(holding[chunk]) for chunk in ordered[:dense_count]]
        offsets = array("I", [0])
        slots = array("I")
        for chunk in ordered[dense_count:]:
            slots.extend(holding[chunk])
            offsets.append(len(slots))
        blocks, searcher, schema = _blocks(text)
        return cls(text, starts, dense, offsets, slots, blocks, searcher, schema)

    def _sparse(self, index: int) -> array[int]:
        return self.slots[self.offsets[index] : self.offsets[index + 1]]

    def pages(
        self,
        token: str,
        possible: int,
        holds: Callable[[int, str], bool],
        sizes: Callable[[int], int],
    ) -> int:
        """A bitmask of the pages of `possible` whose body holds `token` (lowercase, no
        whitespace, two characters or more): `holds(slot, token)` checks one page's body
        directly, and `sizes(slot)` is its body's length."""
        found = 0
        dense = len(self.dense)
        encoded = token.encode("utf-8", "surrogatepass")
        text, starts = self.text, self.starts
        for block in self._blocks_holding(token):
            end = self.blocks[block + 1]
            sparse: list[int] = []
            position = text.find(encoded, self.blocks[block], end)
            while position >= 0:
                index = bisect_right(starts, position) - 1
                if index < dense:
                    found |= self.dense[index]
                else:
                    sparse.append(index - dense)
                position = text.find(encoded, starts[index + 1], end)
            if sparse:
                found |= mask_of(slot for index in sparse for slot in self._sparse(index))
            left = possible & ~found
            if not left:
                break
            if left.bit_count() <= _VERIFIED_PAGES and _bytes_of(left, sizes) <= VERIFIED_BYTES:
                for slot in _slots(left):
                    if holds(slot, token):
                        found |= 1 << slot
                break
        return found & possible

    def _blocks_holding(self, token: str) -> list[int]:
        """The blocks that can hold `token`, in order: every block when it is shorter than
        a run the index knows."""
        if self.searcher is None or self.schema is None:
            return list(range(len(self.blocks) - 1))
        if len(token) < _GRAM:
            return list(range(len(self.blocks) - 1))
        grams = list(dict.fromkeys(token[start : start + _GRAM] for start in range(len(token) - 2)))
        if len(grams) > _MOST_GRAMS:
            last = len(grams) - 1
            grams = [grams[place * last // (_MOST_GRAMS - 1)] for place in range(_MOST_GRAMS)]
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "grams", gram))
                for gram in grams
            ]
        )
        hits = self.searcher.search(query, len(self.blocks), count=False).hits
        if not hits:
            return []
        found = self.searcher.fast_field_values("block", [address for _, address in hits])
        return sorted(int(block or 0) for block in found)


def _blocks(text: bytes) -> tuple[array[int], tantivy.Searcher | None, tantivy.Schema | None]:
    """Where each block of `text` starts (each ending at a chunk's end), and a searcher of
    the blocks by their runs of three characters (None when there is no text)."""
    blocks = array("I", [0])
    while blocks[-1] < len(text):
        end = text.find(b"\n", blocks[-1] + BLOCK_BYTES)
        blocks.append(len(text) if end < 0 else end + 1)
    if not text:
        return blocks, None, None
    index = _block_index()
    writer = index.writer(_WRITER_HEAP, 1)
    for block in range(len(blocks) - 1):
        content = text[blocks[block] : blocks[block + 1]].decode("utf-8", "surrogatepass")
        writer.add_document(tantivy.Document(block=block, grams=content))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return blocks, index.searcher(), index.schema


def mask_of(slots: Iterable[int]) -> int:
    """The bitmask of `slots`: each slot's digit set in a text of binary digits, made one
    integer at the end (an integer made for every slot copies the mask each time); the
    digits are set by `map`, with no step of the interpreter's a slot."""
    listed = slots if isinstance(slots, (list, array)) else list(slots)
    if not listed:
        return 0
    digits = bytearray(b"0") * (max(listed) + 1)
    deque(map(digits.__setitem__, listed, repeat(_ONE)), maxlen=0)
    digits.reverse()
    return int(digits, 2)


def _slots(mask: int) -> list[int]:
    """The positions of the set bits of a non-negative `mask`, lowest first."""
    bits = bin(mask)[:1:-1]
    found = []
    position = bits.find("1")
    while position >= 0:
        found.append(position)
        position = bits.find("1", position + 1)
    return found


def _bytes_of(mask: int, sizes: Callable[[int], int]) -> int:
    """The bytes of the bodies of the pages of `mask`, counted until past `VERIFIED_BYTES`."""
    total = 0
    for slot in _slots(mask):
        total += sizes(slot)
        if total > VERIFIED_BYTES:
            break
    return total
