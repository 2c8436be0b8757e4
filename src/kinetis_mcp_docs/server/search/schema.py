"""What the relevance ranking indexes, and how each field reads its text.

Two Tantivy indexes, one document a page in the first and one a section in the second.

- **A page's `text`** is its fields weighted the way BM25F weighs them: each field's words
  count `REPEAT[field]` times more in one bag of words, scored by one BM25 with one length
  normalisation (Robertson, Zaragoza and Taylor, "Simple BM25 extension to multiple
  weighted fields", 2004: weighting a field's term frequencies is the same as repeating it).
  Scored field by field and summed instead, one word the title, a heading, the URL and the
  text all hold counted once in each: "test" alone outweighed the rest of a question on
  the page titled "Tests". The title is also a field of its own (see `relevance`).
- **Names** (see `names`) are their own fields, `names` and `title_names`, unstemmed; and
  the words a title's or a heading's names are made of (`HeadersInit`: headers, init) are
  `parts`, so that either spelling finds the page that defines one.
- **A page's `lead`** is its description and the first sentence of its opening paragraph
  (`lead`): what the page says it is about, before it says anything else.
- **A section's `text`** is the page's title, the section's heading and the section's
  text, the same weighting: a long page whose one section answers is found by that section
  (a page's BM25 divides its words by its length), which is most often where a question
  about one option of a command-line reference is answered.

Link targets and anchors are not indexed (`page_text.without_link_targets`): a page that
links to a definition is not about it. Only a page's `text` keeps positions, for phrases;
the other fields keep frequencies, which is a third of the size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tantivy

from .names import code_spans, span_terms, terms, terms_and_words
from .page_text import first_paragraph, without_link_targets

# How many times more a field's words count in a page's text than the body's: the title
# three times, the description and the headings twice (chosen across the tuned trees).
REPEAT = {"title": 3, "description": 2, "headings": 2, "url": 0}
# And in a section's: the page's title and the section's heading.
SECTION_REPEAT = {"title": 1, "heading": 2}
_LONGEST_TERM = 64
# A lead's sentence is cut after this many words: a first "sentence" with no full stop (a
# list, a line of options) is no summary past its opening.
LEAD_WORDS = 60
# What opens a block that is no prose: a code fence, a table, HTML or a component's tag, a
# template's, a heading.
_NOT_PROSE = ("```", "~~~", "::", "<", "|", "{", "#")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_WRITER_HEAP = 50_000_000  # the writer is dropped after each commit

# Field -> (analyzer, keeps positions).
PAGE_FIELDS = {
    "text": ("words", True),
    "title": ("words", False),
    "names": ("names", False),
    "title_names": ("names", False),
    "parts": ("words", False),
    "lead": ("words", False),
}
SECTION_FIELDS = {
    "text": ("words", False),
}


def analyzers() -> dict[str, tantivy.TextAnalyzer]:
    """ "words": lowercased and stemmed (English); "names": a name's term as `names` made it,
    one a blank-separated chunk."""

    def built(tokenizer: tantivy.Tokenizer, *, stemmed: bool) -> tantivy.TextAnalyzer:
        builder = (
            tantivy.TextAnalyzerBuilder(tokenizer)
            .filter(tantivy.Filter.remove_long(_LONGEST_TERM))
            .filter(tantivy.Filter.lowercase())
        )
        if stemmed:
            builder = builder.filter(tantivy.Filter.stemmer("english"))
        return builder.build()

    return {
        "words": built(tantivy.Tokenizer.simple(), stemmed=True),
        "names": built(tantivy.Tokenizer.whitespace(), stemmed=False),
    }


def new_index(fields: dict[str, tuple[str, bool]]) -> tantivy.Index:
    """An empty index in memory of these fields, beside the page's slot and the section's
    place in its page."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("page", stored=True, indexed=True, fast=True)
    builder.add_integer_field("section", stored=True, fast=True)
    for name, (analyzer, positions) in fields.items():
        option = "position" if positions else "freq"
        builder.add_text_field(name, tokenizer_name=analyzer, index_option=option)
    index = tantivy.Index(builder.build())
    for name, built in analyzers().items():
        index.register_tokenizer(name, built)
    return index


def writer(index: tantivy.Index) -> tantivy.IndexWriter:
    # One indexing thread: with two, which pages share a segment was up to the threads, and
    # a page's score then moved in the last bit of its 32 from one build of a tree to the
    # next (under Tantivy 0.26, Python 3.10's, in most builds; under 0.27 rarely).
    return index.writer(_WRITER_HEAP, 1)


@dataclass(frozen=True)
class PageText:
    """What one page is indexed with: its title, URL, frontmatter description, and its
    sections as (heading, text) in order ('' for the text before the first heading)."""

    title: str
    url: str
    description: str
    sections: tuple[tuple[str, str], ...]


def documents(
    slot: int, page: PageText, *, sections: bool = True
) -> tuple[tantivy.Document, list[tantivy.Document]]:
    """The page's document, and (with `sections`) its sections' (each knowing its place in
    the page)."""
    headings = "\n".join(heading for heading, _ in page.sections if heading)
    head_names, named_words = terms_and_words(f"{page.title}\n{headings}")
    contents = _without_link_targets([text for _, text in page.sections])
    body = "".join(contents)
    body_names = span_terms(code_spans(body))
    weighted = (
        _repeated(page.title, REPEAT["title"])
        + _repeated(page.description, REPEAT["description"])
        + _repeated(headings, REPEAT["headings"])
        + _repeated(page.url.replace("/", " "), REPEAT["url"])
        + body
    )
    whole = tantivy.Document(
        page=slot,
        section=-1,
        text=weighted,
        title=page.title,
        names=f"{head_names} {body_names}",
        title_names=terms(page.title),
        parts=named_words,
        lead=lead(page.description, contents),
    )
    if not sections:
        return whole, []
    title = _repeated(page.title, SECTION_REPEAT["title"])
    return whole, [
        tantivy.Document(
            page=slot,
            section=place,
            text=title + _repeated(heading, SECTION_REPEAT["heading"]) + content,
        )
        for place, ((heading, _), content) in enumerate(zip(page.sections, contents, strict=True))
    ]


def lead(description: str, sections: list[str]) -> str:
    """A page's description and the first sentence of its first paragraph of prose (of
    `sections`, its sections' texts in order, without their link targets), `LEAD_WORDS`
    words at most: the sentence that says what the page is about."""
    for text in sections:
        paragraph = first_paragraph(text, _NOT_PROSE)
        if paragraph:
            sentence = _SENTENCE_END.split(paragraph, maxsplit=1)[0]
            return f"{description}\n{' '.join(sentence.split()[:LEAD_WORDS])}"
    return description


def _without_link_targets(texts: list[str]) -> list[str]:
    """Each of `texts` (a page's sections) without its link targets: in one pass over them
    all, a NUL between (a target holds no line break, and a section ends at one), where a
    call a section cost a second over 10,000 pages."""
    if len(texts) < 2 or any("\0" in text for text in texts):
        return [without_link_targets(text) for text in texts]
    return without_link_targets("\0".join(texts)).split("\0")


def _repeated(text: str, times: int) -> str:
    return (text + "\n") * times if text else ""
