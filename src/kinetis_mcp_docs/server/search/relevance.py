"""The relevance ranking's page score: BM25 over every page, in Tantivy.

One document a page: its title, frontmatter `description`, URL path, headings and body,
each field scored by BM25 and weighted (`FIELDS`). A word's weight in a field would be its
idf *in that field*: "add" is rare among titles though every page body says it, so a title
holding "add" would outrank the page a question is about. So every field's clause is
rescaled to the word's idf over the whole page (its largest document frequency in any
field): rare words weigh more, everywhere, and no stop-word list is needed. Identifiers are
read two ways: as the text reads them (Tantivy's simple tokenizer: `use_async_data` is three
words, `useAsyncData` one, so an exact identifier is one rare term), and, in titles and
headings, split into the words they are made of (`use`, `async`, `data`), so that either
spelling finds the page that defines it. Identifiers in a query are read both ways, and a
query's dotted, dashed or underscored identifier is also looked up whole without its
separators (`use_fetch` finds `useFetch`), its pieces then weighing less. Every run of three
neighbouring words of a query is also a phrase (one more word between them allowed, the exact
run earning more) in the text, the title, the description and the headings, so that a pasted
error message finds the page quoting it; and each clause of the query (the words between two
marks of punctuation, three or more) is asked for word for word, so that the page quoting a
whole clause of the message outranks one quoting runs of it here and there.

What one query costs is bounded: its `MAX_TERMS` rarest words, its `MAX_PHRASES` rarest
phrases, its first `MAX_CLAUSES` clauses, and no phrase of words most pages hold. The best
section of each page the ranking keeps is scored apart (see `passages`), on the text the
snippet is taken from.

An index is shared by the snapshots built on it: `changed` commits a change and opens a new
searcher, and a searcher keeps seeing the segments it was opened on, so a search on an
older snapshot is unchanged by a later commit.
"""

from __future__ import annotations

import math
import re
import threading
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from .passages import Word, word_pattern

# Field -> (analyzer, weight). "words": lowercased and stemmed (English); "parts":
# identifiers split into their words, stemmed too.
FIELDS = {
    "title": ("words", 3.0),
    "title_parts": ("parts", 1.0),
    "description": ("words", 2.0),
    "url": ("words", 0.5),
    "headings": ("words", 2.0),
    "heading_parts": ("parts", 0.7),
    "body": ("words", 1.0),
}
PHRASE_FIELDS = ("title", "description", "headings", "body")
PHRASE_WEIGHT = 0.7
# A word of `use_fetch`: the query means the identifier, which is also looked up whole.
PIECE_WEIGHT = 0.5
PHRASE_WORDS = 3
# One word more between them is still the phrase: a message quoted with "the" or "a" added.
PHRASE_SLOP = 1
# Tantivy scores a phrase found with a word between as it scores the phrase itself, so the
# exact quote earns this much more: of two pages quoting an error message, the one quoting
# it word for word comes first (the development tree's queries chose it among 0.1 to 0.7).
EXACT_PHRASE_WEIGHT = 0.25
# A clause: the words between two of these marks (or line ends). A pasted message's
# variable parts (a name, a path, a URL) are most often quoted or bracketed, and its
# sentences end in a mark; its fixed wording, which a page quotes, is between them.
_CLAUSE_BREAK = re.compile(r"""[.:;!?()\[\]{}<>"'`\n]""")
# A clause quoted word for word weighs this much in each field. The development tree's
# queries ranked alike from 0.5 to 2.
CLAUSE_WEIGHT = 1.0
MAX_CLAUSES = 4
MAX_CLAUSE_WORDS = 16
MAX_TERMS = 32
# A phrase all of whose words are on more than this share of the pages, and on more than
# `COMMON_PAGES`, is not asked for.
COMMON_SHARE = 0.5
COMMON_PAGES = 100
MAX_PASSAGE_WORDS = 12
MAX_PHRASES = 16
# How many pages a query reads from the index: enough for any limit (20) twice over.
PAGE_HITS = 40
_LONGEST_TERM = 64
# A run of letters with at most one capital first (`Async`), a run of capitals (`URL`), or
# digits; a digit run stays with the letters before it (`e2004`).
_PARTS = r"\p{Lu}?[\p{Ll}\p{Lo}]+[0-9]*|\p{Lu}+[0-9]*|[0-9]+"
# A run of letters and digits: a chunk of a query holding more than one is an identifier
# written with separators.
_RUNS = re.compile(r"[^\W_]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_WRITER_HEAP = 50_000_000  # the writer is dropped after each commit
# One indexing thread: with two, which pages share a segment was up to the threads, and a
# page's score then moved in the last bit of its 32 from one build of a tree to the next
# (under Tantivy 0.26, Python 3.10's, in most builds; under 0.27 rarely). One thread makes
# the relevance build of 1,000 pages take half as long again, within its bound.
_WRITER_THREADS = 1
# Terms whose document counts a searcher remembers (a term's are seven integers).
_REMEMBERED_TERMS = 65_536
# How many of the whole index's best pages a `Ties` reads, per page asked for (PAGE_HITS
# at least), before it asks for a search filtered to the pages of a tie instead.
_TIES_READ = 4


def _analyzers() -> dict[str, tantivy.TextAnalyzer]:
    def built(tokenizer: tantivy.Tokenizer) -> tantivy.TextAnalyzer:
        return (
            tantivy.TextAnalyzerBuilder(tokenizer)
            .filter(tantivy.Filter.remove_long(_LONGEST_TERM))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )

    return {
        "words": built(tantivy.Tokenizer.simple()),
        "parts": built(tantivy.Tokenizer.regex(_PARTS)),
    }


def _index(fields: dict[str, tuple[str, float]]) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("page", stored=True, indexed=True)
    for name, (analyzer, _) in fields.items():
        # Identifier parts are never a phrase: their positions are not kept.
        option = "freq" if analyzer == "parts" else "position"
        builder.add_text_field(name, tokenizer_name=analyzer, index_option=option)
    index = tantivy.Index(builder.build())
    for name, built in _analyzers().items():
        index.register_tokenizer(name, built)
    return index


@dataclass(frozen=True)
class PageText:
    """What one page is indexed with."""

    title: str
    url: str
    description: str
    headings: str
    body: str


class RelevanceIndex:
    """The Tantivy index of one site's pages; `Snapshot`s search it."""

    def __init__(self) -> None:
        self._pages = _index(FIELDS)
        self._analyzers = _analyzers()
        self._lock = threading.Lock()  # one commit at a time

    def changed(self, changes: Iterable[int | tuple[int, PageText]]) -> Snapshot:
        """Apply `changes` in order, each the slot of a page to remove or a `(slot, page)` to
        index, and open a searcher on the result.

        `changes` is read while the writer is open, so the caller's own indexing of each
        page (the contract's, in owndocs mode) runs while Tantivy's indexing thread takes
        the pages already handed over. A slot removed, then used again, is removed before
        its new page is added: a removal takes every page of its slot added before it.
        Nothing is committed if reading `changes` fails.
        """
        with self._lock:
            writer = self._pages.writer(_WRITER_HEAP, _WRITER_THREADS)
            try:
                for change in changes:
                    if isinstance(change, int):
                        writer.delete_documents_by_term("page", change)
                    else:
                        writer.add_document(_document(*change))
            except BaseException:
                writer.rollback()
                raise
            writer.commit()
            writer.wait_merging_threads()
            self._pages.reload()
            return Snapshot(self, self._pages.searcher())

    def analyze(self, analyzer: str, text: str) -> list[str]:
        """The terms `text` holds, in order, as the fields of `analyzer` read it."""
        return list(self._analyzers[analyzer].analyze(text))

    @property
    def schema(self) -> tantivy.Schema:
        return self._pages.schema


def _document(slot: int, page: PageText) -> tantivy.Document:
    path = page.url.replace("/", " ")
    return tantivy.Document(
        page=slot,
        title=page.title,
        title_parts=f"{page.title} {path}",
        description=page.description,
        url=path,
        headings=page.headings,
        heading_parts=page.headings,
        body=page.body,
    )


@dataclass(frozen=True)
class Query:
    """A query as both indexes read it: its terms and phrases, by analyzer."""

    terms: dict[str, list[str]]  # analyzer -> terms, rarest first
    phrases: dict[str, list[list[str]]]  # analyzer -> phrases
    # Terms that only stand for a piece of an identifier the query wrote whole, weighed less.
    pieces: frozenset[str] = frozenset()
    # The query's words as it spells them, lowercased: a snippet looks for them too.
    spelled: tuple[str, ...] = ()
    # Its clauses (analyzer "words"), each asked for word for word.
    clauses: tuple[tuple[str, ...], ...] = ()

    def __bool__(self) -> bool:
        return any(self.terms.values())


def _idf(documents: int, frequency: int) -> float:
    """BM25's idf, as Tantivy computes it."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def _slots_by_address(searcher: tantivy.Searcher) -> list[array[int]]:
    """The page slot of every live document of `searcher`, by segment, then document.

    A hit is a document's address: reading its stored slot back (`doc`) cost 1.2 us a hit,
    40 hits a search; looking it up here costs a tenth of that. Made once per searcher,
    which never changes: about 1.5 ms at 1,000 pages.
    """
    found: dict[tuple[int, int], int] = {}
    everything = int(searcher.num_docs)
    if everything:
        for _, address in searcher.search(tantivy.Query.all_query(), everything).hits:
            slot = searcher.doc(address).get_first("page")
            found[address.segment_ord, address.doc] = int(slot)  # type: ignore[arg-type]
    segments = max((segment for segment, _ in found), default=-1) + 1
    slots = [array("i") for _ in range(segments)]
    for (segment, document), slot in sorted(found.items()):
        listed = slots[segment]
        listed.extend([-1] * (document - len(listed)))  # deleted documents
        listed.append(slot)
    return slots


class _Side:
    """One index's searcher and fields, and how a query is asked of it."""

    def __init__(
        self,
        searcher: tantivy.Searcher,
        schema: tantivy.Schema,
        fields: dict[str, tuple[str, float]],
    ) -> None:
        self.searcher = searcher
        self.schema = schema
        self.fields = fields
        self.documents = max(1, int(searcher.num_docs))
        self._slots = _slots_by_address(searcher)
        # A searcher never changes: what it says of a term holds for its life. Asked seven
        # times a term (a field each) and for each term several times a query, it was a
        # tenth of a search.
        self._counts: dict[str, tuple[int, ...]] = {}

    def counts(self, term: str) -> tuple[int, ...]:
        """How many documents hold `term`, in each field (in `fields`' order)."""
        known = self._counts.get(term)
        if known is None:
            known = tuple(int(self.searcher.doc_freq(field, term)) for field in self.fields)
            if len(self._counts) >= _REMEMBERED_TERMS:
                self._counts.clear()
            self._counts[term] = known
        return known

    def frequency(self, term: str) -> int:
        """The largest number of documents any field holds `term` in."""
        return max(self.counts(term))

    def idf(self, term: str) -> float:
        return _idf(self.documents, self.frequency(term))

    def query(self, query: Query, among: list[int] | None) -> tantivy.Query | None:
        clauses = []
        idf: dict[str, float] = {}
        for position, (field, (analyzer, weight)) in enumerate(self.fields.items()):
            for term in query.terms.get(analyzer, ()):
                found = self.counts(term)[position]
                if not found:
                    continue
                if term not in idf:
                    idf[term] = self.idf(term)
                # Rescaled from the field's own idf to the word's idf over the whole page.
                boost = weight * idf[term] / _idf(self.documents, found)
                if term in query.pieces:
                    boost *= PIECE_WEIGHT
                clause = tantivy.Query.term_query(self.schema, field, term)
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(clause, boost)))
        for field in PHRASE_FIELDS:
            analyzer = self.fields[field][0]
            for phrase in query.phrases.get(analyzer, ()):
                words: list[str | tuple[int, str]] = list(phrase)
                clause = tantivy.Query.phrase_query(self.schema, field, words, PHRASE_SLOP)
                clauses.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(clause, PHRASE_WEIGHT))
                )
                exact = tantivy.Query.phrase_query(self.schema, field, words, 0)
                clauses.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(exact, EXACT_PHRASE_WEIGHT))
                )
            for quoted in query.clauses:
                whole = tantivy.Query.phrase_query(self.schema, field, list(quoted), 0)
                clauses.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(whole, CLAUSE_WEIGHT))
                )
        if not clauses:
            return None
        asked = tantivy.Query.boolean_query(clauses)
        if among is None:
            return asked
        chosen = tantivy.Query.term_set_query(self.schema, "page", among)
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, asked),
                (tantivy.Occur.Must, tantivy.Query.const_score_query(chosen, 0.0)),
            ]
        )

    def best(self, query: tantivy.Query, count: int) -> dict[int, float]:
        """The best `count` pages, by slot, with their scores."""
        found: dict[int, float] = {}
        slots = self._slots
        for score, address in self.searcher.search(query, count, count=False).hits:
            found[slots[address.segment_ord][address.doc]] = float(score)
        return found


class Snapshot:
    """The index as one commit left it."""

    def __init__(self, index: RelevanceIndex, searcher: tantivy.Searcher) -> None:
        self._index = index
        self._pages = _Side(searcher, index.schema, FIELDS)

    def read(self, text: str) -> Query:
        """`text` read as the indexes read it, keeping what costs the least to answer.

        A lone surrogate (JSON's `"\\udfff"` is valid JSON, not Unicode) is read as U+FFFD,
        as a UTF-8 decoder reads a broken sequence: Tantivy takes only Unicode. Neither
        letter nor digit, it separates words as punctuation does.
        """
        if not text.isascii():
            text = _SURROGATE.sub("\ufffd", text)
        terms: dict[str, list[str]] = {}
        phrases: dict[str, list[list[str]]] = {}
        # Identifiers written with separators (`use_fetch`, `import.meta.client`): each is
        # also looked up whole; where the index holds it whole, its pieces weigh less.
        chunks = text.split()
        compounds = [runs for runs in map(_RUNS.findall, chunks) if len(runs) > 1]
        whole = [
            term
            for runs in compounds
            for term in self._index.analyze("words", "".join(runs))
            if self._pages.frequency(term)
        ]
        alone = {
            term
            for chunk in chunks
            if len(_RUNS.findall(chunk)) <= 1
            for term in self._index.analyze("words", chunk)
        }
        pieces = {
            term
            for runs in compounds
            if any(
                self._pages.frequency(term) for term in self._index.analyze("words", "".join(runs))
            )
            for term in self._index.analyze("words", " ".join(runs))
            if term not in alone
        }
        for analyzer in ("words", "parts"):
            words = self._index.analyze(analyzer, text)
            extra = whole if analyzer == "words" else []
            distinct = list(dict.fromkeys(words + extra))
            rarity = {term: self._pages.frequency(term) for term in distinct}
            terms[analyzer] = sorted(distinct, key=rarity.__getitem__)[:MAX_TERMS]
            if analyzer == "parts" or len(words) < PHRASE_WORDS:
                continue
            runs = dict.fromkeys(
                tuple(words[start : start + PHRASE_WORDS])
                for start in range(len(words) - PHRASE_WORDS + 1)
            )
            kept = [
                list(run)
                for run in runs
                if len(set(run)) == PHRASE_WORDS and self._telling(run, rarity)
            ]
            kept.sort(key=lambda run: sum(rarity.get(term, 0) for term in run))
            phrases[analyzer] = kept[:MAX_PHRASES]
        spelled = tuple(dict.fromkeys(word.lower() for word in _RUNS.findall(text)))
        return Query(terms, phrases, frozenset(pieces), spelled[:MAX_TERMS], self._clauses(text))

    def _clauses(self, text: str) -> tuple[tuple[str, ...], ...]:
        """The query's first `MAX_CLAUSES` clauses that a page may quote: of three different
        words or more, each held by some page (a clause with a word no page holds is quoted
        by none), not all common (`_telling`), each cut to its first `MAX_CLAUSE_WORDS`
        words."""
        kept: dict[tuple[str, ...], None] = {}
        for part in _CLAUSE_BREAK.split(text):
            words = tuple(self._index.analyze("words", part)[:MAX_CLAUSE_WORDS])
            if len(set(words)) < PHRASE_WORDS:
                continue
            rarity = {word: self._pages.frequency(word) for word in words}
            if not all(rarity.values()) or not self._telling(words, rarity):
                continue
            kept[words] = None
            if len(kept) == MAX_CLAUSES:
                break
        return tuple(kept)

    def _telling(self, words: Iterable[str], rarity: dict[str, int]) -> bool:
        """Whether a phrase of `words` is asked for: not if each of them is on more than
        `COMMON_SHARE` of the pages and on more than `COMMON_PAGES`. Such a phrase's pages
        are half the tree or more, and a phrase is checked, position by position, on every
        page holding all of its words (no bound on its score lets Tantivy skip one): over
        1,000 pages of 20 KB, a query of such phrases cost 30 ms, and in owndocs mode,
        whose ties ask for the pages of each tie apart, 170 to 190 ms. On the judged trees
        no ranking changed without them. Over a hundred pages or fewer any phrase costs
        little."""
        most = max(COMMON_SHARE * self._pages.documents, COMMON_PAGES)
        return min(rarity[word] for word in words) <= most

    def passage_words(self, query: Query) -> dict[str, Word]:
        """The query's words (stemmed) as a snippet looks for them: each weighing its idf over
        the pages, found where a word of the text begins with it or with a query word whose
        stem it is."""
        rarest = query.terms.get("words", ())[:MAX_PASSAGE_WORDS]
        spellings: dict[str, set[str]] = {term: {term} for term in rarest}
        for spelled in query.spelled:
            for term in self._index.analyze("words", spelled):
                if term in spellings:
                    spellings[term].add(spelled)
        return {
            term: Word(
                self._pages.idf(term) * (PIECE_WEIGHT if term in query.pieces else 1.0),
                word_pattern(sorted(spelled)),
            )
            for term, spelled in spellings.items()
        }

    def title_words(self, title: str) -> frozenset[str]:
        """The words of a title, as `passage_words` names them."""
        return frozenset(self._index.analyze("words", title))

    def best_pages(
        self, query: Query, limit: int, among: list[int] | None = None
    ) -> list[tuple[int, float]]:
        """The best `limit` pages, best first, with their scores, and every other page
        scoring what the last of them does. With `among`, only those pages.

        Tantivy cuts pages of equal score in the order of its segments, which indexing on
        several threads leaves to chance: the pages tied at the cut are all returned, for
        the caller to order them as it orders ties (by URL), so that one query over one tree
        always answers the same. Asking again, twice as many each time, costs as many more
        pages as tie there, which pages that differ never do.
        """
        asked = self._pages.query(query, among)
        if asked is None or limit < 1:
            return []
        most = len(among) if among is not None else self._pages.searcher.num_docs
        # One page more than asked for tells whether a page ties with the last at the cut.
        count = limit + 1
        while True:
            ranked = sorted(self._pages.best(asked, count).items(), key=lambda item: -item[1])
            if len(ranked) < count or count >= most or ranked[-1][1] < ranked[limit - 1][1]:
                if len(ranked) <= limit:
                    return ranked
                cut = ranked[limit - 1][1]
                return [item for item in ranked if item[1] >= cut]
            count = min(most, count * 2)

    def ties(self, query: Query) -> Ties:
        """Orders the pages of `query`'s ties (see `Ties`)."""
        return Ties(self, self._pages, query)


class Ties:
    """The best pages of given sets of pages for one query, for one search.

    What `Snapshot.best_pages(query, limit, among=pages)` answers, most often without the
    search filtered to `pages` it asks: that one costs Tantivy several times what the same
    query over every page does, and the pages of a tie (equal contract scores) are most
    often among the query's best anyway. The whole index's best pages are read once per
    search; every page of a set scoring more than the last page read is among them, so
    when `limit` of the set do, or the index had no more pages to give, that is the answer.
    """

    def __init__(self, snapshot: Snapshot, side: _Side, query: Query) -> None:
        self._snapshot = snapshot
        self._side = side
        self._query = query
        self._asked: tantivy.Query | None = None
        self._ranked: list[tuple[int, float]] = []
        self._read = 0

    def best(self, limit: int, among: list[int]) -> list[tuple[int, float]]:
        """The best `limit` pages of `among` by score, best first, and every other page of
        `among` scoring what the last of them does (and maybe more pages of `among`)."""
        side = self._side
        everything = int(side.searcher.num_docs)
        wanted = min(everything, max(PAGE_HITS, _TIES_READ * limit))
        if self._read < wanted:
            if self._asked is None:
                self._asked = side.query(self._query, None)
            if self._asked is None:
                return []
            found = side.best(self._asked, wanted)
            self._ranked = sorted(found.items(), key=lambda item: -item[1])
            self._read = wanted
        members = set(among)
        inside = [item for item in self._ranked if item[0] in members]
        exhausted = len(self._ranked) < self._read or self._read >= everything
        if exhausted or (len(inside) >= limit and inside[limit - 1][1] > self._ranked[-1][1]):
            return inside
        return self._snapshot.best_pages(self._query, limit, among)
