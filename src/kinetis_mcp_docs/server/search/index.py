"""The search behind `search_docs`: the pages of one site, ranked one of two ways.

- `owndocs` (the default): the contract's scoring (see `search.contract`), exactly; pages
  scoring zero drop out, the rest sort high to low, equal scores by the relevance score
  (best first), then by URL (code point order), and are cut to the limit. The snippet is
  today's: from a little before the first body occurrence of a query token.
- `relevance`: BM25 over the pages' sections (see `search.relevance`); each result also
  carries `line`, the page line its snippet (the best-matching passage) starts on.

Both keep the relevance index, since owndocs orders its ties by it; only owndocs keeps what
the contract's scoring reads.

An index is a snapshot: nothing changes it once built. `changed` builds the next one,
sharing the pages it keeps, so any number of searches run at once on the snapshot they
were handed, with no lock, while a change is being indexed.

A page's text is kept as its UTF-8, and that lowercased, in relevance mode, which reads
five pages again for each search (their best sections and passages: decompressing them was
a third of a search's time, lowercasing them a tenth), and compressed in owndocs mode,
which reads back only the pages it returns and keeps the contract's lowercased copy of
every body besides. Compressed with Zstandard at level 1: measured over 1,000 pages of
20 KB it keeps them smaller than zlib at level 1 (0.42 against 0.45 of the text),
compresses three times as fast (a tenth of the owndocs build was zlib) and decompresses a
page in a third of the time (about 24 against 78 us); LZ4 decompresses faster still but
keeps 0.64 of the text, more than the memory bound leaves room for.
"""

from __future__ import annotations

import heapq
import threading
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import AnyStr

import zstandard

from .bounds import bounded
from .contract import ContractScores
from .page_text import (
    SNIPPET_LEAD,
    SNIPPET_LENGTH,
    Section,
    around,
    around_known,
    around_reads,
    clip,
    first_heading,
    first_paragraph,
    sections,
    split_frontmatter,
    title_line,
)
from .passages import PageShape, fences_of, read_page
from .relevance import PageText, Query, RelevanceIndex, Snapshot

__all__ = ["RANKINGS", "SNIPPET_LENGTH", "Hit", "Hits", "SearchIndex", "split_frontmatter"]

OWNDOCS = "owndocs"
RELEVANCE = "relevance"
RANKINGS = (OWNDOCS, RELEVANCE)
# An owndocs snippet lowercases the body this many characters or bytes (then to a line's
# end) at a time.
_FOLDED_BLOCK = 4096
# The only characters whose lowercase holds an ASCII character ('İ' becomes 'i' and a dot
# above, the Kelvin sign 'k'): elsewhere an ASCII token is found in a lowercased text exactly
# where it is in the text with only its ASCII letters lowercased.
_TO_ASCII = ("\u0130", "\u212a")
# How far into its body a compressed page's opening reaches (then to a line's end).
_OPENING = 4096
# From this size on (in UTF-8), a page shown in relevance mode keeps where its fences are
# (`passages.fences_of`): looking for them reads every line of the page, 0.7 ms for the
# largest page of cpp-docs (557 KB), a tenth of a 60-word query whose five pages include
# it; read at indexing for the pages past 32 KB (12 of cpp-docs' 43 MB), and kept as 4
# bytes a fence.
_KEPT_FENCES = 32 * 1024
# Zstandard's level for the pages owndocs keeps compressed: its fastest but for the
# negative levels, which keep pages larger.
_LEVEL = 1


@dataclass(frozen=True)
class Hit:
    """One result: a page's title, its URL and a snippet of at most 240 code points; in
    relevance mode also the page line the snippet starts on."""

    title: str
    url: str
    snippet: str
    score: float
    line: int | None = None


class Hits(list[Hit]):
    """A search's results, best first; and, when the query was past the bound, how many of
    its words it was ranked on (`terms_used`, None otherwise)."""

    def __init__(self, hits: Iterable[Hit] = (), terms_used: int | None = None) -> None:
        super().__init__(hits)
        self.terms_used = terms_used


class _Page:
    __slots__ = (
        "ascii_folds",
        "body_bytes",
        "body_from",
        "compressed",
        "fallback",
        "folded_title",
        "folded_url",
        "opening",
        "shape",
        "text",
        "title",
        "title_span",
        "url",
    )

    def __init__(
        self,
        url: str,
        text: str,
        fields: dict[str, str],
        body: str,
        found: list[Section],
        *,
        compressed: bool,
    ) -> None:
        self.url = url
        # Where the body starts in the text, and its title line in the body: the title
        # when the frontmatter names none, and the line the snippet leaves out.
        self.body_from = len(text) - len(body)
        self.title_span = title_line(body)
        self.title = fields.get("title") or first_heading(body, self.title_span) or url
        data = text.encode("utf-8", "surrogatepass")
        self.compressed = compressed
        # Where in the UTF-8 the body starts and its title line starts and ends (the text's
        # end when it has none: `data` is already the whole text's UTF-8).
        span = self.title_span
        if span is None:
            (start,) = _utf8_offsets(text, [self.body_from])
            self.body_bytes = (start, len(data), len(data))
        else:
            start, title_start, title_end = _utf8_offsets(
                text, [self.body_from, self.body_from + span[0], self.body_from + span[1]]
            )
            self.body_bytes = (start, title_start, title_end)
        # Compressed, the page is two frames: its opening, up to the first line break
        # `_OPENING` bytes into the body, then the rest (none for a short page). Most owndocs
        # snippets are settled by the opening, which decompresses in a third of the time.
        self.opening = b""
        self.text = data
        if compressed:
            cut = data.find(b"\n", self.body_bytes[0] + _OPENING)
            cut = len(data) if cut < 0 else cut + 1
            self.opening = _compressed(data[:cut])
            self.text = _compressed(data[cut:]) if cut < len(data) else b""
        # An owndocs snippet looks for ASCII tokens in the UTF-8 (see `_ascii_snippet`),
        # unless the page holds one of the two characters that lowercase to ASCII.
        self.ascii_folds = compressed and not any(char in text for char in _TO_ASCII)
        self.folded_title = self.title.lower()
        self.folded_url = url.lower()
        # An owndocs snippet's text when the page holds no token of the query (relevance's
        # snippets are read from the page's lines).
        self.fallback = (
            clip(fields.get("description") or first_paragraph(body)) if compressed else ""
        )
        # Where its sections start (where the body does, when it has none), in its UTF-8.
        start = len(text) - len(body)
        self.shape = PageShape(
            tuple(section.line for section in found) or (1 + text.count("\n", 0, start),),
            _utf8_offsets(text, [section.offset for section in found] or [start]),
            text.count("\n") + 1,
            tuple(section.level for section in found) or (0,),
        )
        if not compressed and len(data) >= _KEPT_FENCES:
            self.shape = replace(self.shape, fences=array("I", fences_of(data, self.shape)))

    def full_text(self) -> str:
        return self.utf8().decode("utf-8", "surrogatepass")

    def utf8(self) -> bytes:
        if not self.compressed:
            return self.text
        return self.opening_utf8() + self.rest_utf8()

    def opening_utf8(self) -> bytes:
        """The UTF-8 of a compressed page's opening lines (all of it when `rest_utf8()` is
        empty)."""
        return _decompressor().decompress(self.opening)

    def rest_utf8(self) -> bytes:
        """The UTF-8 that follows `opening_utf8()` in a compressed page."""
        return _decompressor().decompress(self.text) if self.text else b""


# A Zstandard context is used by one thread at a time: each thread that indexes or searches
# keeps one of each, made once (making one costs about half a page's decompression). A
# decompression context holds about 0.1 MB: 3 MB for the HTTP route's 32 call threads.
_contexts = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    try:
        found: zstandard.ZstdCompressor = _contexts.compressor
    except AttributeError:
        found = _contexts.compressor = zstandard.ZstdCompressor(level=_LEVEL)
    return found


def _compressed(data: bytes) -> bytes:
    """`data` compressed, in a bytes object of its own size.

    Zstandard writes into room for the worst case (the input's size and more), then
    shrinks the object in place: the freed tail of every page stayed between the pages kept,
    and the process took 0.35 more of the text's size in memory than with a copy.
    """
    return bytes(memoryview(_compressor().compress(data)))


def _decompressor() -> zstandard.ZstdDecompressor:
    try:
        found: zstandard.ZstdDecompressor = _contexts.decompressor
    except AttributeError:
        found = _contexts.decompressor = zstandard.ZstdDecompressor()
    return found


def _utf8_offsets(text: str, offsets: list[int]) -> tuple[int, ...]:
    """Where in the UTF-8 of `text` each of its increasing `offsets` lies."""
    if text.isascii():
        return tuple(offsets)
    found, done, size = [], 0, 0
    for offset in offsets:
        size += len(text[done:offset].encode("utf-8", "surrogatepass"))
        done = offset
        found.append(size)
    return tuple(found)


class SearchIndex:
    """The pages of one site by URL, searchable: a snapshot no one changes.

    `changed` makes a new snapshot, sharing every page it did not change; searches run on
    whichever snapshot they were handed, from any number of threads at once, and never
    wait for a change to be indexed.
    """

    def __init__(self, ranking: str = OWNDOCS) -> None:
        if ranking not in RANKINGS:
            raise ValueError(f"unknown ranking {ranking!r}")
        self.ranking = ranking
        self._pages: dict[int, _Page] = {}
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []  # slots of removed pages, for reuse
        self._next_slot = 0
        # Owndocs orders its ties by the pages' own relevance scores, with no sections.
        self._relevance_index = RelevanceIndex(sections=ranking == RELEVANCE)
        self._relevance: Snapshot | None = None
        self._contract: ContractScores | None = ContractScores() if ranking == OWNDOCS else None
        self._url_rank: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._pages)

    def changed(self, updates: Iterable[tuple[str, str | None]]) -> SearchIndex:
        """A new snapshot: each `(url, text)` indexed as the page at `url`, replacing what
        was there, and each `(url, None)` removed. `updates` is read once, one page at a
        time, so a generator reading files never holds more than one page's text."""
        index = SearchIndex.__new__(SearchIndex)
        index.ranking = self.ranking
        index._pages = dict(self._pages)
        index._slot_of = dict(self._slot_of)
        index._free = list(self._free)
        index._next_slot = self._next_slot
        index._relevance_index = self._relevance_index
        index._contract = None if self._contract is None else self._contract.copy()
        try:
            index._relevance = self._relevance_index.changed(index._applied(updates))
        except BaseException:
            if index._contract is not None:
                index._contract.abandon()
            raise
        if index._contract is not None:
            index._contract.settle()
        ordered = sorted(index._pages, key=lambda slot: index._pages[slot].url)
        index._url_rank = {slot: rank for rank, slot in enumerate(ordered)}
        return index

    def _applied(
        self, updates: Iterable[tuple[str, str | None]]
    ) -> Iterator[int | tuple[int, PageText]]:
        """Each update applied to this snapshot, as the relevance index is to apply it: the
        slot of a page removed, and the slot and text of a page indexed."""
        for url, text in updates:
            slot = self._remove(url)
            if slot is not None:
                yield slot
            if text is not None:
                yield self._put(url, text)

    def _put(self, url: str, text: str) -> tuple[int, PageText]:
        if self._free:
            slot = self._free.pop()
        else:
            slot = self._next_slot
            self._next_slot += 1
        fields, body = split_frontmatter(text)
        found = sections(text, body)
        page = _Page(url, text, fields, body, found, compressed=self._contract is not None)
        self._pages[slot] = page
        self._slot_of[url] = slot
        if self._contract is not None:
            self._contract.add(slot, page.folded_title, page.folded_url, body.lower())
        return slot, PageText(
            page.title,
            url,
            fields.get("description", ""),
            tuple((section.heading, section.text) for section in found),
        )

    def _remove(self, url: str) -> int | None:
        slot = self._slot_of.pop(url, None)
        if slot is None:
            return None
        del self._pages[slot]
        if self._contract is not None:
            self._contract.remove(slot)
        self._free.append(slot)
        return slot

    def search(self, query: str, limit: int) -> Hits:
        """The best `limit` pages for `query`, best first: for a query past the bound, for
        its most informative leading words within it (see `search.bounds`)."""
        if self._relevance is None:
            return Hits()
        text, used = bounded(query, self._relevance.informative)
        terms = self._relevance.read(text)
        if self._contract is None:
            return Hits(self._relevance_hits(terms, limit), used)
        return Hits(self._owndocs_hits(text, terms, limit), used)

    def _relevance_hits(self, terms: Query, limit: int) -> list[Hit]:
        """The pages the index ranks best, each with the passage a snippet shows, read from
        its text (see `search.passages`)."""
        relevance = self._relevance
        assert relevance is not None  # noqa: S101 - search() checked it
        words = relevance.passage_words(terms)
        rank = self._url_rank
        best = relevance.best_pages(terms, limit)
        best.sort(key=lambda found: (-found.score, rank[found.slot]))  # equal scores by URL
        hits = []
        for found in best[:limit]:
            page = self._pages[found.slot]
            data = page.utf8()
            passage = read_page(
                data,
                page.shape,
                data.lower(),
                words,
                best_section=found.section,
                title_words=relevance.title_words(page.title),
            )
            hits.append(Hit(page.title, page.url, passage.snippet, found.score, passage.line))
        return hits

    def _owndocs_hits(self, query: str, terms: Query, limit: int) -> list[Hit]:
        assert self._contract is not None  # noqa: S101
        assert self._relevance is not None  # noqa: S101
        # The groups of equal score that the cut reaches, best first: every page of them but
        # the last is shown; the last shows as many as the limit leaves room for.
        room = limit
        chosen: list[int] = []
        scores: dict[int, int] = {}
        ties = self._relevance.ties(terms)
        for level, group in self._contract.ranked(query, limit):
            scores.update(dict.fromkeys(group, level))
            if len(group) == 1:
                chosen.extend(group)
            else:
                found = ties.best(min(room, len(group)), group)
                best = {tied.slot: tied.score for tied in found}
                chosen.extend(_first_in_order(group, best, self._url_rank, room))
            room -= min(room, len(group))
            if not room:
                break
        tokens = query.lower().split()
        return [
            Hit(
                self._pages[slot].title,
                self._pages[slot].url,
                _snippet(self._pages[slot], tokens),
                scores[slot],
            )
            for slot in chosen
        ]


def _first_in_order(
    group: list[int], relevance: dict[int, float], rank: dict[int, int], count: int
) -> list[int]:
    """The first `count` pages of `group` by their `relevance` score, best first (a page
    without one scores 0), then by URL (`rank`)."""
    scored = [slot for slot in group if slot in relevance]
    if any(relevance[slot] <= 0 for slot in scored):  # a score sorting among the unscored
        return sorted(group, key=lambda slot: (-relevance.get(slot, 0.0), rank[slot]))[:count]
    scored.sort(key=lambda slot: (-relevance[slot], rank[slot]))
    if len(scored) >= count:
        return scored[:count]
    # Most of a large tie has no relevance score: only as many as are shown are sorted.
    unscored = (slot for slot in group if slot not in relevance)
    return scored + heapq.nsmallest(count - len(scored), unscored, key=rank.__getitem__)


def _snippet(page: _Page, tokens: list[str]) -> str:
    """Around the first body occurrence of a token, else the description or first paragraph."""
    if not tokens:
        return page.fallback
    if page.ascii_folds and all(token.isascii() for token in tokens):
        return _ascii_snippet(page, tokens)
    body = page.full_text()[page.body_from :]
    span = page.title_span
    if span is not None:
        body = body[: span[0]] + body[span[1] :]
    first = _first_occurrence(body, tokens, "\n")
    return page.fallback if first < 0 else around(body, first)


def _ascii_snippet(page: _Page, tokens: list[str]) -> str:
    """`_snippet` for ASCII tokens, read from the page's UTF-8 with its ASCII lowercased.

    Nothing is lowercased as text (lowercasing a text holding any non-ASCII character was
    two fifths of a snippet), only the snippet's window is decoded, and the page past its
    opening is decompressed only when the opening does not settle the snippet. An ASCII
    token never matches inside a character's UTF-8 (all of its bytes are non-ASCII), and no
    token holds a line break, so none spans the title line left out or the opening's end.
    """
    words = [token.encode() for token in tokens]
    opening = page.opening_utf8()
    body = _ascii_body(opening, page.body_bytes)
    first = _first_occurrence(body, words, b"\n")
    whole = not page.text
    if first >= 0:
        snippet = _ascii_around(body, first, whole=whole)
        if snippet is not None:
            return snippet
    elif whole:
        return page.fallback
    opening_body = len(body)
    body = _ascii_body(opening + page.rest_utf8(), page.body_bytes)
    if first < 0:
        first = _first_occurrence(body, words, b"\n", opening_body)
        if first < 0:
            return page.fallback
    snippet = _ascii_around(body, first, whole=True)
    assert snippet is not None  # noqa: S101 - a whole body settles a snippet
    return snippet


def _ascii_body(data: bytes, body_bytes: tuple[int, int, int]) -> bytes:
    """The body of a page whose UTF-8 starts with `data`, its title line left out."""
    start, title_start, title_end = body_bytes
    return data[start:title_start] + data[title_end:]


def _ascii_around(body: bytes, first: int, *, whole: bool) -> str | None:
    """`around` at the match at `first` in the UTF-8 `body`, decoding only its window; None
    when `body` is not `whole` and what follows it could change the snippet."""
    # `around` reads SNIPPET_LEAD characters before the match and up to `around_reads(0)`
    # after it: a character is 4 bytes at most, and a cut inside one moves by 3 at most.
    lead = max(0, first - 4 * (SNIPPET_LEAD + 1))
    while lead < first and _is_continuation(body[lead]):
        lead += 1
    end = first + 4 * (around_reads(0) + 1)
    whole = whole or end <= len(body)
    end = min(len(body), end)
    while end < len(body) and _is_continuation(body[end]):
        end -= 1
    before = body[lead:first].decode("utf-8", "surrogatepass")
    window = before + body[first:end].decode("utf-8", "surrogatepass")
    if whole:
        return around(window, len(before))
    return around_known(window, len(before))


def _is_continuation(byte: int) -> bool:
    """Whether a byte of UTF-8 continues a character rather than starting one."""
    return 0x80 <= byte < 0xC0


def _first_occurrence(
    body: AnyStr, tokens: list[AnyStr], line_break: AnyStr, start: int = 0
) -> int:
    """Where in `body` the first occurrence of any of `tokens` (lowercased, no whitespace)
    in `body.lower()` begins, at a line's `start` or after, or -1. `body` is text, or UTF-8
    whose ASCII `lower()` lowercases (see `_ascii_snippet`); `line_break` is "\n" in it.

    The body is lowercased a block of lines at a time, up to the first block holding one:
    a token holds no line break, so no occurrence spans two blocks, and lowercasing reads
    no context past a line break (a final sigma's is a word), so each block folds as it
    does inside the whole. Most answers' first occurrence is in the first block.
    """
    while start < len(body):
        end = body.find(line_break, start + _FOLDED_BLOCK)
        end = len(body) if end < 0 else end + 1
        block = body[start:end]
        folded = block.lower()
        first = min(
            (found for found in (folded.find(token) for token in tokens) if found >= 0),
            default=-1,
        )
        if first >= 0:
            if isinstance(block, str) and len(folded) != len(block):
                first = _unfolded_position(block, first)
            return start + first
        start = end
    return -1


def _unfolded_position(text: str, folded_position: int) -> int:
    """Where in `text` the character lies that `text.lower()` has at `folded_position`.

    Lowercasing can lengthen a text (`İ` becomes two code points), and never shortens one:
    so the position is found by counting what each character becomes.
    """
    count = 0
    for position, char in enumerate(text):
        count += len(char.lower())
        if count > folded_position:
            return position
    return len(text)
