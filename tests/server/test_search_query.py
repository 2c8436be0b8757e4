"""How a query is read: names kept whole, a question's own words, link targets left out of a
page's words, and a long query cut to its most informative leading words."""

from __future__ import annotations

import random
import re
import time

import pytest

from kinetis_mcp_docs.server.search import bounds
from kinetis_mcp_docs.server.search import names as name_reading
from kinetis_mcp_docs.server.search.index import SearchIndex
from kinetis_mcp_docs.server.search.names import code_spans, names, words_of
from kinetis_mcp_docs.server.search.page_text import without_link_targets
from kinetis_mcp_docs.server.search.question_words import is_question_word


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Request.cookies", ["requestcookies"]),
        ("use --no-verify or /permissive-", ["noverify", "permissive"]),
        ("HeadersInit and useFetch", ["headersinit", "usefetch"]),
        ("use_fetch, use-fetch", ["usefetch", "usefetch"]),
        ("std::vector<int> and C2065", ["stdvector", "c2065"]),
        ("HSET key field, WRONGTYPE", ["hset", "wrongtype"]),
        ("ESLint.outputFixes(results)", ["eslintoutputfixes"]),
    ],
)
def test_a_name_is_one_term_whichever_way_it_is_written(text: str, found: list[str]) -> None:
    assert names(text) == found


def test_names_are_found_wherever_the_name_pattern_finds_them_in_the_whole_text() -> None:
    # Names are looked for only in the runs of characters that can hold one (not in plain
    # words or numbers): what they find must be what the pattern finds tried at every
    # character, whatever surrounds a name.
    anywhere = re.compile(name_reading._NAME.pattern, re.VERBOSE)
    alphabet = "aAbZz09_$.:/#@->- \n\t(é∂İ١`"
    chosen = random.Random(37)
    for _ in range(20_000):
        text = "".join(chosen.choice(alphabet) for _ in range(chosen.randint(0, 24)))
        assert name_reading.written(text) == anywhere.findall(text), text


def test_words_numbers_and_positions_in_a_log_are_no_names() -> None:
    assert names("  3:15  error  'process' is not defined, 3.75 and 1_000 are numbers") == []


def test_a_name_is_also_read_as_the_words_it_is_made_of() -> None:
    assert words_of("XMLHttpRequest") == "XML Http Request"
    assert words_of("use_async_data") == "use async data"
    assert words_of("--no-verify") == "no verify"


def test_a_page_names_things_in_its_code_spans() -> None:
    page = "Call `useFetch()` or:\n\n```ts\nfenced()\n```\n\nand `a b`.\n"
    assert code_spans(page) == "useFetch()\na b"


def test_a_links_target_and_a_headings_anchor_are_not_the_pages_words() -> None:
    text = (
        "See [the header](/api/headers#set-cookie) and ![a diagram](/img/a.png).\n"
        '[ref]: https://example.org/docs "Title"\n'
        "## Cookies {#set-cookie}\n"
        '<a href="/api/headers#vary">Vary</a>\n'
    )
    kept = without_link_targets(text)
    for pointer in ("/api/headers", "set-cookie", "a.png", "example.org", "#vary"):
        assert pointer not in kept
    for word in ("the header", "a diagram", "## Cookies", "Vary</a>"):
        assert word in kept


@pytest.mark.parametrize("chunk", ["how", "Should", "I", "my", "what's", "(do", "doesn't"])
def test_a_questions_own_words_are_told_by_the_chunk_as_written(chunk: str) -> None:
    assert is_question_word(chunk)


@pytest.mark.parametrize("chunk", ["`this`", "this.value", "install", "config"])
def test_code_and_subjects_are_no_question_words(chunk: str) -> None:
    assert not is_question_word(chunk)


def _rated(word: str) -> float:
    return {"rare": 3.0, "useful": 2.0, "common": 1.0}.get(word, 0.0)


def test_a_query_within_the_bound_is_ranked_as_it_is() -> None:
    query = " ".join(f"w{n}" for n in range(32))
    assert bounds.bounded(query, _rated) == (query, None)


def test_a_query_past_the_bound_keeps_its_most_informative_words_in_its_order() -> None:
    filler = [f"w{n}" for n in range(40)]
    query = " ".join([*filler[:20], "common", "Useful", "rare", *filler[20:], "useful"])
    text, used = bounds.bounded(query, lambda word: _rated(word.lower()))
    assert used == 32
    kept = text.split()
    # The three rated words, as the query first writes them, then the leading unrated ones.
    assert kept == [*filler[:20], "common", "Useful", "rare", *filler[20:29]]


def test_a_query_past_the_bound_keeps_its_words_on_the_lines_it_writes_them_on() -> None:
    lines = [" ".join(f"l{line}w{n}" for n in range(12)) for line in range(4)]
    text, used = bounds.bounded("\n".join(lines), lambda _word: 0.0)
    assert used == 32
    assert text.split("\n") == [lines[0], lines[1], " ".join(lines[2].split()[:8])]


def test_a_query_past_the_bound_keeps_no_more_than_1000_characters() -> None:
    query = " ".join(["x" * 400, "y" * 400, "z" * 400, "short"])
    text, used = bounds.bounded(query, lambda _word: 0.0)
    assert (text, used) == (" ".join(["x" * 400, "y" * 400, "short"]), 3)


def test_a_2_mib_query_costs_what_its_leading_words_do() -> None:
    index = SearchIndex("relevance").changed([("/a", "# Alpha\n\nwords of a page\n")])
    leading = " ".join(f"word{n}" for n in range(bounds.LEADING_WORDS))

    def cost(query: str) -> float:
        began = time.process_time()
        hits = index.search(query, 5)
        spent = time.process_time() - began
        assert hits.terms_used == bounds.MAX_WORDS
        return spent

    short = min(cost(leading + " words") for _ in range(3))
    huge = leading + " " + "more " * (2 * 1024 * 1024 // 5)
    assert min(cost(huge) for _ in range(3)) < 5 * max(short, 1e-3)
