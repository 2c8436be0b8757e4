"""DocsApplication in a host's own process, over a page source the test controls."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.server.application import (
    DocsApplication,
    InvalidArguments,
    PageUnavailable,
    UnknownResource,
)
from kinetis_mcp_docs.server.core.catalogue import PAGES
from kinetis_mcp_docs.server.sources.page_source import PageFetchError


class RecordingSource:
    """A page source that serves fixed texts and records every fetch."""

    def __init__(self, pages: dict[str, str]) -> None:
        self.pages = pages
        self.fetched: list[str] = []
        self.closed = False

    def fetch(self, slug: str) -> str:
        self.fetched.append(slug)
        if slug not in self.pages:
            raise PageFetchError(f"https://origin.invalid/{slug}.md", "HTTP 404")
        return self.pages[slug]

    def close(self) -> None:
        self.closed = True


PAGE = "# Title\r\nalpha\n\nbeta alpha\nlast"


@pytest.fixture
def source() -> RecordingSource:
    return RecordingSource({"index": PAGE, "tools": "x\n" * 500})


@pytest.fixture
def app(source: RecordingSource) -> DocsApplication:
    return DocsApplication(source)


def _document(result: dict[str, Any]) -> Any:
    (block,) = result["content"]
    assert block["type"] == "text"
    document = json.loads(block["text"])
    assert document == result["structuredContent"]
    return document


def test_the_application_lists_every_catalogue_page_as_markdown(app: DocsApplication) -> None:
    listed = app.resources()
    assert [entry["uri"] for entry in listed] == [f"kinetis://docs/{slug}" for slug, *_ in PAGES]
    assert all(entry["mimeType"] == "text/markdown" for entry in listed)
    assert all(entry["name"] and entry["description"] for entry in listed)


def test_the_application_names_itself_at_the_installed_version(app: DocsApplication) -> None:
    assert app.server_info == {"name": "kinetis-mcp-docs", "version": __version__}
    for phrase in ("kinetis://docs/agent-workflow", "kinetis_read_doc", "kinetis_search_doc"):
        assert phrase in app.instructions
    assert "resources/read" in app.instructions


def test_reading_a_resource_returns_the_whole_page(
    app: DocsApplication, source: RecordingSource
) -> None:
    contents = app.read_resource("kinetis://docs/index")
    assert contents == {"uri": "kinetis://docs/index", "mimeType": "text/markdown", "text": PAGE}
    assert source.fetched == ["index"]


def test_every_read_fetches_the_page_again(app: DocsApplication, source: RecordingSource) -> None:
    app.read_resource("kinetis://docs/index")
    source.pages["index"] = "changed\n"
    assert app.read_resource("kinetis://docs/index")["text"] == "changed\n"
    app.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/index"})
    assert source.fetched == ["index", "index", "index"]


def test_an_unknown_resource_is_refused_without_a_fetch(
    app: DocsApplication, source: RecordingSource
) -> None:
    with pytest.raises(UnknownResource) as refused:
        app.read_resource("kinetis://docs/nope")
    assert refused.value.uri == "kinetis://docs/nope"
    assert source.fetched == []


def test_a_page_that_cannot_be_fetched_is_unavailable_with_its_reason(
    app: DocsApplication,
) -> None:
    with pytest.raises(PageUnavailable) as failed:
        app.read_resource("kinetis://docs/setup")
    assert str(failed.value) == 'Could not read "kinetis://docs/setup".'
    assert failed.value.reason == "HTTP 404"
    with pytest.raises(PageUnavailable):
        app.call_tool("kinetis_search_doc", {"uri": "kinetis://docs/setup", "query": "x"})


def test_a_window_result_carries_the_document_as_text_and_structured_content(
    app: DocsApplication,
) -> None:
    result = app.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 2})
    assert result["isError"] is False
    assert _document(result) == {
        "status": "ok",
        "uri": "kinetis://docs/index",
        "startLine": 1,
        "endLine": 2,
        "hasMore": True,
        "content": "# Title\r\nalpha\n",
    }


def test_a_search_result_lists_matching_lines(app: DocsApplication) -> None:
    result = app.call_tool("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "alpha"})
    assert _document(result) == {
        "status": "ok",
        "uri": "kinetis://docs/index",
        "query": "alpha",
        "startLine": 1,
        "matches": [{"line": 2, "content": "alpha"}, {"line": 4, "content": "beta alpha"}],
        "hasMore": False,
    }


def test_refusals_are_error_results_carrying_only_their_code(
    app: DocsApplication, source: RecordingSource
) -> None:
    unknown = app.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/missing"})
    assert unknown["isError"] is True
    assert _document(unknown) == {"status": "resource_unknown"}
    assert source.fetched == []
    out_of_range = app.call_tool(
        "kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "a", "startLine": 6}
    )
    assert out_of_range["isError"] is True
    assert _document(out_of_range) == {"status": "line_out_of_range"}


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("kinetis_read_doc", {}),
        ("kinetis_read_doc", {"uri": ""}),
        ("kinetis_read_doc", {"uri": 7}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": 0}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": True}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": 1.0}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "startLine": "1"}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 0}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 201}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "linecount": 5}),
        ("kinetis_read_doc", {"uri": "kinetis://docs/index", "query": "x"}),
        ("kinetis_read_doc", ["kinetis://docs/index"]),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index"}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": ""}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "q" * 257}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "x", "lineCount": 5}),
        ("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": None}),
        ("kinetis_write_doc", {"uri": "kinetis://docs/index"}),
        (None, {"uri": "kinetis://docs/index"}),
    ],
)
def test_arguments_outside_the_schema_are_refused_before_any_fetch(
    app: DocsApplication, source: RecordingSource, name: object, arguments: object
) -> None:
    with pytest.raises(InvalidArguments):
        app.call_tool(name, arguments)
    assert source.fetched == []


def test_a_query_is_measured_in_code_points(app: DocsApplication) -> None:
    # 256 astral characters are 512 UTF-16 units and 1,024 UTF-8 bytes: still allowed.
    result = app.call_tool(
        "kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "😀" * 256}
    )
    assert _document(result)["matches"] == []
    with pytest.raises(InvalidArguments):
        app.call_tool("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "😀" * 257})


def test_the_tools_are_listed_with_closed_schemas_and_read_only_annotations(
    app: DocsApplication,
) -> None:
    tools: list[dict[str, Any]] = app.tools()
    assert [tool["name"] for tool in tools] == ["kinetis_read_doc", "kinetis_search_doc"]
    for tool in tools:
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert schema["required"][0] == "uri"
        annotations = tool["annotations"]
        assert annotations["readOnlyHint"] is True
        assert annotations["destructiveHint"] is False
        assert annotations["idempotentHint"] is True
        assert annotations["openWorldHint"] is True


def test_the_application_serves_calls_from_several_threads(
    app: DocsApplication, source: RecordingSource
) -> None:
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                app.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/tools", "lineCount": 3})
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert len(source.fetched) == 160


def test_closing_the_application_closes_its_source(
    app: DocsApplication, source: RecordingSource
) -> None:
    app.close()
    assert source.closed


def test_a_docs_dir_serves_the_catalogue_from_it_and_1_0s_local_pages_still_names_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "index.md").write_text("# Local index\n", encoding="utf-8")
    app = DocsApplication(docs_dir=str(tmp_path))
    try:
        assert app.read_resource("kinetis://docs/index")["text"] == "# Local index\n"
        assert str(tmp_path) in app.instructions
    finally:
        app.close()
    named = DocsApplication(RecordingSource({}), local_pages="/srv/docs")
    assert "/srv/docs" in named.instructions
    assert "/srv/docs" not in DocsApplication(RecordingSource({})).instructions
