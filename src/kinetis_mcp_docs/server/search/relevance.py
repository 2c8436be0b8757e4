"""The relevance ranking's page score: field-weighted BM25 over every page and every
section, in Tantivy.

A page scores its page document's BM25 (its fields weighted as BM25F weighs them, see
`schema`) plus `SECTION_WEIGHT` of its best section's. The page's score holds:

- each word of the query in its `text` (weighted as the query weighs it, see `query`);
- the word in its lead (its description and its first sentence, see `schema.lead`),
  `LEAD_WEIGHT`, rescaled as the title's words are;
- the word in its title alone, `TITLE_WEIGHT`: "the page titled so" tells a definition
  from a mention better than a title that counts three times in the text does. A title
  field's idf would make any word rare ("add" is in few titles though every page says it),
  so the title's clause is rescaled to the word's idf over the pages;
- each name of the query among its names (`NAMES_WEIGHT`) and its title's
  (`TITLE_NAMES_WEIGHT`, rescaled as the title's words are), and the words the query's
  names are made of among its titles' and headings' names' words (`PARTS_WEIGHT`);
- the query's phrases (one more word between allowed), in its text;
- for a query naming an error, each word its text holds, once (`HELD_WEIGHT`), and each
  name its names hold, once (`NAMES_HELD_WEIGHT`).

A section's score is the same words and names in the section's text and names.

What one query costs is bounded by `query`'s bounds (its rarest terms and phrases, no
phrase of words most pages hold). An index is shared by the snapshots
built on it: `changed` commits a change and opens new searchers, and a searcher keeps
seeing the segments it was opened on, so a search on an older snapshot is unchanged by a
later commit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from . import query as queries
from .names import names, term, words_of
from .passages import Word, word_pattern
from .query import Query
from .question_words import is_question_word
from .schema import (
    PAGE_FIELDS,
    SECTION_FIELDS,
    PageText,
    analyzers,
    documents,
    new_index,
    writer,
)

__all__ = ["PageText", "Query", "RelevanceIndex", "Snapshot", "Ties"]

# 2.25 to 2.5 measure alike (MRR@10 on nuxt / eslint / redis 0.888 / 0.811 / 0.910, questions
# 0.854 / 0.702 / 0.842), 2 less (0.878 / 0.810 / 0.910; 0.826 / 0.696 / 0.842), 2.75 less.
TITLE_WEIGHT = 2.4
# Owndocs orders its ties by these scores, without sections: with the title's weight (and
# the query read, see `query.read`) they were ordered by before, so that a change made for
# the relevance ranking does not reorder them.
TIES_TITLE_WEIGHT = 2.0
# A word of the query in a page's lead (see `schema.lead`): the sentence saying what the
# page is about answers a question better than a page saying the question's words further
# down. MRR@10 on nuxt / eslint / redis 0.901 / 0.854 / 0.944 (questions 0.882 / 0.774 /
# 0.892) against 0.893 / 0.848 / 0.938 (0.861 / 0.754 / 0.874) without, pasted errors'
# Hit@1 and snippets unchanged; 0.3 to 0.45 alike, 0.5 less on redis (0.941). Owndocs's
# ties are ordered without it, as before.
LEAD_WEIGHT = 0.4
NAMES_WEIGHT = 1.0
TITLE_NAMES_WEIGHT = 2.0
PARTS_WEIGHT = 1.0
NAME_TIE = 0.0
PHRASE_WEIGHT = 0.5
# A query naming an error (`query.Query.message`) is a message: a page counts each of its
# words it holds once more, this much of the word's idf, however often it says it, so that
# the page holding most of the message outranks one saying a few of its words often (a
# command's reference page for the commands a Redis error lists). At 0.5 or 0.75 redis's
# pasted errors' Hit@1 0.906 against 0.875 and its MRR@10 0.916 against 0.910, eslint's
# 0.818 alike (one error up, one down), nuxt's none; for every query that does not ask
# (no question's word first, no "?"), 0.938 on redis but nuxt's questions 0.844 against
# 0.854; for every query, eslint's questions 0.651 against 0.702.
HELD_WEIGHT = 0.5
# And each of its names a page holds among its names, this much of the name's idf, so that
# the page about the name a message names (`sourceType`, `no-unused-vars`, `WRONGTYPE`)
# outranks pages saying its other words: 1 to 2 measure alike, pasted errors' Hit@1 on
# eslint / redis 0.735 / 0.938 against 0.676 / 0.906 without (MRR@10 0.831 / 0.921 against
# 0.818 / 0.916), nuxt's unchanged; 3 less (0.735 / 0.906).
NAMES_HELD_WEIGHT = 1.5
# One word more between them is still the phrase: a message quoted with "the" or "a" added.
PHRASE_SLOP = 1
SECTION_WEIGHT = 1.0
# A page's sections scoring within 3% of its best are a tie for its snippet, which is taken
# from the earliest of them: BM25 favours the short section, the example or variant a page
# gives after the section that introduces its subject (`### Custom Prefetch Triggers`
# under `## Prefetch Links`), and so close a score tells one from the other no better
# (snippets showing the answer on nuxt / eslint / redis from 73 / 49 / 53% to 76 / 49 /
# 55%; 2% to 4% alike, 1% 74 / 49 / 54%, 5% 74 / 49 / 55%, 10% 74 / 50 / 54%).
SECTION_TIE = 0.97
MAX_PASSAGE_WORDS = 12
# A query's name of several words (`meta.defaultOptions`, `app:error`) is looked for whole
# in a page's lines too, beside its words, weighing this much of its idf: the line writing
# it whole is about it, where a line saying `defaultOptions` may be about another thing's,
# or `error` about another hook (snippets showing the answer on nuxt / eslint / redis from
# 71 / 44 / 54% to 73 / 49 / 53%; 0.3 to 0.7 alike, 1 73 / 48 / 53%; its weightiest
# word's weight rather than its idf, 71 / 47 / 54% at 0.5, 71 / 47 / 53% at 0.6). The
# first `MAX_WHOLE_NAMES` the query writes, at most: each is one more search of a page.
WHOLE_NAME_WEIGHT = 0.5
MAX_WHOLE_NAMES = 4
# How many pages `Ties` reads from the index: enough for any limit (20) twice over.
PAGE_HITS = 40
# How many of the best pages by their own scores are ranked again with their best section.
RERANKED = 40
# How many sections are read a page, for the pages' best sections (see `ranked`).
_SECTIONS_READ = 4
# Terms whose document counts a searcher remembers (a term's are a few integers).
_REMEMBERED_TERMS = 65_536
# Up to how many pages a search filtered to them asks for each page's term (see `_pages`):
# the two ways cost alike at 300 to 600 pages of 10,000.
_PAGES_ONE_BY_ONE = 256
# How many of the whole index's best pages a `Ties` reads, per page asked for (PAGE_HITS
# at least), before it asks for a search filtered to the pages of a tie instead.
_TIES_READ = 4


class RelevanceIndex:
    """The Tantivy indexes of one site's pages and, with `sections`, of their sections;
    `Snapshot`s search them."""

    def __init__(self, *, sections: bool = True) -> None:
        self._pages = new_index(PAGE_FIELDS)
        self._sections = new_index(SECTION_FIELDS) if sections else None
        self._analyzer = analyzers()["words"]
        self._lock = threading.Lock()  # one commit at a time

    def changed(self, changes: Iterable[int | tuple[int, PageText]]) -> Snapshot:
        """Apply `changes` in order, each the slot of a page to remove or a `(slot, page)` to
        index, and open searchers on the result.

        `changes` is read while the writers are open, so the caller's own indexing of each
        page (the contract's, in owndocs mode) runs while Tantivy's indexing threads take
        the pages already handed over. A slot removed, then used again, is removed before
        its new page is added: a removal takes every page of its slot added before it.
        Nothing is committed if reading `changes` fails.
        """
        with self._lock:
            writers = [writer(self._pages)]
            if self._sections is not None:
                writers.append(writer(self._sections))
            try:
                for change in changes:
                    if isinstance(change, int):
                        for written in writers:
                            written.delete_documents_by_term("page", change)
                        continue
                    whole, parts = documents(*change, sections=len(writers) > 1)
                    writers[0].add_document(whole)
                    for document in parts:
                        writers[1].add_document(document)
            except BaseException:
                for written in writers:
                    written.rollback()
                raise
            for written in writers:
                written.commit()
                written.wait_merging_threads()
            self._pages.reload()
            if self._sections is None:
                return Snapshot(self, self._pages.searcher(), None)
            self._sections.reload()
            return Snapshot(self, self._pages.searcher(), self._sections.searcher())

    def analyze(self, text: str) -> list[str]:
        """The words `text` holds, in order, as a page's text reads them."""
        return list(self._analyzer.analyze(text))

    @property
    def page_schema(self) -> tantivy.Schema:
        return self._pages.schema

    @property
    def section_schema(self) -> tantivy.Schema | None:
        return None if self._sections is None else self._sections.schema


_idf = queries.idf


@dataclass(frozen=True)
class Ranked:
    """A page's score for a query, and its best section's place (-1: none found)."""

    slot: int
    score: float
    section: int = -1


class _Side:
    """One index's searcher and fields, and how a query is asked of it."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema, fields: Iterable[str]):
        self.searcher = searcher
        self.schema = schema
        self.fields = tuple(fields)
        self.documents = max(1, int(searcher.num_docs))
        # A searcher never changes: what it says of a term holds for its life. Asked a
        # field at a time, and for each term several times a query, it was a tenth of a
        # search.
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

    def found(self, query: tantivy.Query, count: int, among: list[int] | None) -> list[Ranked]:
        """The best `count` documents for `query` (of the pages `among`), best first."""
        if among is not None:
            chosen = _pages(self.schema, among)
            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, query),
                    (tantivy.Occur.Must, tantivy.Query.const_score_query(chosen, 0.0)),
                ]
            )
        hits = self.searcher.search(query, count, count=False).hits
        if not hits:
            return []
        addresses = [address for _, address in hits]
        slots = self.searcher.fast_field_values("page", addresses)
        places = self.searcher.fast_field_values("section", addresses)
        return [
            Ranked(int(slot or 0), float(score), int(place or 0))
            for (score, _), slot, place in zip(hits, slots, places, strict=True)
        ]


class Snapshot:
    """The indexes as one commit left them."""

    def __init__(
        self, index: RelevanceIndex, pages: tantivy.Searcher, sections: tantivy.Searcher | None
    ) -> None:
        self._index = index
        self._pages = _Side(pages, index.page_schema, PAGE_FIELDS)
        section_schema = index.section_schema
        self._sections = (
            None
            if sections is None or section_schema is None
            else _Side(sections, section_schema, SECTION_FIELDS)
        )
        self._title_weight = TITLE_WEIGHT if self._sections is not None else TIES_TITLE_WEIGHT
        self._lead_weight = LEAD_WEIGHT if self._sections is not None else 0.0

    @property
    def pages(self) -> int:
        return self._pages.documents

    def frequency(self, term: str) -> int:
        return self._pages.frequency(term)

    def informative(self, word: str) -> float:
        """How well a word of a query, as written, tells pages apart: the idf of its rarest
        term that some page holds, or of its name; 0 for a question's own word, or a word
        no page holds."""
        if is_question_word(word):
            return 0.0
        held = [
            found
            for found in map(self._pages.frequency, [*self._index.analyze(word), *names(word)])
            if found
        ]
        return _idf(self._pages.documents, min(held)) if held else 0.0

    def read(self, text: str) -> Query:
        """`text` read as the indexes read it (see `query.read`)."""
        return queries.read(text, self, self._index.analyze, for_ties=self._sections is None)

    def _page_query(self, query: Query) -> tantivy.Query | None:
        words = {
            word: self._word_clauses(word, query.ranked_weight(word), held=query.message)
            for word in query.words
        }
        names = {name: self._name_clauses(name, also_a_word=name in words) for name in query.names}
        clauses = _concepts(words, names)
        schema = self._pages.schema
        clauses += [
            _term(schema, "parts", word, PARTS_WEIGHT)
            for word in query.parts
            if self._pages.counts(word)[4]
        ]
        clauses += [_phrase(schema, phrase, PHRASE_SLOP, PHRASE_WEIGHT) for phrase in query.phrases]
        if query.message:
            clauses += [
                self._held("names", name, NAMES_HELD_WEIGHT)
                for name in query.names
                if self._pages.counts(name)[2]
            ]
        return _any(clauses)

    def _word_clauses(self, word: str, weight: float, *, held: bool) -> list[tantivy.Query]:
        """A word of the query in a page's text and its title; with `held`, once more
        `HELD_WEIGHT` of its idf where the text holds it at all."""
        text, title, _, _, _, lead = self._pages.counts(word)
        schema = self._pages.schema
        found = []
        if text:
            found.append(_term(schema, "text", word, weight))
        if text and held:
            found.append(self._held("text", word, HELD_WEIGHT * weight))
        if title:
            rescaled = self._title_weight * self._rescaled(word, title)
            found.append(_term(schema, "title", word, weight * rescaled))
        if lead and self._lead_weight:
            rescaled = self._lead_weight * self._rescaled(word, lead)
            found.append(_term(schema, "lead", word, weight * rescaled))
        return found

    def _name_clauses(self, name: str, *, also_a_word: bool) -> list[tantivy.Query]:
        """A name of the query among a page's names and its title's; and, unless the query
        holds it as a word too, in its text and title: a name the text writes as one word
        (`useFetch` is `usefetch` there too) is found whole whichever way the query writes
        it."""
        text, title, held, title_names, _, _ = self._pages.counts(name)
        schema = self._pages.schema
        found = []
        if text and not also_a_word:
            found.append(_term(schema, "text", name, 1.0))
        if title and not also_a_word:
            rescaled = self._title_weight * self._rescaled(name, title)
            found.append(_term(schema, "title", name, rescaled))
        if held:
            found.append(_term(schema, "names", name, NAMES_WEIGHT))
        if title_names:
            rescaled = TITLE_NAMES_WEIGHT * self._rescaled(name, title_names)
            found.append(_term(schema, "title_names", name, rescaled))
        return found

    def _held(self, field: str, term: str, weight: float) -> tantivy.Query:
        """`weight` times `term`'s idf over the pages, for a page whose `field` holds it,
        however often."""
        idf = _idf(self._pages.documents, self._pages.frequency(term))
        holds = tantivy.Query.term_query(self._pages.schema, field, term)
        return tantivy.Query.const_score_query(holds, weight * idf)

    def _rescaled(self, term: str, found: int) -> float:
        """A field's clause for `term`, which `found` documents hold in it, rescaled from
        the field's idf to the term's idf over the pages."""
        side = self._pages
        return _idf(side.documents, side.frequency(term)) / _idf(side.documents, found)

    def _section_query(self, side: _Side, query: Query) -> tantivy.Query | None:
        """The query's words, and its names the text writes as one word, in a section's
        text. A section's names apart (its heading's and code spans') changed no figure
        of the tuned trees (MRR@10 0.861 with them, 0.860 without)."""
        schema = side.schema
        clauses = [
            _term(schema, "text", word, query.ranked_weight(word))
            for word in query.words
            if side.counts(word)[0]
        ]
        clauses += [
            _term(schema, "text", name, 1.0)
            for name in query.names
            if name not in query.words and side.counts(name)[0]
        ]
        return _any(clauses)

    def ranked(self, query: Query, count: int, among: list[int] | None = None) -> list[Ranked]:
        """The pages scoring best for `query` (of the pages `among`), best first, at least
        the best `count` of them when there are so many.

        Without sections, by the pages' own scores. With them, the `RERANKED` best pages
        by their own scores (or `count` times four, if more), each plus `SECTION_WEIGHT` of
        its best section's score (a search of their sections): a long page whose one section
        answers comes up. Reading the best sections of the whole index too, and the pages
        they named, changed no answer on the tuned trees, and the search of those pages'
        own scores cost what the first did (Tantivy makes a query's weights anew).
        """
        page_query = self._page_query(query)
        if page_query is None:
            return []
        sections = self._sections
        if sections is None:
            return self._pages.found(page_query, count, among)
        by_page = self._pages.found(page_query, max(RERANKED, 4 * count), among)
        section_query = self._section_query(sections, query)
        best: dict[int, Ranked] = {}
        if section_query is not None and by_page:
            lacking = [found.slot for found in by_page]
            while lacking:
                # A page's best section is most often among the best few sections of the
                # pages asked for; a page whose best is not is asked for again, alone.
                count = _SECTIONS_READ * len(lacking)
                found_sections = sections.found(section_query, count, lacking)
                for found in found_sections:  # best first
                    kept = best.get(found.slot)
                    if kept is None:
                        best[found.slot] = found
                    elif found.section < kept.section and found.score >= SECTION_TIE * kept.score:
                        # The page's score stays its best section's; its snippet's place
                        # is the earlier section's.
                        best[found.slot] = Ranked(found.slot, kept.score, found.section)
                if len(found_sections) < count:  # every section of theirs that matches
                    break
                lacking = [slot for slot in lacking if slot not in best]
        ranked = [
            Ranked(
                found.slot,
                found.score + SECTION_WEIGHT * best[found.slot].score,
                best[found.slot].section,
            )
            if found.slot in best
            else found
            for found in by_page
        ]
        ranked.sort(key=lambda found: -found.score)
        return ranked

    def best_pages(self, query: Query, limit: int, among: list[int] | None = None) -> list[Ranked]:
        """The best `limit` pages, best first, with their scores, and every other page
        scoring what the last of them does. With `among`, only those pages.

        Pages of equal score come in an order of Tantivy's own: the pages tied at the cut
        are all returned, for the caller to order them as it orders ties (by URL), so that
        one query over one tree always answers the same. Asking again, twice as many each
        time, costs as many more pages as tie there, which pages that differ never do.
        """
        if limit < 1:
            return []
        most = len(among) if among is not None else self._pages.searcher.num_docs
        # One page more than asked for tells whether a page ties with the last at the cut.
        count = limit + 1
        while True:
            ranked = self.ranked(query, count, among)
            if len(ranked) <= limit:
                return ranked
            cut = ranked[limit - 1].score
            if len(ranked) < count or count >= most or ranked[count - 1].score < cut:
                return [found for found in ranked if found.score >= cut]
            count = min(most, count * 2)

    def ties(self, query: Query) -> Ties:
        """Orders the pages of `query`'s ties (see `Ties`)."""
        return Ties(self, query)

    def passage_words(self, query: Query) -> dict[str, Word]:
        """The query's words (stemmed) as a snippet looks for them: each weighing its idf over
        the pages, found where a word of the text begins with it or with a query word whose
        stem it is. Of the `MAX_PASSAGE_WORDS` rarest, a question's own words (`how`, `I`,
        `my`) are not looked for: rare in documentation, they would weigh as much as the
        subject among a page's lines, and a line saying "do" or "I" is no answer (snippets
        showing the answer on nuxt / eslint / redis from 68 / 44 / 54% to 71 / 44 / 54%;
        looking for the 12 rarest of the others instead, 71 / 46 / 53%). A name of several
        words is looked for whole too (see `WHOLE_NAME_WEIGHT`)."""
        rarest = [word for word in query.words[:MAX_PASSAGE_WORDS] if word not in query.filler]
        spellings: dict[str, set[str]] = {word: {word} for word in rarest}
        for spelled in query.spelled:
            for word in self._index.analyze(spelled):
                if word in spellings:
                    spellings[word].add(spelled)
        documents = self._pages.documents
        found = {
            word: Word(
                _idf(documents, self._pages.frequency(word)) * query.weight(word),
                word_pattern(sorted(spelled)),
            )
            for word, spelled in spellings.items()
        }
        for name in query.whole[:MAX_WHOLE_NAMES]:
            parts = [part for part in self._index.analyze(words_of(name)) if part in found]
            # Only a name some word of which is looked for, and not one only the lines
            # around a pasted log's message write (a stack frame's).
            if parts and not query.context.issuperset(parts):
                spelled = name.lower()  # its words joined by a separator: no word's key
                idf = _idf(documents, self._pages.frequency(term(name)))
                found[spelled] = Word(WHOLE_NAME_WEIGHT * idf, word_pattern([spelled]))
        return found

    def title_words(self, title: str) -> frozenset[str]:
        """The words of a title, as `passage_words` names them."""
        return frozenset(self._index.analyze(title))


def _pages(schema: tantivy.Schema, slots: list[int]) -> tantivy.Query:
    """The documents of the pages `slots`: for a few pages, any of each page's term, which
    Tantivy answered in a third to a half of the time its set of terms took for the 40
    pages reranked by their sections (0.4 ms a search over 10,000 pages, most of a
    section search's cost); for many, the set of terms, which gathers them faster."""
    if len(slots) > _PAGES_ONE_BY_ONE:
        return tantivy.Query.term_set_query(schema, "page", slots)
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "page", slot)) for slot in slots]
    )


def _term(schema: tantivy.Schema, field: str, term: str, weight: float) -> tantivy.Query:
    return tantivy.Query.boost_query(tantivy.Query.term_query(schema, field, term), weight)


def _phrase(
    schema: tantivy.Schema, words: tuple[str, ...], slop: int, weight: float
) -> tantivy.Query:
    phrase = tantivy.Query.phrase_query(schema, "text", list(words), slop)
    return tantivy.Query.boost_query(phrase, weight)


def _concepts(
    words: dict[str, list[tantivy.Query]], names: dict[str, list[tantivy.Query]]
) -> list[tantivy.Query]:
    """One clause a word and one a name, but one for a word that is also a name (`HSET`,
    `useFetch`: one token the words and the names both read whole): the better of the two,
    and `NAME_TIE` of the other, so that one token of the query does not count twice."""
    clauses = []
    for word, found in words.items():
        also = names.get(word)
        if also and found:
            joined = [_all_of(found), _all_of(also)]
            clauses.append(tantivy.Query.disjunction_max_query(joined, NAME_TIE))
        elif found:
            clauses.extend(found)
    for name, found in names.items():
        if name not in words:
            clauses.extend(found)
    return clauses


def _all_of(clauses: list[tantivy.Query]) -> tantivy.Query:
    """The sum of `clauses`' scores, where any matches."""
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, clause) for clause in clauses])


def _any(clauses: list[tantivy.Query]) -> tantivy.Query | None:
    if not clauses:
        return None
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, clause) for clause in clauses])


class Ties:
    """The best pages of given sets of pages for one query, for one search.

    What `Snapshot.best_pages(query, limit, among=pages)` answers, most often without the
    search filtered to `pages` it asks: that one costs Tantivy several times what the same
    query over every page does, and the pages of a tie (equal contract scores) are most
    often among the query's best anyway. The whole index's best pages are read once per
    search; every page of a set scoring more than the last page read is among them, so
    when `limit` of the set do, or the index had no more pages to give, that is the answer.
    Exact for an index without sections, whose pages score their own scores alone.
    """

    def __init__(self, snapshot: Snapshot, query: Query) -> None:
        self._snapshot = snapshot
        self._query = query
        self._ranked: list[Ranked] = []
        self._read = 0

    def best(self, limit: int, among: list[int]) -> list[Ranked]:
        """The best `limit` pages of `among` by score, best first, and every other page of
        `among` scoring what the last of them does (and maybe more pages of `among`)."""
        everything = self._snapshot.pages
        wanted = min(everything, max(PAGE_HITS, _TIES_READ * limit))
        if self._read < wanted:
            self._ranked = self._snapshot.ranked(self._query, wanted)
            self._read = wanted
        members = set(among)
        inside = [found for found in self._ranked if found.slot in members]
        exhausted = len(self._ranked) < self._read or self._read >= everything
        last = self._ranked[-1].score if self._ranked else 0.0
        if exhausted or (len(inside) >= limit and inside[limit - 1].score > last):
            return inside
        return self._snapshot.best_pages(self._query, limit, among)
