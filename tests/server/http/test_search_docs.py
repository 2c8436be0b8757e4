"""`search_docs` end to end: the limit, empty queries, and a tree that changes under it."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kinetis_mcp_docs.server.protocol.errors import INVALID_PARAMS
from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import HttpServer, clean_environ, serve_http_argv, tool_text, write_tree
from tests.support.processes import cpu_seconds


def _results(server: HttpServer, arguments: dict[str, Any]) -> list[dict[str, str]]:
    result = server.call_tool("search_docs", arguments)
    assert "isError" not in result, result
    document = json.loads(tool_text(result))
    assert document["query"] == arguments["query"]
    results: list[dict[str, str]] = document["results"]
    return results


@pytest.fixture(scope="module")
def many_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = {f"p{n:02}.md": f"# Page {n}\n\ncommon word\n" for n in range(30)}
    return write_tree(tmp_path_factory.mktemp("many"), pages)


@pytest.fixture(scope="module")
def many_server(many_pages: Path) -> Iterator[HttpServer]:
    server = HttpServer(serve_http_argv("--docs-dir", str(many_pages), *UNLIMITED), clean_environ())
    yield server
    server.stop()


def test_an_absent_limit_is_5(many_server: HttpServer) -> None:
    assert len(_results(many_server, {"query": "common"})) == 5


@pytest.mark.parametrize(
    ("limit", "count"),
    [
        (1, 1),
        (10, 10),
        (20, 20),
        (50, 20),
        (0, 1),
        (-3, 1),
        (2.9, 2),
        (19.99, 19),
        (1e300, 20),
        ("10", 10),
        (" 7 ", 7),
        ("2.9", 2),
        ("1e1", 10),
        ("0x10", 16),
        ("-Infinity", 1),
        ("1e400", 20),
        ("many", 5),
        ("", 5),
        ("1_0", 5),
        (None, 5),
        (True, 5),
        ([3], 5),
        ({}, 5),
    ],
)
def test_the_limit_is_floored_clamped_to_1_20_and_numeric_strings_count_as_javascript_reads_them(
    many_server: HttpServer, limit: object, count: int
) -> None:
    arguments: dict[str, Any] = {"query": "common", "limit": limit}
    assert len(_results(many_server, arguments)) == count


@pytest.mark.parametrize(
    ("literal", "count"),
    [
        ("1" + "0" * 309, 20),  # 1e309: past every float, once an OverflowError
        ("-1" + "0" * 309, 1),
        ("9" * 5000, 20),  # more digits than Python converts
        ("-" + "9" * 5000, 1),
        ('"0x' + "f" * 300 + '"', 20),  # a hexadecimal string past every float
        ('"0b' + "1" * 2000 + '"', 20),
        ('"' + "1" * 400 + '"', 20),
    ],
)
def test_a_limit_past_every_float_is_clamped_like_any_other_number(
    many_server: HttpServer, literal: str, count: int
) -> None:
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_docs",'
        f'"arguments":{{"query":"common","limit":{literal}}}}}}}'
    )
    response = many_server.post(body.encode("ascii"))
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert "isError" not in result, result
    assert len(json.loads(tool_text(result))["results"]) == count


# The audit's shapes, each once minutes of backtracking on a stopped event loop: digits and
# one character a number cannot hold, in every place the grammar allows digits.
_HOSTILE_LIMITS = [
    "1" * 16_000 + "x",
    "1" * 40_000 + "x",
    "1." + "1" * 40_000 + "x",
    "." + "1" * 40_000 + "x",
    "1" * 20_000 + "." + "1" * 20_000 + "e",
    "1e" + "1" * 40_000 + "x",
    "-" + "1" * 40_000 + "e+",
    " " * 40_000 + "1" * 40_000 + "x",
    "0x" + "f" * 40_000 + "g",
    "\u3000" * 20_000 + "7" + "\u00a0" * 20_000,
]


def test_any_limit_string_is_read_in_linear_time_and_answered_as_javascript_reads_it(
    many_server: HttpServer,
) -> None:
    for limit in _HOSTILE_LIMITS:
        text = json.loads(f'"{limit}"')
        expected = 7 if text.strip() == "7" else 5
        assert len(_results(many_server, {"query": "common", "limit": text})) == expected


def _cpu_per_search(server: HttpServer, limits: list[object], rounds: int) -> float:
    calls = [{"query": "common", "limit": limit} for limit in limits] * rounds
    before = cpu_seconds(server.process.pid)
    for arguments in calls:
        server.call_tool("search_docs", arguments)
    return (cpu_seconds(server.process.pid) - before) / len(calls)


def test_the_costliest_limit_strings_cost_a_small_multiple_of_an_ordinary_search(
    many_server: HttpServer,
) -> None:
    limits: list[object] = [json.loads(f'"{limit}"') for limit in _HOSTILE_LIMITS]
    _cpu_per_search(many_server, ["10", *limits], 1)  # warm: threads, index, caches
    ordinary = _cpu_per_search(many_server, ["10"], 100)
    worst = _cpu_per_search(many_server, limits, 3)
    # Each hostile body is up to 80 KB against an ordinary 120 bytes: reading and decoding
    # it is a cost of its own, so the margin is wide; a quadratic read costs seconds.
    assert worst < 10 * ordinary, (worst, ordinary)


def test_equal_scores_come_in_url_order(many_server: HttpServer) -> None:
    urls = [hit["url"] for hit in _results(many_server, {"query": "common", "limit": 20})]
    assert urls == sorted(urls)
    assert urls[0] == "/p00"


@pytest.mark.parametrize("arguments", [{}, {"query": ""}, {"query": "   "}, {"query": None}])
def test_an_empty_or_absent_query_is_an_error_result(
    many_server: HttpServer, arguments: dict[str, Any]
) -> None:
    result = many_server.call_tool("search_docs", arguments)
    assert result["isError"] is True
    assert tool_text(result) == "Missing or empty query."


def test_a_query_that_is_not_a_string_is_32602(many_server: HttpServer) -> None:
    response = many_server.rpc("tools/call", {"name": "search_docs", "arguments": {"query": 42}})
    assert response.json()["error"]["code"] == INVALID_PARAMS


def test_a_changed_added_or_removed_file_is_seen_by_the_next_search(
    start_http: StartHttp, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", {"a.md": "# A\n\napple\n", "sub/b.md": "# B\n\nbanana\n"})
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    assert [hit["url"] for hit in _results(server, {"query": "apple"})] == ["/a"]

    (root / "a.md").write_text("# A\n\ncherry\n", encoding="utf-8")
    assert _results(server, {"query": "apple"}) == []
    assert [hit["url"] for hit in _results(server, {"query": "cherry"})] == ["/a"]

    write_tree(root, {"sub/new/index.md": "---\ntitle: Fresh\n---\nkiwi\n"})
    (root / "sub" / "b.md").unlink()
    assert _results(server, {"query": "kiwi"}) == [
        {"title": "Fresh", "url": "/sub/new", "snippet": "kiwi"}
    ]
    assert _results(server, {"query": "banana"}) == []


def test_every_result_is_a_page_fetch_page_serves_at_that_url(tree_server: HttpServer) -> None:
    for hit in _results(tree_server, {"query": "e", "limit": 20}):
        fetched = tree_server.call_tool("fetch_page", {"url": hit["url"]})
        assert "isError" not in fetched, hit
        assert len(hit["snippet"]) <= 240


def test_a_page_whose_name_holds_a_percent_is_found_at_a_url_fetch_page_reads_back(
    start_http: StartHttp, tmp_path: Path
) -> None:
    # fetch_page decodes a URL once: a result naming `/we%2fird` read the page `/we/ird`.
    names = ["we%2fird.md", "100%.md", "sub/50%25 off.md", "plain.md"]
    root = write_tree(tmp_path / "tree", {name: f"# {name}\n\nshared word\n" for name in names})
    # fetch_page reads a backslash as `/`: a name holding one is served at no URL.
    (root / "back\\slash.md").write_text("# back\n\nshared word\n")
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    found = {hit["url"]: hit for hit in _results(server, {"query": "shared", "limit": 20})}
    assert sorted(found) == ["/100%25", "/plain", "/sub/50%2525 off", "/we%252fird"]
    for url, hit in found.items():
        fetched = server.call_tool("fetch_page", {"url": url})
        assert "isError" not in fetched, url
        assert json.loads(tool_text(fetched))["content"].startswith(f"# {hit['title']}")


@pytest.mark.parametrize("ranking", ["owndocs", "relevance"])
def test_a_page_whose_name_is_not_utf8_is_left_out_and_the_tree_is_searched(
    start_http: StartHttp, tmp_path: Path, ranking: str
) -> None:
    # No URL decodes to such a name; indexing it failed, and with it every search.
    root = write_tree(tmp_path / "tree", {"plain.md": "# plain\n\nshared word\n"})
    for name in (b"bad\xff.md", b"dir\xfe/page.md"):
        page = root / os.fsdecode(name)
        page.parent.mkdir(exist_ok=True)
        page.write_text("# odd\n\nshared word\n")
    server = start_http("--docs-dir", str(root), "--ranking", ranking, *UNLIMITED)
    assert [hit["url"] for hit in _results(server, {"query": "shared"})] == ["/plain"]


@pytest.mark.parametrize(
    ("query", "used"),
    [
        (" ".join(f"common{n}" for n in range(32)), None),
        (" ".join(f"common{n}" for n in range(33)), 32),
        ("common " * 140, None),  # 980 characters, one word repeated
        ("Common COMMON common " * 12, None),  # one word, whatever its case
        ("c" * 1000, None),
        ("c" * 1001, 0),  # one word longer than the bound: none of it can be kept
        # The audit's query: a thousand different punctuation tokens, once 17 s of search.
        (" ".join("".join(p) for p in itertools.product("!#$%&*+,-.", repeat=3)), 32),
    ],
)
def test_a_query_past_32_different_words_or_1000_characters_is_answered_saying_the_words_used(
    many_server: HttpServer, query: str, used: int | None
) -> None:
    result = many_server.call_tool("search_docs", {"query": query})
    assert "isError" not in result
    document = json.loads(tool_text(result))
    assert document["query"] == query
    assert document.get("termsUsed") == used
    assert ("termsUsed" in document) == (used is not None)


@pytest.mark.parametrize("ranking", ["owndocs", "relevance"])
def test_a_pasted_paragraph_of_60_words_finds_the_page_that_explains_its_error(
    start_http: StartHttp, tmp_path: Path, ranking: str
) -> None:
    # An agent pastes a log: the error is one line of it, the rest is noise of its own.
    root = write_tree(
        tmp_path / "tree",
        {
            "guide/pool.md": "# Connection pool\n\nWhen you see `PoolExhaustedError`, raise "
            "`maxConnections` in the pool's settings.\n",
            **{
                f"guide/topic{n}.md": f"# Topic {n}\n\nThe server starts and the worker "
                f"runs; a request is answered.\n"
                for n in range(6)
            },
        },
    )
    server = start_http("--docs-dir", str(root), "--ranking", ranking, *UNLIMITED)
    noise = [f"req-{n:04x}" for n in range(46)]
    paragraph = (
        "2026-12-06T10:00:01Z worker 3 started; the server answered "
        + " ".join(noise[:23])
        + " then PoolExhaustedError: no connection left in the pool "
        + " ".join(noise[23:])
    )
    assert len(paragraph.split()) >= 60
    result = server.call_tool("search_docs", {"query": paragraph})
    document = json.loads(tool_text(result))
    assert document["termsUsed"] == 32
    assert document["results"][0]["url"] == "/guide/pool"


def test_a_symlinked_docs_dir_follows_a_release_swap_on_the_next_search_and_fetch(
    start_http: StartHttp, tmp_path: Path
) -> None:
    write_tree(tmp_path / "release-1", {"guide.md": "# Guide\n\nalpha\n"})
    write_tree(tmp_path / "release-2", {"guide.md": "# Guide\n\nbeta\n"})
    current = tmp_path / "current"
    current.symlink_to(tmp_path / "release-1")
    server = start_http("--docs-dir", str(current), *UNLIMITED)
    assert [hit["url"] for hit in _results(server, {"query": "alpha"})] == ["/guide"]
    swapping = tmp_path / "current.next"
    swapping.symlink_to(tmp_path / "release-2")
    swapping.replace(current)  # one rename, as a deploy swaps releases
    assert _results(server, {"query": "alpha"}) == []
    assert [hit["url"] for hit in _results(server, {"query": "beta"})] == ["/guide"]
    fetched = json.loads(tool_text(server.call_tool("fetch_page", {"url": "/guide"})))
    assert fetched["content"] == "# Guide\n\nbeta\n"


def test_ranking_relevance_gives_each_result_the_line_its_snippet_starts_on(
    start_http: StartHttp, tmp_path: Path
) -> None:
    root = write_tree(
        tmp_path / "tree",
        {
            "a.md": "# A\n\nintro\n\n## Cookies\n\nSet a cookie with useCookie.\n",
            "b.md": "# B\n\nx\n",
        },
    )
    server = start_http("--docs-dir", str(root), "--ranking", "relevance", *UNLIMITED)
    assert _results(server, {"query": "useCookie"}) == [
        # From the heading of the section that holds the word: line 5 of the file.
        {"title": "A", "url": "/a", "snippet": "## Cookies Set a cookie with useCookie.", "line": 5}
    ]


@pytest.mark.parametrize("ranking", ["owndocs", "relevance"])
def test_a_lone_surrogate_in_a_query_is_searched_as_a_character_no_page_holds(
    start_http: StartHttp, docs_tree: Path, ranking: str
) -> None:
    # `"\udfff"` is valid JSON but no Unicode: it once reached the relevance index (in both
    # rankings, which order ties by it) and was -32603 with a traceback on stderr.
    server = start_http("--docs-dir", str(docs_tree), "--ranking", ranking, *UNLIMITED)
    plain = _results(server, {"query": "mermaid diagrams"})
    assert plain
    assert _results(server, {"query": "mermaid \udfff diagrams"}) == plain
    assert _results(server, {"query": "\ud800"}) == []
    assert "Traceback" not in server.output


def test_an_unknown_ranking_is_refused_in_one_line() -> None:
    from kinetis_mcp_docs.server.http.settings import Settings, SettingsError  # noqa: PLC0415

    assert Settings.from_environ({}).ranking == "owndocs"
    assert Settings.from_environ({"KINETIS_DOCS_RANKING": "relevance"}).ranking == "relevance"
    with pytest.raises(SettingsError, match="KINETIS_DOCS_RANKING='bm25'"):
        Settings.from_environ({"KINETIS_DOCS_RANKING": "bm25"})
