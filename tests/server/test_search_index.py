"""The search behind search_docs: the contract's scoring, order, titles and snippets."""

from __future__ import annotations

import random
import string

import pytest

from kinetis_mcp_docs.server.search import bodies
from kinetis_mcp_docs.server.search import index as search_index
from kinetis_mcp_docs.server.search.contract import ContractScores
from kinetis_mcp_docs.server.search.index import SNIPPET_LENGTH, SearchIndex, split_frontmatter
from kinetis_mcp_docs.server.search.page_text import around, around_known, clip

pytestmark = pytest.mark.interpreter  # Tantivy's release differs by interpreter (0.26 on 3.10)


def _index(pages: dict[str, str]) -> SearchIndex:
    return SearchIndex().changed(pages.items())


def _scores(index: SearchIndex, query: str, limit: int = 20) -> list[tuple[str, float]]:
    return [(hit.url, hit.score) for hit in index.search(query, limit)]


PAGES = {
    "/alpha": "# Alpha Guide\n\nnothing else\n",
    "/beta": "# Beta\n\nmentions alpha in the body\n",
    "/gamma/alpha-notes": "# Gamma\n\nno match in the body\n",
    "/delta": "# Delta\n\nunrelated\n",
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # +4 title, +1 title/body/url: a title hit is 5, a body or url hit alone is 1.
        ("alpha", [("/alpha", 5), ("/beta", 1), ("/gamma/alpha-notes", 1)]),
        ("ALPHA", [("/alpha", 5), ("/beta", 1), ("/gamma/alpha-notes", 1)]),
        ("alpha guide", [("/alpha", 10), ("/beta", 1), ("/gamma/alpha-notes", 1)]),
        ("alpha body", [("/alpha", 5), ("/beta", 2), ("/gamma/alpha-notes", 2)]),
        ("zzz", []),
        ("lph", [("/alpha", 5), ("/beta", 1), ("/gamma/alpha-notes", 1)]),
        ("alpha alpha", [("/alpha", 10), ("/beta", 2), ("/gamma/alpha-notes", 2)]),
        ("-notes", [("/gamma/alpha-notes", 1)]),
        ("in the", [("/beta", 2), ("/gamma/alpha-notes", 2), ("/alpha", 1)]),
    ],
)
def test_scoring_is_the_contracts(query: str, expected: list[tuple[str, int]]) -> None:
    # The scores and their order are the contract's; equal scores come in relevance order.
    found = _scores(_index(PAGES), query)
    assert [score for _, score in found] == [score for _, score in expected]
    assert sorted(found) == sorted(expected)


def test_results_are_cut_to_the_limit_best_first() -> None:
    (best, best_score), (other, other_score) = _scores(_index(PAGES), "alpha", 2)
    assert (best, best_score, other_score) == ("/alpha", 5, 1)
    assert other in {"/beta", "/gamma/alpha-notes"}


def test_equal_scores_come_in_relevance_order_then_by_url() -> None:
    pages = {
        "/a": "# A\n\nmentions apple once among many other words of no interest at all\n",
        "/b": "# B\n\napple apple apple\n",
        "/c": "# C\n\napple pie\n",
        "/d": "# D\n\napple pie\n",
    }
    # Every page scores 1; BM25 puts the page most about apples first, equal ones by URL.
    assert _scores(_index(pages), "apple") == [("/b", 1), ("/c", 1), ("/d", 1), ("/a", 1)]


def test_a_tie_is_cut_as_sorting_it_all_by_relevance_then_url_would_cut_it() -> None:
    # Of a large tie only some pages have a relevance score, as Tantivy read only the best;
    # a score of 0 or below sorts among the unscored pages.
    rng = random.Random(5)
    for _ in range(500):
        group = rng.sample(range(200), rng.randint(2, 120))
        rank = {slot: order for order, slot in enumerate(rng.sample(group, len(group)))}
        relevance = {
            slot: rng.choice([rng.random(), 1.0, 0.5, 0.0, -0.5]) if rng.random() < 0.05 else 1.0
            for slot in rng.sample(group, rng.randint(0, min(40, len(group))))
        }
        if rng.random() < 0.5:
            relevance = {slot: score for slot, score in relevance.items() if score > 0}
        count = rng.randint(1, 25)
        plain = sorted(group, key=lambda slot: (-relevance.get(slot, 0.0), rank[slot]))
        assert search_index._first_in_order(group, relevance, rank, count) == plain[:count]


def test_the_title_is_the_frontmatter_title_else_the_first_heading_else_the_url() -> None:
    index = _index(
        {
            "/a": "---\ntitle: 'From Frontmatter'\n---\n# Heading\nword\n",
            "/b": "intro\n```\n# not a heading\n```\n# Real Heading\nword\n",
            "/c": "## Only a subheading\nword\n",
        }
    )
    titles = {hit.url: hit.title for hit in index.search("word", 5)}
    assert titles == {"/a": "From Frontmatter", "/b": "Real Heading", "/c": "/c"}


def test_the_snippet_shows_the_first_body_occurrence_within_240_code_points() -> None:
    filler = "lorem ipsum dolor " * 40
    text = f"# Page\n\n{filler}\nThe needle is here 😀 and then {filler}\n"
    (hit,) = _index({"/p": text}).search("NEEDLE", 1)
    assert "needle is here 😀" in hit.snippet
    assert len(hit.snippet) <= SNIPPET_LENGTH
    assert "\n" not in hit.snippet
    assert hit.snippet.startswith("…")
    assert hit.snippet.endswith("…")


def test_the_snippet_falls_back_to_the_description_then_the_first_paragraph() -> None:
    index = _index(
        {
            "/described": (
                "---\ntitle: Topic\ndescription: A short summary.\n---\n# Topic\n\nBody.\n"
            ),
            "/plain": "# Topic\n\nFirst paragraph\nof prose.\n\nSecond.\n",
        }
    )
    snippets = {hit.url: hit.snippet for hit in index.search("topic", 5)}
    assert snippets == {"/described": "A short summary.", "/plain": "First paragraph of prose."}


@pytest.mark.parametrize("marker", [">", "|", ">-", "|+", ">2", "> # folded"])
def test_a_title_written_as_a_block_scalar_is_the_block_on_one_line(marker: str) -> None:
    text = f"---\ntitle: {marker}\n  Getting\n  started\n\nlayout: doc\n---\n# Heading\nword\n"
    (hit,) = _index({"/a": text}).search("word", 1)
    assert hit.title == "Getting started"


def test_an_empty_block_scalar_title_falls_back_to_the_heading() -> None:
    (hit,) = _index({"/a": "---\ntitle: >\nlayout: doc\n---\n# Heading\nword\n"}).search("word", 1)
    assert hit.title == "Heading"


@pytest.mark.parametrize("before", ["", "İ" * 200, "İstanbul " * 100])
def test_the_snippet_shows_the_match_when_lowercasing_lengthens_the_text(before: str) -> None:
    filler = "lorem ipsum " * 20
    text = f"# Page\n\n{before}{filler}the needle sits here and then more {filler}\n"
    (hit,) = _index({"/p": text}).search("needle", 1)
    assert "the needle sits here" in hit.snippet
    assert len(hit.snippet) <= SNIPPET_LENGTH


def test_frontmatter_is_split_from_the_body() -> None:
    fields, body = split_frontmatter('---\ntitle: "T: x"\nlayout: doc\n---\n# H\n')
    assert fields == {"title": "T: x", "layout": "doc"}
    assert body == "# H\n"
    assert split_frontmatter("--- not frontmatter\n") == ({}, "--- not frontmatter\n")


def test_replacing_and_removing_pages_makes_a_new_snapshot_and_leaves_the_old_one_be() -> None:
    first = _index({"/a": "# A\nold words\n", "/b": "# B\nkept\n"})
    second = first.changed([("/a", "# A\nnew words\n")])
    assert _scores(second, "old") == []
    assert _scores(second, "new") == [("/a", 1)]
    assert _scores(first, "old") == [("/a", 1)]  # a search on the old snapshot is unchanged
    third = second.changed([("/a", None)])
    assert _scores(third, "new") == []
    assert _scores(third, "kept") == [("/b", 1)]
    assert len(third) == 1
    assert len(second) == 2


def test_a_snapshot_changed_without_new_words_still_finds_what_it_holds() -> None:
    index = _index({"/a": "# A\nalpha beta\n", "/b": "# B\nbeta\n"})
    index = index.changed([("/b", "# B\nalpha\n")])  # no word comes or goes
    assert sorted(_scores(index, "alpha")) == [("/a", 1), ("/b", 1)]
    assert _scores(index, "beta") == [("/a", 1)]


@pytest.mark.parametrize("most_grams", [2, 8])
def test_the_word_index_finds_exactly_what_a_plain_scan_finds(
    monkeypatch: pytest.MonkeyPatch, most_grams: int
) -> None:
    # Of a token's runs of three characters, 2 or 8 are asked for: the pages holding them
    # are checked for the token either way.
    monkeypatch.setattr(bodies, "MOST_GRAMS", most_grams)
    rng = random.Random(8)
    alphabet = string.ascii_lowercase[:6] + "é-_. "
    pages = {
        f"/p{n}": "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        for n in range(60)
    }
    index = _index(pages)
    for _ in range(300):
        token = "".join(rng.choice(alphabet.strip()) for _ in range(rng.randint(1, 6)))
        found = {hit.url for hit in index.search(token, 100)}
        scanned = {
            url for url, text in pages.items() if token in text.lower() or token in url.lower()
        }
        assert found == scanned, token


@pytest.mark.parametrize("remembered", [0, 1024])
def test_pages_added_replaced_and_removed_are_found_exactly(
    monkeypatch: pytest.MonkeyPatch, remembered: int
) -> None:
    # Removals free slots, the slots they free are taken again by later pages, and a
    # snapshot remembers no token's pages, or many.
    monkeypatch.setattr(bodies, "REMEMBERED", remembered)
    rng = random.Random(5)
    alphabet = string.ascii_lowercase[:5] + "é-.\t "  # a tab: a blank no chunk holds
    pages: dict[str, str] = {}
    index = SearchIndex()
    for _ in range(30):
        updates: list[tuple[str, str | None]] = []
        for _ in range(rng.randint(1, 9)):
            url = f"/p{rng.randrange(24)}"
            removed = url in pages and rng.random() < 0.4
            text = None if removed else "".join(rng.choice(alphabet) for _ in range(80))
            updates.append((url, text))
            if text is None:
                pages.pop(url)
            else:
                pages[url] = text
        index = index.changed(updates)
        for _ in range(20):
            token = "".join(rng.choice(alphabet.strip()) for _ in range(rng.randint(1, 6)))
            found = {hit.url for hit in index.search(token, 100)}
            scanned = {url for url, text in pages.items() if token in text or token in url}
            assert found == scanned, token


def _contract_score(title: str, url: str, body: str, tokens: list[str]) -> int:
    """The contract's score of a page (its title, URL and body lowercased) written as
    plainly as it reads, for comparison."""
    score = 0
    for token in tokens:
        if token in title:
            score += 4
        if token in title or token in body or token in url:
            score += 1
    return score


def _contract_scores(pages: dict[str, str], query: str) -> dict[str, int]:
    """Every page's contract score (`_contract_score`), the pages scoring zero left out."""
    scores: dict[str, int] = {}
    for url, text in pages.items():
        fields, body = split_frontmatter(text)
        title = (fields.get("title") or url).lower()
        score = _contract_score(title, url.lower(), body.lower(), query.lower().split())
        if score:
            scores[url] = score
    return scores


def test_every_query_scores_as_the_contract_reads_and_in_its_order() -> None:
    rng = random.Random(21)
    alphabet = string.ascii_lowercase[:5] + "É-_.:"
    pages = {
        f"/p{n}/{rng.choice('abc')}": "---\ntitle: "
        + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        + "\n---\n"
        + "".join(rng.choice(alphabet + "  \n") for _ in range(rng.randint(0, 400)))
        for n in range(80)
    }
    index = _index(pages)
    for _ in range(200):
        query = " ".join(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(1, 6))
        )
        expected = _contract_scores(pages, query)
        found = _scores(index, query, 20)
        # The best 20 by the contract, in its order; equal scores may come in any order.
        assert [score for _, score in found] == sorted(expected.values(), reverse=True)[:20]
        assert all(expected[url] == score for url, score in found), query


def _plain_snippet(text: str, tokens: list[str]) -> str | None:
    """The contract's snippet written as plainly as it reads: around the first occurrence of
    a token in the lowercased body, its first `# ` title line outside fences left out."""
    body = split_frontmatter(text)[1]
    fenced, start = False, 0
    for line in body.splitlines(keepends=True):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            body = body[:start] + body[start + len(line) :]
            break
        start += len(line)
    folded = body.lower()
    found = [position for position in map(folded.find, tokens) if position >= 0]
    if not found:
        return None
    first, count, position = min(found), 0, 0
    for char in body:  # the unfolded character at `first`
        count += len(char.lower())
        if count > first:
            break
        position += 1
    return around(body, position)


def test_a_snippet_read_from_a_bodys_beginning_is_the_bodys_or_none() -> None:
    # Words, runs of whitespace and long words, cut anywhere: what the beginning of a body
    # settles is the snippet of the whole body, whatever follows.
    rng = random.Random(17)
    pieces = ["w", "word", "a" * 30, " ", "  ", "\n", " \n \n", "\t", "é"]
    settled = 0
    for _ in range(300):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 400)))
        position = rng.randrange(len(body))
        for cut in range(position, len(body) + 1):
            known = around_known(body[:cut], position)
            if known is not None:
                settled += 1
                assert known == around(body, position), (body, position, cut)
        assert around_known(body, position) is not None or len(body) < position + 960
    assert settled > 10_000  # most beginnings long enough settle it


def test_a_clip_is_the_whole_text_collapsed_then_cut_at_a_word() -> None:
    rng = random.Random(29)
    pieces = ["w", "word", "a" * 30, " ", " " * 50, "\n", " \n \n", "\t", "é"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 300)))
        length = rng.choice([10, 239, 240])
        flat = " ".join(text.split())
        if len(flat) <= length:
            assert clip(text, length) == flat
            continue
        cut = flat[: length - 1]
        if cut.rfind(" ") > length // 2:
            cut = cut[: cut.rfind(" ")]
        assert clip(text, length) == cut.rstrip() + "…"


# Characters of two, three and four bytes of UTF-8.
_WIDE = ["é", "\u2014", "\U0001f600"]


@pytest.mark.parametrize(
    "lowering_to_ascii",
    [["İ", "\u212a"], []],
    ids=["pages-with-characters-lowering-to-ascii", "pages-without"],
)
def test_the_snippet_is_around_the_first_occurrence_a_plain_reading_finds(
    lowering_to_ascii: list[str],
) -> None:
    # Line breaks of every kind, fences and titles, characters that lowercase longer or by
    # context (a final sigma), and pages long enough to be read in several blocks. Without
    # 'İ' and the Kelvin sign, an ASCII token is looked for in a page's UTF-8.
    rng = random.Random(23)
    pieces = [
        "ab", "ba", "c", "Σ", "ΑΣ ", "x", " ", "\n", "\r\n", "\r", "\x0c", "\u2028",
        "\n```\n", "\n~~~\n", "\n# ", "# ", "\n## ", "Ab", "C#", "a\u0301",
        *_WIDE, *lowering_to_ascii,
    ]  # fmt: skip
    pages = {}
    for n in range(120):
        words = [rng.choice(pieces) for _ in range(rng.choice([5, 60, 3000]))]
        head = "---\ntitle: T\n---\n" if n % 3 else ""
        pages[f"/p{n}"] = head + "".join(words)
    # One match, far in, on each side of where a block of 4,096 characters would end.
    for length in range(4090, 4098):
        for n, match in enumerate(["ab", "ΑΣ ", "İab", "cΣ\n", "Σb"]):
            pages[f"/deep{length}-{n}"] = "y" * length + match + "y" * length
    # A match, a title line, or the frontmatter's end, far into a page.
    line = "y" * 49 + "\n"
    for lines in range(150, 176, 2):
        pages[f"/late{lines}"] = line * lines + "ab cΣ\n" + line * 30
        pages[f"/late-title{lines}"] = line * lines + "# ab title\n" + line * 3 + "ab\n"
        pages[f"/late-front{lines}"] = "---\ntitle: T\n" + "k: v\n" * (lines * 10) + "---\nab\n"
        pages[f"/near{lines}"] = line * (lines - 20) + "ab " + line * 40
    pages["/wide"] = "a" + "é" * 5000 + " ab\n"
    # A match near where a compressed page's opening ends (4,096 bytes into the body, then
    # to a line's end), followed by words, or by whitespace that a snippet collapses.
    for before in range(3300, 4200, 37):
        for after in ("qz word" * 200, "qz" + " \n" * 600 + "end"):
            for title in ("", "# Title\n"):
                text = f"{title}{'y' * 59}\n" * (before // 60) + after
                pages[f"/opening{before}-{len(after)}-{len(title)}"] = text
    # Characters of up to four bytes just within and just past the 60 characters a snippet
    # shows before its match and the 960 it reads after.
    for count in range(55, 66):
        for wide in _WIDE:
            pages[f"/wide-before{count}-{wide!r}"] = f"{wide} " * count + "qz " + "é " * 600
            # A character then seven spaces: 240 characters shown read all of the 960.
            pages[f"/wide-after{count}-{wide!r}"] = "qz" + (wide + " " * 7) * (60 + 2 * count)
    index = _index(pages)
    # Greek small sigma, final sigma and alpha.
    sigma, final_sigma, alpha = "\u03c3", "\u03c2", "\u03b1"
    straddling = ["ab", sigma, final_sigma, "i̇a", "c" + sigma, sigma + "b", final_sigma + "b"]
    straddling += [alpha + final_sigma, alpha + sigma]
    drawn = "abci̇x" + sigma + final_sigma
    queries = [[token] for token in straddling] + [
        ["".join(rng.choice(drawn) for _ in range(rng.randint(1, 3)))] for _ in range(150)
    ]
    # ASCII tokens, which 'İ' and the Kelvin sign hold once lowercased.
    queries += [["i"], ["k"], ["ab", "x"], ["k", "ba"], ["c#", "y"], ["a", "ab"], ["qz"]]
    queries += [
        ["".join(rng.choice("abckix#") for _ in range(rng.randint(1, 3))) for _ in range(2)]
        for _ in range(80)
    ]
    for tokens in queries:
        for hit in index.search(" ".join(tokens), 20 if "qz" not in tokens else len(pages)):
            expected = _plain_snippet(pages[hit.url], tokens)
            if expected is not None:
                assert hit.snippet == expected, (hit.url, tokens)


def test_a_token_of_two_characters_of_any_kind_is_found_exactly() -> None:
    # Two characters are looked for with a regular expression over the index's runs: every
    # mark it could take for syntax is a literal there.
    marks = string.punctuation + "é«»"
    pages = {
        f"/p{n}": " ".join(a + b for a in marks[n::7] for b in marks[(n * 3) % 5 :: 9])
        for n in range(7)
    }
    index = _index(pages)
    for a in marks:
        for b in marks[::3]:
            token = a + b
            found = {hit.url for hit in index.search(token, 100)}
            scanned = {url for url, text in pages.items() if token in text or token in url}
            assert found == scanned, token


def _plain_groups(
    pages: dict[int, tuple[str, str, str]], query: str, limit: int
) -> list[tuple[int, list[int]]]:
    """`ContractScores.ranked` written as plainly as it reads: every page scored, then the
    groups of equal score, best first, until they hold `limit` pages."""
    tokens = query.lower().split()
    scores: dict[int, int] = {}
    for slot, (title, url, body) in pages.items():
        score = _contract_score(title, url, body, tokens)
        if score:
            scores[slot] = score
    groups: list[tuple[int, list[int]]] = []
    for score in sorted(set(scores.values()), reverse=True):
        if sum(len(slots) for _, slots in groups) >= limit:
            break
        groups.append((score, sorted(slot for slot, held in scores.items() if held == score)))
    return groups


@pytest.mark.parametrize("remembered", [0, 1024])
def test_groups_read_only_the_pages_they_need_and_are_the_plain_scans(
    monkeypatch: pytest.MonkeyPatch, remembered: int
) -> None:
    # Long tokens over few letters: most pages holding a token's runs of three characters do
    # not hold it, so the count a page starts from is often too high, and taken off only when
    # a group reaches it; with small limits, most candidates are never read, and what a
    # search read is remembered with the token (or nothing is) for the larger limits after.
    # Pages are added, replaced and removed between snapshots.
    monkeypatch.setattr(bodies, "REMEMBERED", remembered)
    rng = random.Random(37)
    letters = "abcd"

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(letters + "  ") for _ in range(rng.randint(low, high)))

    pages: dict[int, tuple[str, str, str]] = {}
    scores = ContractScores()
    for _ in range(12):
        scores = scores.copy()
        for _ in range(rng.randint(1, 12)):
            slot = rng.randrange(40)
            if slot in pages:
                scores.remove(slot)
                pages.pop(slot)
            if rng.random() < 0.8:
                page = (text(0, 12), f"/{text(0, 6).replace(' ', '')}", text(0, 200))
                pages[slot] = page
                scores.add(slot, *page)
        scores.settle()
        for _ in range(40):
            query = " ".join(
                "".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
                for _ in range(rng.randint(1, 5))
            )
            query += f" {query.split()[0]}" * rng.randint(0, 1)  # a token counted twice
            for limit in (1, 3, 10, 100):
                assert scores.ranked(query, limit) == _plain_groups(pages, query, limit), query
