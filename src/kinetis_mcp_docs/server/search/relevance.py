"""The relevance ranking: BM25 over every page's sections, in Tantivy.

Each section of a page (its heading and the lines up to the next heading, see
`page_text.sections`) is one document with six fields, each scored by BM25 with its own
length normalisation and weighted: the page's title, its frontmatter `description`, its URL
path, the section's heading, its text, and the words of the identifiers in it (see
`identifiers`). A page scores what
its best section scores: a long page is not diluted by its length, and a short one gains
nothing from it. The words of a query are the terms of all six fields (rare ones weigh
more through BM25's idf; no stop-word list), and each pair of neighbouring words in the
query is also a phrase in the text, so that a pasted message finds the page quoting it.

Why Tantivy: see docs/http.md (#ranking). In short, SQLite's FTS5 computes `bm25()` for
every matching row, 27 ms for one common word over 1,000 pages of 20 KB, where Tantivy's
block-max WAND takes 0.1 ms.

An index is shared by the snapshots built on it: `changed` commits a change and opens a new
searcher, and a searcher keeps seeing the segments it was opened on, so a search on an older
snapshot is unchanged by a later commit.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import tantivy

from .identifiers import identifier_words

TITLE_WEIGHT = 3.0
URL_WEIGHT = 1.5
DESCRIPTION_WEIGHT = 2.0
HEADING_WEIGHT = 2.0
BODY_WEIGHT = 1.0
IDENTIFIER_WEIGHT = 1.0
PHRASE_WEIGHT = 1.0
# Bounds on what one query costs: its rarest terms, its rarest neighbouring pairs.
MAX_TERMS = 48
MAX_PHRASES = 12
_FIELDS = (
    ("title", TITLE_WEIGHT),
    ("description", DESCRIPTION_WEIGHT),
    ("url", URL_WEIGHT),
    ("heading", HEADING_WEIGHT),
    ("body", BODY_WEIGHT),
    ("identifiers", IDENTIFIER_WEIGHT),
)
_ANALYZER = "kinetis"
_WRITER_HEAP = 32_000_000  # per commit; the writer is dropped after it


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("page", stored=True, indexed=True, fast=True)
    builder.add_integer_field("section", stored=True)
    for name, _ in _FIELDS:
        builder.add_text_field(name, tokenizer_name=_ANALYZER, index_option="position")
    return builder.build()


@dataclass(frozen=True)
class SectionText:
    """What one section is indexed with."""

    heading: str
    text: str


@dataclass(frozen=True)
class PageText:
    """What one page is indexed with: its title, URL and sections."""

    title: str
    url: str
    description: str
    sections: list[SectionText]


@dataclass(frozen=True)
class QueryTerms:
    """A query as the index reads it: its terms, rarest first, and phrases of two."""

    terms: list[str]
    phrases: list[tuple[str, str]]


class RelevanceIndex:
    """The Tantivy index of one site's sections; `Snapshot`s search it."""

    def __init__(self) -> None:
        self._schema = _schema()
        self._index = tantivy.Index(self._schema)
        self._analyzer = _analyzer()
        self._index.register_tokenizer(_ANALYZER, _analyzer())
        self._lock = threading.Lock()  # one commit at a time

    def changed(self, removed: Iterable[int], added: Iterable[tuple[int, PageText]]) -> Snapshot:
        """Remove the pages in slots `removed`, index `added`, and open a searcher on that."""
        with self._lock:
            writer = self._index.writer(_WRITER_HEAP, 1)
            for slot in removed:
                writer.delete_documents_by_term("page", slot)
            for slot, page in added:
                title = f"{page.title} {identifier_words(page.title)}"
                path = page.url.replace("/", " ")
                url = f"{path} {identifier_words(path)}"
                description = f"{page.description} {identifier_words(page.description)}"
                for number, section in enumerate(page.sections):
                    writer.add_document(
                        tantivy.Document(
                            page=slot,
                            section=number,
                            title=title,
                            url=url,
                            description=description,
                            heading=f"{section.heading} {identifier_words(section.heading)}",
                            body=section.text,
                            identifiers=identifier_words(section.text),
                        )
                    )
            writer.commit()
            writer.wait_merging_threads()
            self._index.reload()
            return Snapshot(self, self._index.searcher())

    def terms(self, text: str) -> list[str]:
        """The terms `text` holds, in order, as the index reads them."""
        return list(self._analyzer.analyze(text))

    @property
    def schema(self) -> tantivy.Schema:
        return self._schema


class Snapshot:
    """The index as one commit left it."""

    def __init__(self, index: RelevanceIndex, searcher: tantivy.Searcher) -> None:
        self._index = index
        self._searcher = searcher

    def query_terms(self, query: str) -> QueryTerms:
        """`query` read as the index reads text, keeping what costs the least to answer."""
        words = self._index.terms(query)
        distinct = list(dict.fromkeys(words + self._index.terms(identifier_words(query))))
        frequency = {term: self._searcher.doc_freq("body", term) for term in distinct}
        terms = sorted(distinct, key=lambda term: frequency[term])[:MAX_TERMS]
        pairs = list(dict.fromkeys(itertools.pairwise(words)))
        pairs = [pair for pair in pairs if pair[0] != pair[1]]
        pairs.sort(key=lambda pair: frequency[pair[0]] + frequency[pair[1]])
        return QueryTerms(terms, pairs[:MAX_PHRASES])

    def _query(self, terms: QueryTerms) -> tantivy.Query:
        schema = self._index.schema
        clauses = [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(schema, field, term), weight),
            )
            for term in terms.terms
            for field, weight in _FIELDS
        ]
        clauses += [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(
                    tantivy.Query.phrase_query(schema, "body", list(pair)), PHRASE_WEIGHT
                ),
            )
            for pair in terms.phrases
        ]
        return tantivy.Query.boolean_query(clauses)

    @property
    def sections(self) -> int:
        return int(self._searcher.num_docs)

    def frequency(self, term: str) -> int:
        """How many sections hold `term` in their text."""
        return int(self._searcher.doc_freq("body", term))

    def best_pages(
        self,
        terms: QueryTerms,
        limit: int,
        among: Iterable[int] | None = None,
        accept: Callable[[int], bool] | None = None,
    ) -> list[tuple[int, float, int]]:
        """Up to `limit` pages by their best section, best first: (slot, score, section).
        With `among`, only those pages are searched; with `accept`, only the pages it
        accepts are returned."""
        if not terms.terms:
            return []
        query = self._query(terms)
        if among is not None:
            chosen = tantivy.Query.term_set_query(self._index.schema, "page", list(among))
            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, query),
                    (tantivy.Occur.Must, tantivy.Query.const_score_query(chosen, 0.0)),
                ]
            )
        wanted = max(limit * 8, 40)
        total = self._searcher.num_docs
        while True:
            hits = self._searcher.search(query, wanted, count=False).hits
            best: dict[int, tuple[float, int]] = {}
            for score, address in hits:
                document = self._searcher.doc(address)
                slot = int(document.get_first("page"))  # type: ignore[arg-type]
                if slot not in best and (accept is None or accept(slot)):
                    best[slot] = (float(score), int(document.get_first("section")))  # type: ignore[arg-type]
                    if len(best) == limit:
                        break
            if len(best) == limit or len(hits) < wanted or wanted >= total:
                return [(slot, score, section) for slot, (score, section) in best.items()]
            wanted *= 4
