"""The relevance ranking: BM25 over every page and over every section of it, in Tantivy.

Two indexes of the same pages answer each query:

- one document a page: its title, frontmatter `description`, URL path, headings and body;
- one document a section (a heading and the lines up to the next, see
  `page_text.sections`): the section's heading and text, with the page's title,
  description and URL at small weights.

A page scores its page document's score plus `SECTION_WEIGHT` times its best section's, so
a long page whose one section answers the query is not diluted by its length, while the
page's whole text still counts (on its own, the best section ranks worse: the page that is
about a thing mentions it in many sections). The best section is also where the snippet is
taken from.

Each field is scored by BM25 and weighted (`PAGE_FIELDS`, `SECTION_FIELDS`). A word's
weight in a field would be its idf *in that field*: "add" is rare among titles though every
page body says it, so a title holding "add" would outrank the page a question is about.
So every field's clause is rescaled to the word's idf over the whole page (its largest
document frequency in any field): rare words weigh more, everywhere, and no stop-word list
is needed. Identifiers are read two ways: as the text reads them (Tantivy's simple
tokenizer: `use_async_data` is three words, `useAsyncData` one, so an exact identifier is
one rare term), and, in titles and headings, split into the words they are made of
(`use`, `async`, `data`), so that either spelling finds the page that defines it.
Identifiers in a query are read both ways, and a query's dotted, dashed or underscored
identifier is also looked up whole without its separators (`use_fetch` finds `useFetch`).
Every run of three neighbouring words of a query is also a phrase in the text, the title,
the description and the headings, so that a pasted error message finds the page quoting it.

What one query costs is bounded: its `MAX_TERMS` rarest words, its `MAX_PHRASES` rarest
phrases.

An index is shared by the snapshots built on it: `changed` commits a change and opens new
searchers, and a searcher keeps seeing the segments it was opened on, so a search on an
older snapshot is unchanged by a later commit.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from .passages import Word, word_pattern

# Field -> (analyzer, weight). "words": lowercased and stemmed (English); "plain":
# lowercased only, for the section index, where stemming again would double the cost of a
# build for no measured gain; "parts": identifiers split into their words.
PAGE_FIELDS = {
    "title": ("words", 3.0),
    "title_parts": ("parts", 1.0),
    "description": ("words", 2.0),
    "url": ("words", 0.5),
    "headings": ("words", 2.0),
    "heading_parts": ("parts", 0.7),
    "body": ("words", 1.0),
}
SECTION_FIELDS = {
    "title": ("words", 1.0),
    "title_parts": ("parts", 0.3),
    "description": ("words", 0.5),
    "url": ("words", 0.3),
    "headings": ("plain", 2.0),
    "heading_parts": ("parts", 0.7),
    "body": ("plain", 1.0),
}
PHRASE_FIELDS = ("title", "description", "headings", "body")
SECTION_WEIGHT = 0.25
PHRASE_WEIGHT = 0.7
# A word of `use_fetch`: the query means the identifier, which is also looked up whole.
PIECE_WEIGHT = 0.5
PHRASE_WORDS = 3
MAX_TERMS = 32
MAX_PHRASES = 16
# How many documents of each index a query reads: enough pages for any limit (20) and the
# owndocs ties, and enough sections for each of those pages to have its best one.
PAGE_HITS = 60
SECTION_HITS = 200
_LONGEST_TERM = 64
# A run of letters with at most one capital first (`Async`), a run of capitals (`URL`), or
# digits; a digit run stays with the letters before it (`e2004`).
_PARTS = r"\p{Lu}?[\p{Ll}\p{Lo}]+[0-9]*|\p{Lu}+[0-9]*|[0-9]+"
# An identifier in a query written with separators: `use_fetch`, `import.meta.client`.
_SEPARATED = re.compile(r"[^\W_]+(?:[._:/-][^\W_]+)+|[^\W_]+(?:_[^\W_]+)+")
_WRITER_HEAP = 50_000_000  # per indexing thread; the writer is dropped after each commit
_WRITER_THREADS = 2


def _analyzers() -> dict[str, tantivy.TextAnalyzer]:
    def built(tokenizer: tantivy.Tokenizer, *, stem: bool) -> tantivy.TextAnalyzer:
        builder = (
            tantivy.TextAnalyzerBuilder(tokenizer)
            .filter(tantivy.Filter.remove_long(_LONGEST_TERM))
            .filter(tantivy.Filter.lowercase())
        )
        if stem:
            builder = builder.filter(tantivy.Filter.stemmer("english"))
        return builder.build()

    return {
        "words": built(tantivy.Tokenizer.simple(), stem=True),
        "plain": built(tantivy.Tokenizer.simple(), stem=False),
        "parts": built(tantivy.Tokenizer.regex(_PARTS), stem=True),
    }


def _index(fields: dict[str, tuple[str, float]]) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("page", stored=True, indexed=True)
    builder.add_integer_field("section", stored=True)
    for name, (analyzer, _) in fields.items():
        # Identifier parts are never a phrase: their positions are not kept.
        option = "freq" if analyzer == "parts" else "position"
        builder.add_text_field(name, tokenizer_name=analyzer, index_option=option)
    index = tantivy.Index(builder.build())
    for name, built in _analyzers().items():
        index.register_tokenizer(name, built)
    return index


@dataclass(frozen=True)
class SectionText:
    """What one section is indexed with."""

    heading: str
    text: str


@dataclass(frozen=True)
class PageText:
    """What one page is indexed with."""

    title: str
    url: str
    description: str
    body: str
    sections: list[SectionText]


class RelevanceIndex:
    """The Tantivy indexes of one site's pages and sections; `Snapshot`s search them."""

    def __init__(self) -> None:
        self._pages = _index(PAGE_FIELDS)
        self._sections = _index(SECTION_FIELDS)
        self._analyzers = _analyzers()
        self._lock = threading.Lock()  # one commit at a time

    def changed(self, removed: Iterable[int], added: Iterable[tuple[int, PageText]]) -> Snapshot:
        """Remove the pages in slots `removed`, index `added`, and open searchers on that."""
        with self._lock:
            pages = self._pages.writer(_WRITER_HEAP, _WRITER_THREADS)
            sections = self._sections.writer(_WRITER_HEAP, _WRITER_THREADS)
            for slot in removed:
                pages.delete_documents_by_term("page", slot)
                sections.delete_documents_by_term("page", slot)
            for slot, page in added:
                path = page.url.replace("/", " ")
                shared = {
                    "page": slot,
                    "title": page.title,
                    "title_parts": f"{page.title} {path}",
                    "description": page.description,
                    "url": path,
                }
                headings = "\n".join(section.heading for section in page.sections)
                pages.add_document(
                    tantivy.Document(
                        **shared,
                        section=0,
                        headings=headings,
                        heading_parts=headings,
                        body=page.body,
                    )
                )
                for number, section in enumerate(page.sections):
                    sections.add_document(
                        tantivy.Document(
                            **shared,
                            section=number,
                            headings=section.heading,
                            heading_parts=section.heading,
                            body=section.text,
                        )
                    )
            for writer in (pages, sections):
                writer.commit()
                writer.wait_merging_threads()
            self._pages.reload()
            self._sections.reload()
            return Snapshot(self, self._pages.searcher(), self._sections.searcher())

    def analyze(self, analyzer: str, text: str) -> list[str]:
        """The terms `text` holds, in order, as the fields of `analyzer` read it."""
        return list(self._analyzers[analyzer].analyze(text))

    def schemas(self) -> tuple[tantivy.Schema, tantivy.Schema]:
        return self._pages.schema, self._sections.schema


@dataclass(frozen=True)
class Query:
    """A query as both indexes read it: its terms and phrases, by analyzer."""

    terms: dict[str, list[str]]  # analyzer -> terms, rarest first
    phrases: dict[str, list[list[str]]]  # analyzer -> phrases
    # Terms that only stand for a piece of an identifier the query wrote whole, weighed less.
    pieces: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return any(self.terms.values())


def _idf(documents: int, frequency: int) -> float:
    """BM25's idf, as Tantivy computes it."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


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

    def frequency(self, term: str) -> int:
        """The largest number of documents any field holds `term` in."""
        return max(int(self.searcher.doc_freq(field, term)) for field in self.fields)

    def idf(self, term: str) -> float:
        return _idf(self.documents, self.frequency(term))

    def query(self, query: Query, among: list[int] | None) -> tantivy.Query | None:
        clauses = []
        idf: dict[str, float] = {}
        for field, (analyzer, weight) in self.fields.items():
            for term in query.terms.get(analyzer, ()):
                found = int(self.searcher.doc_freq(field, term))
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
                clause = tantivy.Query.phrase_query(self.schema, field, words)
                clauses.append(
                    (tantivy.Occur.Should, tantivy.Query.boost_query(clause, PHRASE_WEIGHT))
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

    def best(self, query: tantivy.Query, count: int) -> dict[int, tuple[float, int]]:
        """Each page among the best `count` documents: its best score and that section."""
        found: dict[int, tuple[float, int]] = {}
        for score, address in self.searcher.search(query, count, count=False).hits:
            document = self.searcher.doc(address)
            slot = int(document.get_first("page"))  # type: ignore[arg-type]
            if slot not in found:
                found[slot] = (float(score), int(document.get_first("section")))  # type: ignore[arg-type]
        return found


class Snapshot:
    """The indexes as one commit left them."""

    def __init__(
        self, index: RelevanceIndex, pages: tantivy.Searcher, sections: tantivy.Searcher
    ) -> None:
        self._index = index
        page_schema, section_schema = index.schemas()
        self._pages = _Side(pages, page_schema, PAGE_FIELDS)
        self._sections = _Side(sections, section_schema, SECTION_FIELDS)

    def read(self, text: str) -> Query:
        """`text` read as the indexes read it, keeping what costs the least to answer."""
        terms: dict[str, list[str]] = {}
        phrases: dict[str, list[list[str]]] = {}
        compounds = _SEPARATED.findall(text)
        joined = " ".join("".join(re.split(r"[\W_]+", compound)) for compound in compounds)
        outside = _SEPARATED.sub(" ", text)
        pieces: set[str] = set()
        for analyzer in ("words", "plain", "parts"):
            words = self._index.analyze(analyzer, text)
            extra = [] if analyzer == "parts" else self._index.analyze(analyzer, joined)
            if analyzer != "parts" and compounds:
                alone = set(self._index.analyze(analyzer, outside))
                pieces |= {
                    term
                    for compound in compounds
                    for term in self._index.analyze(analyzer, compound)
                    if term not in alone
                }
            distinct = list(dict.fromkeys(words + extra))
            side = self._sections if analyzer == "plain" else self._pages
            rarity = {term: side.frequency(term) for term in distinct}
            terms[analyzer] = sorted(distinct, key=rarity.__getitem__)[:MAX_TERMS]
            if analyzer == "parts" or len(words) < PHRASE_WORDS:
                continue
            runs = dict.fromkeys(
                tuple(words[start : start + PHRASE_WORDS])
                for start in range(len(words) - PHRASE_WORDS + 1)
            )
            kept = [list(run) for run in runs if len(set(run)) == PHRASE_WORDS]
            kept.sort(key=lambda run: sum(rarity.get(term, 0) for term in run))
            phrases[analyzer] = kept[:MAX_PHRASES]
        return Query(terms, phrases, frozenset(pieces))

    @property
    def sections(self) -> int:
        return self._sections.documents

    def passage_words(self, query: Query) -> dict[str, Word]:
        """The query's words (stemmed) as a snippet looks for them: each weighing its idf over
        the pages, found where a word of the text begins with it or with a query word whose
        stem it is."""
        spellings: dict[str, set[str]] = {term: {term} for term in query.terms.get("words", ())}
        for spelled in query.terms.get("plain", ()):
            for term in self._index.analyze("words", spelled):
                if term in spellings:
                    spellings[term].add(spelled)
        return {
            term: Word(self._pages.idf(term), word_pattern(sorted(spelled)))
            for term, spelled in spellings.items()
        }

    def title_words(self, title: str) -> frozenset[str]:
        """The words of a title, as `passage_words` names them."""
        return frozenset(self._index.analyze("words", title))

    def best_pages(
        self, query: Query, limit: int, among: list[int] | None = None
    ) -> list[tuple[int, float, int | None]]:
        """Up to `limit` pages, best first: (slot, score, best section or None). With
        `among`, only those pages are ranked."""
        asked = self._pages.query(query, among)
        if asked is None:
            return []
        wanted = max(PAGE_HITS, limit * 3)
        pages = self._pages.best(asked, wanted)
        in_sections = self._sections.query(query, among)
        sections = {} if in_sections is None else self._sections.best(in_sections, SECTION_HITS)
        scores = {
            slot: pages.get(slot, (0.0, 0))[0] + SECTION_WEIGHT * sections.get(slot, (0.0, 0))[0]
            for slot in pages.keys() | sections.keys()
        }
        ranked = sorted(scores, key=lambda slot: -scores[slot])[:limit]
        return [
            (slot, scores[slot], sections[slot][1] if slot in sections else None) for slot in ranked
        ]
