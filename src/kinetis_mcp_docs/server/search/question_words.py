"""A question's own words: how, should, I, do, what, why, my.

Weighing a word by its rarity (idf) needs no stop-word list for a page's words, but a
question brings words of its own that documentation rarely writes: "I", "my", "should" are
rare in reference pages, so they weigh as much as the subject, and "how should I name my
test files" matched every "What should I do?" heading of a set of upgrade guides. They are
told apart on the query side only: a query's word that is one of these weighs less there
(see `relevance`), and the index keeps every word, so that a pasted message still matches
the page quoting it word for word, "is not" and all.

The list is Snowball's English stop-word list (snowballstem.org, `english/stop.txt`, by
Martin Porter; BSD licence): a general list of English function words, not one fitted to a
documentation tree. A word spelled as code (between backticks, or holding a name) is no
filler: `this` in "`this` is undefined" is the subject.
"""

from __future__ import annotations

# Written as Snowball's file writes it, one text.
QUESTION_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing would should could ought i'm you're he's she's it's we're they're i've
    you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's a an the and but if or because as until while of at
    by for with about against between into through during before after above below to from
    up down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very
    """.split()  # noqa: SIM905 - a list of 174 words, kept in the list's own layout
)
# What may surround a word of prose: a question's own word is still one with these around
# it ("I," or "(how"); a word between backticks is code.
_AROUND = ".,;:!?()[]{}<>\"'"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})


def is_question_word(chunk: str) -> bool:
    """Whether a whitespace-separated chunk of a query is one of a question's own words."""
    return chunk.strip(_AROUND).translate(_APOSTROPHES).lower() in QUESTION_WORDS
