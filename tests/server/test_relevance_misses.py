"""The relevance ranking's classes of misses (issue 37), each on a small tree of its own:
names kept whole, links not counted as a page's words, a question's own words, one title
word, a pasted paragraph, a question's one rare word, and a page's opening sentence."""

from __future__ import annotations

from tests.support.search_pages import relevance_index

PROSE = "Pages render on the server first and then hydrate in the browser. " * 3


def _first(pages: dict[str, str], query: str) -> str:
    return relevance_index(pages).search(query, 5)[0].url


def test_an_api_reference_page_ranks_first_for_its_own_name_not_pages_about_its_words() -> None:
    # Stemmed, `Request.cookies` is "request" and "cooki", which every page about cookies
    # holds in its title and says more often than the reference page does.
    pages = {
        "/api/request": "# Request\n\nAn incoming request.\n\n## `Request.cookies`\n\nThe "
        "cookies it carries, by name.\n\n## `Request.url`\n\nIts address. " + PROSE + "\n",
        **{
            f"/guide/cookies-{n}": f"# Cookies in a request {n}\n\nA request sends cookies; "
            f"cookies expire; a cookie request sets cookies for the request. {PROSE}\n"
            for n in range(4)
        },
    }
    assert _first(pages, "Request.cookies") == "/api/request"


def test_a_compiler_flag_finds_its_own_page_not_pages_about_the_word() -> None:
    pages = {
        "/build/options": "# Compiler options\n\n- `/strict-`: turns the checks off.\n"
        "- `/O2`: optimizes for speed.\n" + PROSE + "\n",
        **{
            f"/guide/strictness-{n}": f"# Strict mode {n}\n\nStrict code is strictly "
            f"better; strictness and strict checks, strictly. {PROSE}\n"
            for n in range(4)
        },
    }
    assert _first(pages, "/strict-") == "/build/options"


def test_a_page_that_only_links_to_a_definition_does_not_outrank_it() -> None:
    # The links' targets (`/api/headers#set-cookie`) are where they point, not what the
    # linking pages say; the definition is one section of a long reference page.
    headers = "".join(
        f"## `{name}`\n\nThe `{name}` header. {PROSE}\n\n"
        for name in ("Accept", "Age", "Allow", "Date", "ETag", "Expect", "Set-Cookie", "Via")
    )
    linking = "Read [the header](/api/headers#set-cookie) first. "
    pages = {
        "/api/headers": f"# HTTP headers\n\n{headers}",
        **{f"/guide/linking-{n}": f"# Guide {n}\n\n{linking * 4}\n" for n in range(4)},
        **{f"/guide/other-{n}": f"# Other {n}\n\n{PROSE}\n" for n in range(12)},
    }
    assert _first(pages, "set-cookie") == "/api/headers"


def test_a_questions_own_words_do_not_pull_in_headings_that_say_them() -> None:
    # "How should I ... my" are rare in documentation, and upgrade guides say them in every
    # heading; the page the question is about says "test files".
    pages = {
        "/guide/layout": "# Project layout\n\nName test files `*.test.ts` so that the "
        "runner finds them. " + PROSE + "\n",
        **{
            f"/upgrade/v{n}": f"# Upgrading to v{n}\n\n## How should I upgrade my app?\n\n"
            f"## What should I do first?\n\nName the version in the file. {PROSE}\n"
            for n in range(6)
        },
    }
    assert _first(pages, "how should I name my test files") == "/guide/layout"


def test_a_single_title_word_does_not_outweigh_the_page_the_question_is_about() -> None:
    # "express" in a question about expressing a computed value, and a page titled after
    # another framework.
    pages = {
        "/guide/migrating-from-express": "# Coming from Express\n\nRoutes and handlers, "
        "as you wrote them. " + PROSE + "\n",
        "/guide/reactivity": "# Reactivity\n\n"
        + PROSE * 3
        + "To express a value computed from others, declare it so.\n",
        **{f"/guide/other-{n}": f"# Other {n}\n\nA value. {PROSE}\n" for n in range(6)},
    }
    assert _first(pages, "how to express a value computed from other values") == (
        "/guide/reactivity"
    )


def test_a_flag_kept_whole_beats_titles_holding_its_words() -> None:
    # Split, `--no-verify` is "no" and "verify", and "no" is in every title saying "No".
    pages = {
        "/cli/commit": "# commit\n\n## Options\n\n- `--no-verify`: skips the hooks.\n"
        "- `--amend`: rewrites the last commit. " + PROSE + "\n",
        **{
            f"/faq/no-{n}": f"# No {n}: verify the setup\n\nNo, verify it first. {PROSE}\n"
            for n in range(6)
        },
    }
    assert _first(pages, "--no-verify") == "/cli/commit"


def test_an_identifier_whole_beats_the_title_words_it_is_made_of() -> None:
    # Split, `HeadersInit` is the words "headers" and "init", which these titles hold; the
    # page that defines it names it once, in a table of a long page.
    pages = {
        "/api/fetch": "# Fetch API\n\n" + PROSE * 3 + "\n\n| type | what |\n| --- | --- |\n"
        "| `HeadersInit` | a record or pairs of strings |\n| `BodyInit` | a body |\n",
        **{
            f"/guide/headers-{n}": f"# Headers {n} at init\n\nSet headers at init:\n\n"
            f"```ts\nconst headers: HeadersInit = {{}}\n```\n\n{PROSE}\n"
            for n in range(6)
        },
    }
    assert _first(pages, "HeadersInit") == "/api/fetch"


def test_a_pasted_paragraph_of_60_words_is_answered_on_its_telling_words() -> None:
    pages = {
        "/guide/pool": "# Connection pool\n\nWhen you see `PoolExhaustedError`, raise "
        "`maxConnections` in the pool's settings.\n",
        **{f"/guide/topic-{n}": f"# Topic {n}\n\n{PROSE}\n" for n in range(6)},
    }
    noise = " ".join(f"req-{n:04x}" for n in range(50))
    paragraph = f"worker 3 started {noise} then PoolExhaustedError: no connection left in the pool"
    assert len(paragraph.split()) >= 60
    hits = relevance_index(pages).search(paragraph, 5)
    assert hits.terms_used == 32
    assert hits[0].url == "/guide/pool"


def test_a_questions_one_rare_word_does_not_outweigh_the_page_holding_the_rest_of_it() -> None:
    # "entirely" is the asker's word, on one page of release notes; the page answering says
    # "skip", "output" and "folder", each of which several pages hold.
    pages = {
        "/guide/ignore": "# Ignoring files\n\nTo skip a folder, list it in `ignores`: the "
        "output folder is then skipped by every run. " + PROSE + "\n",
        "/blog/rewrite": "# Release notes\n\nThe parser was rewritten entirely, and entirely "
        "faster. " + PROSE + "\n",
        **{
            f"/guide/folders-{n}": f"# Project {n}\n\nEach folder holds pages; the output goes "
            f"to a folder of its own, and a run may skip one. {PROSE}\n"
            for n in range(6)
        },
        **{f"/guide/other-{n}": f"# Other {n}\n\n{PROSE}\n" for n in range(6)},
    }
    assert _first(pages, "how do I skip the output folder entirely") == "/guide/ignore"


def test_an_identifier_and_a_keyword_find_the_page_holding_the_rare_keyword() -> None:
    # Not a question: `swr` is what is asked about, however rare, and the pages saying
    # `routeRules` most often do not say it.
    pages = {
        "/guide/rendering": "# Rendering modes\n\nEach route may render differently: with "
        "`swr` a page is cached and revalidated, as routeRules say. " + PROSE * 2 + "\n",
        **{
            f"/api/config-{n}": f"# Config {n}\n\nDefine it in the config: "
            + "`routeRules` map a route to its rules. " * 3
            + PROSE
            + "\n"
            for n in range(3)
        },
        **{f"/guide/other-{n}": f"# Other {n}\n\n{PROSE}\n" for n in range(8)},
    }
    assert _first(pages, "routeRules swr") == "/guide/rendering"


def test_a_question_finds_the_page_whose_opening_sentence_answers_it() -> None:
    # The reference pages say every word of the question, further down and among others;
    # the guide says most of them in the sentence that opens it, which says what it is about.
    pages = {
        "/guide/transactions": "# Transactions\n\nThe queued commands of a transaction still "
        "run when one of them fails.\n\n## Usage\n\n" + PROSE * 4 + "\n",
        **{
            f"/commands/cmd-{n}": f"# CMD{n}\n\nReturns the value. {PROSE}\n\n## Errors\n\n"
            f"A command fails; the rest of the queued commands still run. {PROSE * 2}\n"
            for n in range(2)
        },
        **{f"/guide/other-{n}": f"# Other {n}\n\n{PROSE}\n" for n in range(8)},
    }
    query = "if one command fails, do the rest of the queued commands still run?"
    assert _first(pages, query) == "/guide/transactions"


def test_names_a_slash_lists_find_the_page_about_both_not_one_writing_them_joined() -> None:
    # `MULTI/EXEC` is two commands; the guide about them writes each apart, and a command's
    # page mentions the pair once, joined, in passing.
    pages = {
        "/guide/transactions": "# Transactions\n\n`MULTI` opens a transaction and `EXEC` "
        "runs its queued commands, all of them, even after one fails.\n\n" + PROSE * 8 + "\n",
        "/commands/blpop": "# BLPOP\n\nPops an element, blocking. " + PROSE + "\n\n## In a "
        "transaction\n\nInside a `MULTI/EXEC` block it does not block. " + PROSE + "\n",
        **{f"/commands/cmd-{n}": f"# CMD{n}\n\nA command. {PROSE}\n" for n in range(6)},
    }
    query = "if one command inside MULTI/EXEC fails, do the others still run?"
    assert _first(pages, query) == "/guide/transactions"


def test_words_joined_by_a_slash_stay_one_name() -> None:
    # `js/recommended` is a configuration's name, not the words "js" and "recommended".
    pages = {
        "/use/configs": "# Configs\n\nExtend `js/recommended` for the rules every project "
        "wants. " + PROSE + "\n",
        **{
            f"/guide/recommended-{n}": f"# Recommended {n}\n\nRecommended: js files, js "
            f"tests, recommended js. {PROSE}\n"
            for n in range(4)
        },
    }
    assert _first(pages, "js/recommended") == "/use/configs"
