"""The search behind `search_docs`: substring scoring over every page, helped by a word index.

Scoring is the contract's: the query is lowercased and split on whitespace; for each token
a page gains 4 when its title contains it and 1 more when its title, body or URL contains
it. Pages scoring zero drop out; the rest sort high to low, equal scores by URL (code
point order), and are cut to the limit. "Contains" is plain substring containment of the
lowercased token in the lowercased text.

Checking every body for every token would scan the whole tree per token (about 15 ms for
20 MB). A word index narrows that down without changing the meaning: any occurrence of a
token lies in the page's text, so each run of word characters in the token lies inside one
word of that page. The pages holding a word that contains every such run are the only
candidates, and each candidate is then checked for the token itself. A token that is one
run of word characters needs no check; one holding anything else can need a pass over
every page's text, which is why `search_docs` bounds how many different tokens a query has.

An index is a snapshot: nothing changes it once built. `changed` builds the next one,
sharing the pages it keeps, so any number of searches run at once on the snapshot they
were handed, with no lock, while a change is being indexed.

Pages are kept as UTF-8 bytes, the original (compressed) and a lowercased copy: a page
holding one non-ASCII character would take 2 or 4 bytes per character as a `str`.
Substring tests on UTF-8 bytes agree with those on code points.
"""

from __future__ import annotations

import heapq
import re
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

SNIPPET_LENGTH = 240
TITLE_WEIGHT = 4
MATCH_WEIGHT = 1
_MAX_SCORE = 1 << 30
_SNIPPET_LEAD = 60

_WORD = re.compile(r"\w+")
_FRONTMATTER_FIELD = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
# A YAML block scalar's header: `>` (folded) or `|` (literal), its indicators, a comment.
_BLOCK_SCALAR = re.compile(r"[>|][1-9+-]{0,2}(?:\s+#.*)?")


@dataclass(frozen=True)
class Hit:
    """One result: a page's title, its URL and a snippet of at most 240 code points."""

    title: str
    url: str
    snippet: str
    score: int


class _Page:
    __slots__ = ("body", "fallback", "folded_body", "folded_title", "folded_url", "title", "url")

    def __init__(self, url: str, text: str) -> None:
        fields, body = split_frontmatter(text)
        self.url = url
        self.title = fields.get("title") or first_heading(body) or url
        # Snippets come from the prose: the `# ` title line would only repeat the title.
        # Compressed: only the few pages a search returns are ever read back.
        self.body = zlib.compress(_without_title_line(body).encode("utf-8", "surrogatepass"), 1)
        self.folded_body = body.lower().encode("utf-8", "surrogatepass")
        self.folded_title = self.title.lower()
        self.folded_url = url.lower()
        self.fallback = clip(fields.get("description") or first_paragraph(body))


class SearchIndex:
    """The pages of one site by URL, searchable: a snapshot no one changes.

    `changed` makes a new snapshot, sharing every page it did not change; searches run on
    whichever snapshot they were handed, from any number of threads at once, and never
    wait for a change to be indexed.
    """

    def __init__(self) -> None:
        self._pages: dict[int, _Page] = {}
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []  # slots of removed pages, for reuse
        self._next_slot = 0
        self._every = 0  # bitmask of every slot in use
        # word -> bitmask of the slots holding it. A page's own word set is not kept (it
        # would take several times the text): removing a page finds its words again.
        self._words: dict[str, int] = {}
        # Every word on one line, for one `find` per run of word characters instead of a
        # test per word; `_starts` holds where each line starts, `_ordered` its word.
        self._vocabulary = ""
        self._starts: list[int] = []
        self._ordered: list[str] = []
        self._by_rank: list[int] = []  # slots in URL order
        self._url_rank: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._pages)

    def changed(self, updates: Iterable[tuple[str, str | None]]) -> SearchIndex:
        """A new snapshot: each `(url, text)` indexed as the page at `url`, replacing what
        was there, and each `(url, None)` removed. `updates` is read once, one page at a
        time, so a generator reading files never holds more than one page's text."""
        index = SearchIndex()
        index._pages = dict(self._pages)
        index._slot_of = dict(self._slot_of)
        index._free = list(self._free)
        index._next_slot = self._next_slot
        index._every = self._every
        index._words = dict(self._words)
        vocabulary_changed = False
        for url, text in updates:
            vocabulary_changed |= index._remove(url)
            if text is not None:
                vocabulary_changed |= index._put(url, text)
        if vocabulary_changed:
            index._index_vocabulary()
        else:
            index._vocabulary, index._starts, index._ordered = (
                self._vocabulary,
                self._starts,
                self._ordered,
            )
        index._by_rank = sorted(index._pages, key=lambda slot: index._pages[slot].url)
        index._url_rank = {slot: rank for rank, slot in enumerate(index._by_rank)}
        return index

    def _put(self, url: str, text: str) -> bool:
        """Index `text` at `url` (not indexed); whether a word new to the site came with it."""
        if self._free:
            slot = self._free.pop()
        else:
            slot = self._next_slot
            self._next_slot += 1
        page = _Page(url, text)
        bit = 1 << slot
        new_word = False
        for word in _words_in(page):
            held = self._words.get(word)
            if held is None:
                new_word = True
                self._words[word] = bit
            else:
                self._words[word] = held | bit
        self._pages[slot] = page
        self._every |= bit
        self._slot_of[url] = slot
        return new_word

    def _remove(self, url: str) -> bool:
        """Remove the page at `url`, if any; whether a word left the site with it."""
        slot = self._slot_of.pop(url, None)
        if slot is None:
            return False
        bit = 1 << slot
        gone_word = False
        for word in _words_in(self._pages[slot]):
            left = self._words[word] & ~bit
            if left:
                self._words[word] = left
            else:
                del self._words[word]
                gone_word = True
        del self._pages[slot]
        self._every &= ~bit
        self._free.append(slot)
        return gone_word

    def _index_vocabulary(self) -> None:
        self._ordered = list(self._words)
        self._vocabulary = "\n".join(self._ordered)
        self._starts = []
        position = 0
        for word in self._ordered:
            self._starts.append(position)
            position += len(word) + 1

    def search(self, query: str, limit: int) -> list[Hit]:
        """The best `limit` pages for `query`, best first.

        The work is linear in the site's text for each distinct token that is not one run of
        word characters (each is checked in every page the word index leaves), so callers
        bound the number of distinct tokens.
        """
        tokens = query.lower().split()
        scores: dict[int, int] = {}
        for token in dict.fromkeys(tokens):  # a repeated token scores again, found once
            weight = tokens.count(token)
            in_title, in_url = self._label_hits(token)
            in_body = self._candidates(token) & self._every
            if _WORD.fullmatch(token) is None:
                # Beyond one run of word characters the candidates are a superset: check.
                folded = token.encode("utf-8", "surrogatepass")
                checked = 0
                for slot in _slots(in_body & ~(in_title | in_url)):
                    if folded in self._pages[slot].folded_body:
                        checked |= 1 << slot
                in_body = checked
            found = in_url | in_body
            for slot in _slots(in_title):
                scores[slot] = scores.get(slot, 0) + (TITLE_WEIGHT + MATCH_WEIGHT) * weight
            for slot in _slots(found & ~in_title):
                scores[slot] = scores.get(slot, 0) + MATCH_WEIGHT * weight
        rank = self._url_rank
        # One integer per page orders by score, then URL: the top few come out of a heap.
        keys = [(_MAX_SCORE - score) << 32 | rank[slot] for slot, score in scores.items()]
        hits = []
        for key in heapq.nsmallest(limit, keys):
            page = self._pages[self._by_rank[key & 0xFFFFFFFF]]
            hits.append(Hit(page.title, page.url, _snippet(page, tokens), _MAX_SCORE - (key >> 32)))
        return hits

    def _label_hits(self, token: str) -> tuple[int, int]:
        """Bitmasks of the pages whose title contains `token`, and of the others whose URL
        does (a title hit already scores the +1 a URL hit would)."""
        in_title = in_url = 0
        for slot, page in self._pages.items():
            if token in page.folded_title:
                in_title |= 1 << slot
            elif token in page.folded_url:
                in_url |= 1 << slot
        return in_title, in_url

    def _candidates(self, token: str) -> int:
        """A bitmask of the pages whose body may contain `token` (a superset)."""
        mask = -1  # every page
        for run in _WORD.findall(token):
            mask &= self._pages_with_run(run)
        return mask

    def _pages_with_run(self, run: str) -> int:
        mask = 0
        found = self._vocabulary.find(run)
        while found >= 0:
            index = bisect_right(self._starts, found) - 1
            mask |= self._words[self._ordered[index]]
            following = index + 1
            if following == len(self._starts) or mask == self._every:
                break
            found = self._vocabulary.find(run, self._starts[following])
        return mask


def _snippet(page: _Page, tokens: list[str]) -> str:
    """Around the first body occurrence of a token, else the description or first paragraph."""
    if not tokens:
        return page.fallback
    body = zlib.decompress(page.body).decode("utf-8", "surrogatepass")
    folded = body.lower()
    first = min(
        (found for found in (folded.find(token) for token in tokens) if found >= 0),
        default=-1,
    )
    if first < 0:
        return page.fallback
    if len(folded) != len(body):
        first = _unfolded_position(body, first)
    return around(body, first)


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


def _slots(mask: int) -> Iterator[int]:
    """The positions of the set bits of a non-negative `mask`, lowest first."""
    bits = bin(mask)[:1:-1]
    found = bits.find("1")
    while found >= 0:
        yield found
        found = bits.find("1", found + 1)


def _words_in(page: _Page) -> set[str]:
    return set(_WORD.findall(page.folded_body.decode("utf-8", "surrogatepass")))


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """A page's YAML frontmatter as flat `key: value` strings, and the text after it.

    A top-level value on its own line, quoted or not, or a block scalar (`key: >` or
    `key: |` and the indented lines below it, joined on one line); nothing else of YAML.
    """
    if not text.startswith("---"):
        return {}, text
    first_break = text.find("\n")
    if first_break < 0 or text[3:first_break].strip():
        return {}, text
    end = text.find("\n---", first_break)
    while end >= 0:
        line_end = text.find("\n", end + 1)
        closing = text[end + 4 : len(text) if line_end < 0 else line_end]
        if not closing.strip():
            break
        end = text.find("\n---", end + 1)
    if end < 0:
        return {}, text
    fields: dict[str, str] = {}
    lines = text[first_break + 1 : end].splitlines()
    index = 0
    while index < len(lines):
        matched = _FRONTMATTER_FIELD.match(lines[index])
        index += 1
        if not matched:
            continue
        value = matched.group(2)
        if _BLOCK_SCALAR.fullmatch(value):
            # `title: >` or `|`: the value is the indented lines below, on one line here.
            block = []
            while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
                block.append(lines[index].strip())
                index += 1
            value = " ".join(part for part in block if part)
        else:
            value = _unquoted(value)
        fields.setdefault(matched.group(1), value)
    line_end = text.find("\n", end + 1)
    return fields, "" if line_end < 0 else text[line_end + 1 :]


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _title_line(body: str) -> tuple[int, int] | None:
    """Where the first `# ` heading line outside code fences starts and ends."""
    fenced = False
    start = 0
    for line in body.splitlines(keepends=True):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            return start, start + len(line)
        start += len(line)
    return None


def first_heading(body: str) -> str:
    """The text of the first `# ` heading outside code fences, or ''."""
    span = _title_line(body)
    return "" if span is None else body[span[0] + 2 : span[1]].strip().rstrip("#").strip()


def _without_title_line(body: str) -> str:
    span = _title_line(body)
    return body if span is None else body[: span[0]] + body[span[1] :]


def first_paragraph(body: str) -> str:
    """The first paragraph of prose: not a heading, a fence, a table, an import or markup."""
    for block in re.split(r"\n\s*\n", body):
        stripped = block.strip()
        if stripped and not stripped.startswith(("#", "```", "~~~", "|", "<", "import ", "---")):
            return stripped
    return ""


def clip(text: str, length: int = SNIPPET_LENGTH) -> str:
    """`text` on one line (whitespace runs collapsed), cut at a word to `length` code points."""
    flat = " ".join(text.split())
    if len(flat) <= length:
        return flat
    cut = flat[: length - 1]
    space = cut.rfind(" ")
    if space > length // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def around(body: str, position: int, length: int = SNIPPET_LENGTH) -> str:
    """At most `length` code points of `body` on one line, starting a little before `position`."""
    start = max(0, position - _SNIPPET_LEAD)
    if start:
        space = body.find(" ", start, position)
        start = space + 1 if space >= 0 else start
    window = body[start : position + 4 * length]
    if not start:
        return clip(window, length)
    return "…" + clip(window, length - 1)
