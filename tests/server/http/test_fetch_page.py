"""`fetch_page` over a local tree: normalisation, fallbacks and every guard rail, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS
from tests.server.http.conftest import TREE, UNLIMITED, StartHttp
from tests.support.http import HttpServer, tool_text, write_tree
from tests.support.processes import PROC_AVAILABLE, cpu_seconds


def _fetched(server: HttpServer, url: str) -> dict[str, str]:
    result = server.call_tool("fetch_page", {"url": url})
    assert "isError" not in result, result
    document = json.loads(tool_text(result))
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize(
    ("url", "file", "path"),
    [
        (
            "/getting-started/introduction",
            "getting-started/introduction.mdx",
            "/getting-started/introduction",
        ),
        (
            "getting-started/introduction",
            "getting-started/introduction.mdx",
            "/getting-started/introduction",
        ),
        (
            "/getting-started/introduction///",
            "getting-started/introduction.mdx",
            "/getting-started/introduction",
        ),
        (
            "\\getting-started\\introduction",
            "getting-started/introduction.mdx",
            "/getting-started/introduction",
        ),
        ("", "index.mdx", "/"),
        ("/", "index.mdx", "/"),
        ("//", "index.mdx", "/"),
        ("/features", "features/index.md", "/features"),
        ("/features/", "features/index.md", "/features"),
        (
            "/features/diagrams/mermaid",
            "features/diagrams/mermaid.md",
            "/features/diagrams/mermaid",
        ),
        (
            "/features/%6Dermaid".replace("features/", "features/diagrams/"),
            "features/diagrams/mermaid.md",
            "/features/diagrams/mermaid",
        ),
        ("/guides/deploy", "guides/deploy.md", "/guides/deploy"),
    ],
)
def test_a_url_is_normalised_and_resolved_to_its_file_byte_for_byte(
    tree_server: HttpServer, url: str, file: str, path: str
) -> None:
    document = _fetched(tree_server, url)
    assert document == {"url": path, "content": TREE[file]}


def test_the_result_text_is_the_contract_document(tree_server: HttpServer) -> None:
    text = tool_text(tree_server.call_tool("fetch_page", {"url": "/getting-started/introduction"}))
    assert text == (
        '{\n  "url": "/getting-started/introduction",\n'
        '  "content": "---\\ntitle: Introduction\\n---\\n\\n# Introduction\\n\\n'
        'The first steps with Kinetis.\\n"\n}'
    )


@pytest.mark.parametrize(
    "url",
    [
        "/../../etc/passwd",
        "..",
        "/docs/../index",
        "/./index",
        ".",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E/secret",
        "%2e",
        "/a/%2e%2e%2fb",
        "..\\..\\etc\\passwd",
        "\\..\\index",
        "%5c..%5cindex",
        "/index\u0000",
        "/a%00b",
        "/\u0000",
    ],
)
def test_a_traversal_is_refused_with_32602_before_anything_is_opened(
    tree_server: HttpServer, url: str
) -> None:
    response = tree_server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": INVALID_PARAMS,
        "message": "Path traversal rejected",
    }


@pytest.mark.parametrize("url", ["/%", "/%2", "/%zz", "/%E0%A4%A", "/%C3%28", "/%FF", "/\ud800"])
def test_a_url_that_cannot_be_decoded_is_malformed(tree_server: HttpServer, url: str) -> None:
    response = tree_server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
    assert response.json()["error"] == {
        "code": INVALID_PARAMS,
        "message": "Malformed URL parameter",
    }


def test_a_double_encoded_dot_decodes_once_into_a_plain_name_and_is_simply_not_found(
    tree_server: HttpServer,
) -> None:
    result = tree_server.call_tool("fetch_page", {"url": "/%252e%252e/%252e%252e/etc/passwd"})
    assert result["isError"] is True
    assert tool_text(result) == "Page not found: /%2e%2e/%2e%2e/etc/passwd"


@pytest.mark.parametrize("arguments", [{}, {"url": None}, {"url": 5}, {"path": "/"}])
def test_a_missing_or_mistyped_url_is_32602(tree_server: HttpServer, arguments: object) -> None:
    response = tree_server.rpc("tools/call", {"name": "fetch_page", "arguments": arguments})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == INVALID_PARAMS


@pytest.mark.parametrize("url", ["/nope/missing", "/index.mdx", "/features/index.md", "/guides"])
def test_a_path_naming_no_page_is_an_error_result(tree_server: HttpServer, url: str) -> None:
    result = tree_server.call_tool("fetch_page", {"url": url})
    assert result["isError"] is True
    assert tool_text(result) == f"Page not found: /{url.strip('/')}"


def test_md_wins_over_mdx_and_a_file_over_a_directory_index(
    start_http: StartHttp, tmp_path: Path
) -> None:
    root = write_tree(
        tmp_path / "tree",
        {"a.md": "md", "a.mdx": "mdx", "a/index.md": "dir", "b/index.mdx": "b index"},
    )
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    assert _fetched(server, "/a")["content"] == "md"
    assert _fetched(server, "/a/index")["content"] == "dir"
    assert _fetched(server, "/b")["content"] == "b index"


def test_a_symlink_out_of_the_tree_is_refused_and_one_inside_is_served(
    start_http: StartHttp, tmp_path: Path
) -> None:
    outside = write_tree(tmp_path / "outside", {"secret.md": "SECRET", "dir/index.md": "OUT"})
    root = write_tree(tmp_path / "tree", {"index.md": "# Home\n", "real.md": "inside\n"})
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "linked").symlink_to(outside / "dir")
    (root / "alias.md").symlink_to(root / "real.md")
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    for url in ("/leak", "/linked", "/linked/index"):
        response = server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
        assert response.json()["error"] == {
            "code": INVALID_PARAMS,
            "message": "Path traversal rejected",
        }, url
    assert _fetched(server, "/alias")["content"] == "inside\n"
    found = json.loads(tool_text(server.call_tool("search_docs", {"query": "secret"})))
    assert found["results"] == []


def test_a_page_that_is_not_utf8_is_32603_with_the_reason_on_stderr_only(
    start_http: StartHttp, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", {"bad.md": b"\xff\xfe not text"})
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    response = server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": "/bad"}})
    assert response.json()["error"] == {"code": INTERNAL_ERROR, "message": 'Could not read "/bad".'}
    assert "not valid UTF-8" not in response.text
    server.wait_for_output("not valid UTF-8 at byte 0")


def test_a_file_changed_on_disk_is_served_changed_on_the_next_call(
    start_http: StartHttp, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", {"page.md": "one\n"})
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    assert _fetched(server, "/page")["content"] == "one\n"
    (root / "page.md").write_text("two\n", encoding="utf-8")
    assert _fetched(server, "/page")["content"] == "two\n"


@pytest.mark.parametrize(
    ("url", "too_long"),
    [
        ("a/" * 500_000, True),  # once minutes of CPU in resolving it
        ("/" + "a" * 4095, False),
        ("/" + "a" * 4096, True),
        ("%61" * 4000, False),  # 12,000 characters sent, 4,000 once decoded
        ("%61" * 4097, True),
        ("/a" * 256, False),
        ("/a" * 257, True),
        ("/a" + "/" * 300, False),  # empty segments are dropped before they are counted
    ],
)
def test_a_url_over_4096_characters_once_decoded_or_256_segments_is_32602_at_once(
    tree_server: HttpServer, url: str, too_long: bool
) -> None:
    response = tree_server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
    if too_long:
        assert response.status_code == 400
        assert response.json()["error"] == {
            "code": INVALID_PARAMS,
            "message": "URL too long: at most 4096 characters and 256 segments",
        }
    else:
        assert response.json()["result"]["isError"] is True  # simply no such page


@pytest.fixture
def zombie() -> Iterator[int]:
    """A child that has exited and is not yet reaped: its `/proc/PID/exe` is a symlink
    that cannot be read (ENOENT), as a symlink swapped away between `lstat` and
    `readlink` cannot."""
    if not PROC_AVAILABLE:
        pytest.skip("no /proc here: no symlink that cannot be read")
    child = subprocess.Popen([sys.executable, "-c", ""])
    status = Path(f"/proc/{child.pid}/status")
    # Waiting on the kernel's word, not reaping: `os.waitid` with WNOWAIT leaves it a zombie.
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    assert "State:\tZ" in status.read_text(encoding="ascii")
    yield child.pid
    child.wait()


def test_a_symlink_that_cannot_be_read_while_resolving_is_a_traversal_not_an_internal_error(
    start_http: StartHttp, tmp_path: Path, zombie: int
) -> None:
    # `realpath` raised there (EINVAL when a directory on the way was swapped for a symlink
    # mid-read, ENOENT here): it is answered as the other outcomes of that race are.
    root = write_tree(tmp_path / "tree", {"index.md": "# Home\n"})
    (root / "gone").symlink_to(f"/proc/{zombie}/exe")
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    for url in ("/gone", "/gone/page"):
        response = server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
        assert response.json()["error"] == {
            "code": INVALID_PARAMS,
            "message": "Path traversal rejected",
        }, url
    assert "Traceback" not in server.output
    assert _fetched(server, "/")["content"] == "# Home\n"


_HUGE_URLS = ["%61" * 690_000, "%F0%9F%98%80" * 170_000, "a%2F" * 500_000]


def _cpu_per_fetch(server: HttpServer, urls: list[str], rounds: int) -> float:
    calls = urls * rounds
    before = cpu_seconds(server.process.pid)
    for url in calls:
        server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
    return (cpu_seconds(server.process.pid) - before) / len(calls)


def test_a_url_of_megabytes_is_refused_before_it_is_decoded(tree_server: HttpServer) -> None:
    for url in _HUGE_URLS:
        response = tree_server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": url}})
        assert response.json()["error"] == {
            "code": INVALID_PARAMS,
            "message": "URL too long: at most 4096 characters and 256 segments",
        }
    ordinary = _cpu_per_fetch(tree_server, ["/getting-started/introduction"], 50)
    huge = _cpu_per_fetch(tree_server, _HUGE_URLS, 2)
    # Each body is 2 MB against 100 bytes: reading and decoding its JSON is a cost of its
    # own (a few ms), so the margin is wide; decoding the URL itself cost 0.3-0.6 s.
    assert huge < 40 * ordinary, (huge, ordinary)


def test_a_url_at_the_raw_bound_costs_a_small_multiple_of_an_ordinary_fetch(
    tree_server: HttpServer,
) -> None:
    # 49,152 characters to decode: 4,096 once decoded, each written as 12, and others.
    longest = ["%F0%9F%98%80" * 4096, "%61/" * 4096, "a%2F" * 256 + "%61" * 15_616]
    _cpu_per_fetch(tree_server, longest, 1)  # warm
    ordinary = _cpu_per_fetch(tree_server, ["/getting-started/introduction"], 100)
    worst = _cpu_per_fetch(tree_server, longest, 5)
    # Decoding it escape by escape in Python cost 11 ms, against 1 ms for the request.
    assert worst < 5 * ordinary, (worst, ordinary)


@pytest.mark.parametrize(
    "url",
    [
        "%F0%9F%98%80" * 4096,  # 4,096 characters once decoded, 49,152 sent
        "/" + "%C3%A9" * 4095,
    ],
)
def test_a_url_at_the_decoded_bound_is_still_read_however_long_its_encoding(
    tree_server: HttpServer, url: str
) -> None:
    result = tree_server.call_tool("fetch_page", {"url": url})
    assert result["isError"] is True  # no such page: looked for, not refused


def _window(server: HttpServer, arguments: dict[str, object]) -> dict[str, object]:
    result = server.call_tool("fetch_page", arguments)
    assert "isError" not in result, result
    document: dict[str, object] = json.loads(tool_text(result))
    return document


def test_windows_read_one_after_another_concatenate_to_the_file_byte_for_byte(
    start_http: StartHttp, tmp_path: Path
) -> None:
    lines = [f"line {n} {'é' * (n % 7)} {'x' * (n * 37 % 900)}\r\n" for n in range(1, 700)]
    text = "---\ntitle: Long\n---\n" + "".join(lines) + "\n\nno final newline"
    root = write_tree(tmp_path / "tree", {"long.md": text, "huge-line.md": "y" * 40_000 + "\nz\n"})
    server = start_http("--docs-dir", str(root), *UNLIMITED)
    pieces, start = [], 1
    while True:
        window = _window(server, {"url": "/long", "startLine": start, "lineCount": 150})
        assert window["url"] == "/long"
        assert window["startLine"] == start
        content = window["content"]
        assert isinstance(content, str)
        assert len(content.encode("utf-8")) <= 32 * 1024
        assert content.count("\n") <= 150
        pieces.append(content)
        if not window["hasMore"]:
            break
        end = window["endLine"]
        assert isinstance(end, int)
        start = end + 1
    assert "".join(pieces) == text
    # The first line comes whole whatever its size; the window stops before the next.
    first = _window(server, {"url": "/huge-line", "lineCount": 5})
    assert first == {
        "url": "/huge-line",
        "startLine": 1,
        "endLine": 1,
        "hasMore": True,
        "content": "y" * 40_000 + "\n",
    }


def test_a_window_past_the_last_line_is_line_out_of_range(tree_server: HttpServer) -> None:
    result = tree_server.call_tool("fetch_page", {"url": "/guides/deploy", "startLine": 3})
    assert result["isError"] is True
    assert json.loads(tool_text(result)) == {"url": "/guides/deploy", "status": "line_out_of_range"}


def test_a_window_argument_alone_reads_from_line_1_and_none_reads_the_whole_file(
    tree_server: HttpServer,
) -> None:
    assert _window(tree_server, {"url": "/features", "lineCount": 1}) == {
        "url": "/features",
        "startLine": 1,
        "endLine": 1,
        "hasMore": True,
        "content": "# Features\r\n",
    }
    assert _window(tree_server, {"url": "/features"}) == {
        "url": "/features",
        "content": TREE["features/index.md"],
    }


@pytest.mark.parametrize(
    "arguments",
    [
        {"startLine": 0},
        {"startLine": "2"},
        {"lineCount": 201},
        {"lineCount": 0},
        {"lineCount": 1.5},
    ],
)
def test_a_window_argument_outside_its_schema_is_32602(
    tree_server: HttpServer, arguments: dict[str, object]
) -> None:
    response = tree_server.rpc(
        "tools/call", {"name": "fetch_page", "arguments": {"url": "/features", **arguments}}
    )
    assert response.json()["error"]["code"] == INVALID_PARAMS


def test_tools_list_describes_the_window_arguments(tree_server: HttpServer) -> None:
    tools = tree_server.rpc("tools/list", {}).json()["result"]["tools"]
    (fetch,) = [tool for tool in tools if tool["name"] == "fetch_page"]
    properties = fetch["inputSchema"]["properties"]
    assert properties["startLine"]["type"] == "integer"
    assert properties["lineCount"]["maximum"] == 200
    assert fetch["inputSchema"]["required"] == ["url"]
