"""Relevance snippets (`search.passages`, over `search.blocks`): the line a hit's snippet
starts on, and what it shows, read as an agent reads them."""

from __future__ import annotations

import random
import time
from array import array
from dataclasses import replace
from typing import Any

import pytest

from kinetis_mcp_docs.server.search import passages
from kinetis_mcp_docs.server.search.page_text import sections
from kinetis_mcp_docs.server.search.passages import (
    PageShape,
    Passage,
    Word,
    fences_of,
    read_page,
    word_pattern,
)
from tests.support.search_pages import PAGES, relevance_index


def _hit(pages: dict[str, str], query: str, url: str) -> Any:
    return next(hit for hit in relevance_index(pages).search(query, 5) if hit.url == url)


_PROSE = "The component renders its content where the page asks for it. " * 4


def test_a_list_item_defines_the_aliases_joined_to_its_first_word() -> None:
    # `- \`placeholder\` | \`fallback\`:` names both words: the snippet starts at that
    # entry, not at a later one naming only `fallback` (which won when only the first word
    # of an entry counted as named).
    page = (
        "## Props\n\n- `placeholder` | `fallback`: what the server renders.\n\n"
        "## Slots\n\n- `#fallback`: what the server renders until the component is mounted.\n"
    )
    passage = _passage(page, {"fallback": Word(1.0, word_pattern(["fallback"]))})
    assert page.splitlines()[passage.line - 1] == "## Props"
    assert "`placeholder` | `fallback`" in passage.snippet


def test_an_html_summary_or_term_defines_the_word_it_opens_with() -> None:
    # Reference pages written in HTML name an option in `<summary><code>PXAT ...` or
    # `<dt>`: the snippet starts at that option's entry, not at an earlier sentence that
    # lists it among others (which won, tied, as the earlier line).
    page = (
        "## Optional arguments\n\n"
        "The expiration options (`EX`, `PX`, `EXAT`, `PXAT`, `KEEPTTL`) are mutually exclusive.\n\n"
        + "Text that holds none of the words asked for.\n\n"
        * 6
        + "<details open><summary><code>EX seconds</code></summary>\n\n"
        "Set the expire time, in seconds.\n\n</details>\n\n"
        "<details open><summary><code>PXAT unix-time-milliseconds</code></summary>\n\n"
        "Set the Unix time at which the key will expire, in milliseconds.\n\n</details>\n\n"
        "<dl><dt>KEEPTTL</dt><dd>Retain the time to live.</dd></dl>\n"
    )
    lines = page.splitlines()
    for word, opening in [("pxat", "<details open><summary><code>PXAT"), ("keepttl", "<dl>")]:
        passage = _passage(page, {word: Word(1.0, word_pattern([word]))})
        assert lines[passage.line - 1].startswith(opening), word


def test_an_options_example_section_does_not_take_the_snippet_from_the_option() -> None:
    # The short example section under an option's heading is the page's best section by
    # BM25 (its heading twice, and the flag again in its code); the option's own heading,
    # of the section it is part of, names the flag as well and comes first: the snippet
    # starts there and shows the option's description, not the example.
    page = (
        "# Command Line Interface\n\n## Options\n\n"
        "#### `--fix`\n\nThis option fixes as many problems as possible, in the files.\n\n"
        "##### `--fix` example\n\n```shell\nnpx lint --fix file.js\n```\n\n"
        "#### `--fix-dry-run`\n\nThis option has the same effect as `--fix`, but the fixes are "
        "not saved to the file system.\n\n"
        "##### `--fix-dry-run` example\n\n"
        "```shell\nnpx lint --stdin --fix-dry-run --format json\n```\n"
    )
    hit = _hit({**PAGES, "/use/cli": page}, "--fix-dry-run", "/use/cli")
    assert page.splitlines()[hit.line - 1] == "#### `--fix-dry-run`"
    assert "not saved to the file system" in hit.snippet


def test_a_snippet_comes_from_the_section_introducing_the_subject_of_sections_scoring_alike() -> (
    None
):
    # Both sections say "lazy component" once; the later is a word shorter, which BM25
    # scores a little higher (2.6%). So close a score tells neither from the other: the
    # snippet starts at the earlier section, which introduces the subject, where the later
    # one, the best by a hair, took it.
    page = (
        "# Components\n\n## Dynamic Imports\n\n"
        "A lazy component is imported only when the page first renders it.\n\n"
        "## Delayed Hydration\n\nA lazy component hydrates once it is visible in the window.\n"
    )
    hit = _hit({**PAGES, "/guide/components": page}, "lazy component", "/guide/components")
    assert page.splitlines()[hit.line - 1] == "## Dynamic Imports"


def test_the_pages_opening_mentioning_the_word_does_not_take_the_snippet_from_its_section() -> None:
    # The opening text says what the whole page is about; the section telling how to use the
    # helper is the page's best: the snippet starts there, not at the opening's mention
    # (which won as the earlier of two lines weighing alike, the opening counted as the
    # section's parent).
    page = (
        "This page explains how to use the `globalIgnores()` helper.\n\n"
        "## Ignore Files\n\nPass patterns to the `globalIgnores()` helper in your config: "
        "`globalIgnores()` ignores them everywhere.\n\n"
        "## Name the Config\n\nEach configuration object may have a name.\n"
    )
    hit = _hit({**PAGES, "/use/ignore": page}, "globalIgnores()", "/use/ignore")
    assert page.splitlines()[hit.line - 1] == "## Ignore Files"
    assert "Pass patterns" in hit.snippet


def _passage(page: str, words: dict[str, Word]) -> Any:
    found = sections(page)
    data = page.encode()
    shape = PageShape(
        tuple(section.line for section in found),
        tuple(section.offset for section in found),
        page.count("\n") + 1,
    )
    return read_page(data, shape, data.lower(), words)


def test_a_heading_naming_the_word_outweighs_an_entry_naming_it() -> None:
    # A heading names what its whole section is about, a list item one entry: of a heading
    # and an earlier entry naming the same word, in sections scoring alike but for the word
    # after the heading, the heading is where the snippet starts (at equal weights the
    # entry's section, the best by BM25, won).
    filler = "Text that holds none of the words asked for.\n\n" * 12
    page = "## Events\n\n- `slot`: one entry.\n\n## Slot\n\nThe extra content.\n\n" + filler
    words = {
        "slot": Word(1.0, word_pattern(["slot"])),
        "extra": Word(1.5, word_pattern(["extra"])),
    }
    passage = _passage(page, words)
    assert page.splitlines()[passage.line - 1] == "## Slot"
    assert passage.snippet.startswith("## Slot The extra content.")


def test_a_relevance_snippet_shows_a_links_text_not_its_address() -> None:
    page = (
        "# Data Fetching\n\n" + _PROSE + "\n\n## Options\n\n"
        "[`useAsyncData`](/docs/4.x/api/composables/use-async-data) and "
        "[`useFetch`](/docs/4.x/api/composables/use-fetch) accept the same options, and "
        "![a diagram](/images/options.png) shows them.\n\n### Lazy\n\nNavigation does not wait.\n"
    )
    hit = _hit({**PAGES, "/guide/data-fetching": page}, "useFetch options", "/guide/data-fetching")
    assert hit.line is not None
    assert page.splitlines()[hit.line - 1] == "## Options"
    assert hit.snippet == (
        "## Options `useAsyncData` and `useFetch` accept the same options, and a diagram "
        "shows them. ### Lazy Navigation does not wait."
    )
    assert len(hit.snippet) <= 240


def _page_with(line: str, frontmatter: str = "") -> str:
    return f"{frontmatter}# Odd\n\nalpha\n{line}\n"


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param(_page_with("[" * 100_000 + "](x"), id="brackets"),
        pytest.param(_page_with("[](" * 33_000), id="empty links"),
        pytest.param(_page_with("[a](" + "x" * 100_000), id="an unclosed address"),
        pytest.param(_page_with("# " + "# " * 50_000 + "alpha"), id="a heading of hashes"),
        pytest.param(_page_with("-" + " " * 100_000 + ": alpha"), id="a list item of blanks"),
        pytest.param(
            _page_with("", "---\ndescription: a" + " " * 100_000 + "b\n---\n"),
            id="a frontmatter value of blanks",
        ),
    ],
)
def test_a_page_with_a_long_odd_line_costs_what_an_ordinary_long_line_does(odd: str) -> None:
    # Each of these once cost a line's length squared: showing links as their text tried
    # every `[` against the rest of the line (20,000 of them, 4 s a search), a heading's
    # closing `#`s and a frontmatter value's closing blanks were looked for after every
    # character of it (8,000, 4 s to index), and a list item's marker and the blanks after
    # it could split them every way (4,000, 0.3 s a search).
    def cost(page: str) -> float:
        began = time.process_time()
        index = relevance_index({**PAGES, "/guide/odd": page})
        (hit,) = index.search("alpha", 5)
        spent = time.process_time() - began
        assert hit.url == "/guide/odd"
        return spent

    ordinary = min(cost(_page_with("word " * 20_000)) for _ in range(3))
    assert min(cost(odd) for _ in range(3)) < 20 * max(ordinary, 1e-3)


def test_a_snippet_starts_at_the_prose_that_explains_the_words_not_the_code_that_uses_them() -> (
    None
):
    code = "const cache = createCache({ maxAge: 60, staleWhileRevalidate: true })\n" * 4
    page = (
        f"# Cache\n\n```js\n{code}```\n\nThe `maxAge` option sets how long an entry stays "
        "fresh, in seconds; with staleWhileRevalidate an old entry is served while a new one is "
        "fetched.\n"
    )
    words = {
        "maxage": Word(2.0, word_pattern(["maxage"])),
        "stalewhilerevalidate": Word(2.0, word_pattern(["stalewhilerevalidate"])),
    }
    passage = _passage(page, words)
    assert page.splitlines()[passage.line - 1].startswith("The `maxAge` option")


# The words of a query about `KEA`, the setting's value, and "notify", a word of its name.
_KEA_WORDS = {
    "kea": Word(2.0, word_pattern(["kea"])),
    "notify": Word(1.0, word_pattern(["notify"])),
}


def test_a_line_indented_as_code_weighs_as_code_not_as_prose() -> None:
    # Four spaces after a blank line make a Markdown code block, as a fence does: the
    # command using the words weighs half, and the sentence explaining them, later, starts
    # the snippet (at equal weights the command, the earlier line, won).
    filler = "Text that holds none of the words asked for.\n\n"
    page = (
        "# Notifications\n\n" + filler * 3 + "Watch them all:\n\n"
        "    $ cli config set notify-events KEA\n\n"
        + filler * 6
        + "The string `KEA` sets every class of notify-events.\n"
    )
    passage = _passage(page, _KEA_WORDS)
    assert page.splitlines()[passage.line - 1].startswith("The string `KEA`")


def test_a_line_indented_under_a_list_item_continues_it_and_is_no_code() -> None:
    filler = "Text that holds none of the words asked for.\n\n"
    page = (
        "# Notifications\n\n" + filler * 6 + "- Watch them all:\n\n"
        "    the notify-events setting, set to KEA, sends every class.\n\n"
        + filler * 6
        + "The string `KEA` sets every class of notify-events.\n"
    )
    passage = _passage(page, _KEA_WORDS)
    assert page.splitlines()[passage.line - 1].startswith("    the notify-events setting")


@pytest.mark.parametrize("fenced", [True, False])
def test_a_snippet_on_a_line_of_code_starts_at_the_sentence_introducing_its_block(
    fenced: bool,
) -> None:
    # An error message is quoted in an example, after the sentence that says when it comes:
    # the snippet starts at that sentence, and still shows the message.
    example = "Client: HELLO 4\nServer: -NOPROTO sorry, this protocol version is not supported.\n"
    block = (
        f"```\n{example}```\n"
        if fenced
        else "".join(f"    {line}\n" for line in example.splitlines())
    )
    filler = "Text that holds none of the words asked for.\n\n"
    page = (
        "# Protocol\n\n"
        + filler * 6
        + "A server that does not support the version asked for replies with an error. "
        "Example:\n\n" + block + "\n" + filler * 6
    )
    words = {
        "noproto": Word(2.0, word_pattern(["noproto"])),
        "sorri": Word(1.0, word_pattern(["sorry", "sorri"])),
    }
    passage = _passage(page, words)
    assert page.splitlines()[passage.line - 1].startswith("A server that does not support")
    assert "-NOPROTO sorry" in passage.snippet


@pytest.mark.parametrize("opening", ["", "- ", "::: warning\n"])
def test_a_snippet_starts_where_the_paragraph_of_its_line_starts(opening: str) -> None:
    # A paragraph wrapped at 80 columns: the words are on its third line, and the snippet
    # starts at its first (a list item's at its marker; after a container's tag, not at
    # it), so that it shows the sentence before, which says what they are about.
    filler = "Text that holds none of the words asked for.\n\n"
    paragraph = (
        "If the script has already performed write operations, it can not be killed\n"
        "this way, since that would break the atomicity a script is promised.\n"
        "In such a case only SHUTDOWN NOSAVE can stop it, killing the server.\n"
    )
    page = "# Scripts\n\n" + filler * 6 + opening + paragraph + "\n" + filler * 6
    passage = _passage(page, {"nosave": Word(2.0, word_pattern(["nosave"]))})
    marker = "- " if opening == "- " else ""
    first = f"{marker}If the script has already performed write operations"
    assert page.splitlines()[passage.line - 1].startswith(first)


def test_a_heading_is_not_shown_above_its_line_over_another_entry() -> None:
    # `## Optional arguments` is near enough to be shown above the third option, but the
    # two options between would then stand first in the snippet as if they answered: it
    # starts at the option asked for. Over plain text the heading is still shown.
    filler = "Text that holds none of the words asked for.\n\n"
    entries = (
        "<details open><summary><code>NOMKSTREAM</code></summary>\n\nNo new stream.\n\n"
        "</details>\n\n"
        "- `MAXLEN threshold`: trims the stream.\n\n"
        "- `IDMPAUTO producer-id`: generates an idempotent id for the producer.\n"
    )
    page = "# XADD\n\n" + filler * 6 + "## Optional arguments\n\n" + entries + "\n" + filler * 6
    words = {"idmpauto": Word(2.0, word_pattern(["idmpauto"]))}
    passage = _passage(page, words)
    assert page.splitlines()[passage.line - 1].startswith("- `IDMPAUTO producer-id`")
    plain = page.replace("- `MAXLEN threshold`: trims the stream.", "The stream is trimmed.")
    plain = plain.replace("<details open><summary><code>NOMKSTREAM</code></summary>", "")
    passage = _passage(plain, words)
    assert plain.splitlines()[passage.line - 1] == "## Optional arguments"


def test_a_snippet_shows_a_links_text_not_an_address_written_with_template_tags() -> None:
    page = (
        "# Lists\n\n" + _PROSE + "\n\n## Blocking\n\n"
        'Redis implements [`BRPOP`]({{< relref "/commands/brpop" >}}) and '
        "[`BLPOP`]({{ site.baseurl }}/commands/blpop), which block while the list is empty, "
        "and [`BLMOVE`]({% link commands/blmove.md %}).\n"
    )
    passage = _passage(page, {"brpop": Word(2.0, word_pattern(["brpop"]))})
    assert passage.snippet.startswith(
        "## Blocking Redis implements `BRPOP` and `BLPOP`, which block while the list is "
        "empty, and `BLMOVE`."
    )


def test_a_snippet_does_not_start_at_a_line_for_holding_a_questions_own_words() -> None:
    # "how do I drop the cache": two lines say how the cache is dropped; the later one
    # also says "do" and "I", rare in documentation, which outweighed the earlier one's
    # answer. A question's own words tell no line from another: the earlier line shows.
    filler = "Text that holds none of the words asked for.\n\n" * 6
    page = (
        "# Storage\n\n"
        + filler
        + "Run `clean` to drop the cache of rendered pages.\n\n"
        + filler
        + "Do I lose data when the cache is dropped? No, pages render again.\n\n"
        + filler
    )
    hit = _hit({**PAGES, "/guide/storage": page}, "how do I drop the cache", "/guide/storage")
    assert "Run `clean` to drop the cache" in hit.snippet
    assert "Do I lose data" not in hit.snippet


def test_a_name_of_several_words_shows_where_the_page_writes_it_whole() -> None:
    # `meta.defaultOptions`: an entry naming a plugin's `defaultOptions`, which it defines,
    # outweighed the line writing the name whole on a page saying `meta` everywhere. That
    # line is about the name the query writes: the snippet shows it.
    filler = "Text that holds none of the words asked for.\n\n" * 3
    page = (
        "# Custom Rules\n\n"
        + "".join(
            f"The rule's `meta.{key}` is read when it loads.\n\n"
            for key in ("type", "docs", "schema", "messages", "fixable", "deprecated")
        )
        + "## Plugin\n\n- `defaultOptions`: the default options of a plugin's processors.\n\n"
        + filler
        + "## Rule settings\n\n"
        + "Rules may set `meta.defaultOptions` to values for any of their options.\n\n"
        + filler
    )
    hit = _hit(
        {**PAGES, "/extend/custom-rules": page}, "meta.defaultOptions", "/extend/custom-rules"
    )
    assert "Rules may set `meta.defaultOptions`" in hit.snippet
    assert "processors" not in hit.snippet


def test_a_line_bounded_by_its_opening_is_chosen_as_scoring_every_line_chooses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lines are scored most promising first, each bounded by what its first byte lets
    # it define and by its section: the line chosen is the one scoring every line chooses
    # (a bound too large prunes nothing), over random pages of headings, entries, tables,
    # code and prose.
    rng = random.Random(37)
    vocabulary = ["lazy", "fetch", "option", "cache", "route", "key", "server", "the"]
    openings = ["", "", "", "# ", "## ", "### ", "- ", "* ", "1. ", "| ", "<dt>", "`", "_", "  "]

    def line() -> str:
        words = rng.choices(vocabulary, k=rng.randint(1, 6))
        if rng.random() < 0.3:
            words[0] = f"`{words[0]}`"
        return rng.choice(openings) + " ".join(words)

    def page() -> str:
        lines = ["# Title", ""]
        for _ in range(rng.randint(5, 40)):
            kind = rng.random()
            if kind < 0.1:
                lines += ["```js", line(), line(), "```"]
            elif kind < 0.15:
                lines += ["", "    " + line()]
            else:
                lines.append(line())
            if rng.random() < 0.3:
                lines.append("")
        return "\n".join(lines) + "\n"

    def read(text: str, words: dict[str, Word], best: int) -> Passage:
        data = text.encode()
        found = sections(text, text)
        shape = PageShape(
            tuple(section.line for section in found),
            tuple(len(text[: section.offset].encode()) for section in found),
            text.count("\n") + 1,
            tuple(section.level for section in found),
        )
        return read_page(data, shape, data.lower(), words, best_section=best)

    for _ in range(300):
        text = page()
        chosen = rng.sample(vocabulary, rng.randint(1, 4))
        words = {word: Word(rng.uniform(0.5, 5.0), word_pattern([word])) for word in chosen}
        best = rng.randint(-1, 4)
        bounded = read(text, words, best)
        with monkeypatch.context() as patched:
            patched.setattr(passages, "_most_named", lambda *_: 1e9)
            assert read(text, words, best) == bounded


def test_a_page_keeping_its_fences_reads_as_one_that_does_not() -> None:
    # A long page keeps where its fences are (`PageShape.fences`): the passage read with
    # them is the one read finding them anew, over random pages of fences of both kinds,
    # indented or not, code, headings and prose.
    rng = random.Random(38)
    vocabulary = ["lazy", "fetch", "option", "cache", "route", "key", "server", "the"]
    openings = ["", "", "# ", "## ", "- ", "1. ", "    ", "  ```", "```", "~~~", " ~~~~"]
    for _ in range(300):
        lines = ["---", "title: T", "---", "# Title"]
        for _ in range(rng.randint(3, 40)):
            said = " ".join(rng.choices(vocabulary, k=rng.randint(0, 5)))
            lines.append(rng.choice(openings) + said)
        text = "\n".join(lines) + "\n"
        data = text.encode()
        found = sections(text)
        shape = PageShape(
            tuple(section.line for section in found),
            tuple(section.offset for section in found),
            text.count("\n") + 1,
            tuple(section.level for section in found),
        )
        kept = replace(shape, fences=array("I", fences_of(data, shape)))
        chosen = rng.sample(vocabulary, rng.randint(1, 3))
        words = {word: Word(rng.uniform(0.5, 5.0), word_pattern([word])) for word in chosen}
        best = rng.randint(-1, 3)
        assert read_page(data, kept, data.lower(), words, best_section=best) == read_page(
            data, shape, data.lower(), words, best_section=best
        )
