"""Without --docs-dir the route serves the catalogue, each page read live from the origin."""

from __future__ import annotations

import json

from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import tool_text
from tests.support.origin import REPO_DOCS_DIR, DocsOrigin, page_path


def test_pages_are_read_live_by_path_and_the_index_is_the_empty_path(
    start_http: StartHttp, docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> None:
    docs_origin.serve_docs()
    server = start_http(*UNLIMITED, env=origin_env)
    index = (REPO_DOCS_DIR / "index.md").read_bytes().decode("utf-8")
    for url in ("", "/", "/index", "index/"):
        document = json.loads(tool_text(server.call_tool("fetch_page", {"url": url})))
        assert document == {"url": "/" + url.strip("/"), "content": index}
    workflow = json.loads(tool_text(server.call_tool("fetch_page", {"url": "/agent-workflow"})))
    assert workflow["content"] == (REPO_DOCS_DIR / "agent-workflow.md").read_text("utf-8")
    docs_origin.serve_page("agent-workflow", "# Changed on main\n")
    changed = json.loads(tool_text(server.call_tool("fetch_page", {"url": "/agent-workflow"})))
    assert changed["content"] == "# Changed on main\n"
    for missing in ("/nope", "/agent-workflow/deeper", "/docs/index"):
        result = server.call_tool("fetch_page", {"url": missing})
        assert result["isError"] is True
        assert tool_text(result) == f"Page not found: {missing}"


def test_search_covers_the_catalogue_and_a_page_that_fails_is_left_out_and_logged(
    start_http: StartHttp, docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> None:
    docs_origin.serve_docs()
    docs_origin.serve(page_path("troubleshooting"), status=500)
    server = start_http(*UNLIMITED, env=origin_env)

    found = json.loads(tool_text(server.call_tool("search_docs", {"query": "agent workflow"})))
    assert found["results"][0] == {
        "title": "Agent workflow",
        "url": "/agent-workflow",
        "snippet": found["results"][0]["snippet"],
    }
    urls = {
        hit["url"]
        for hit in json.loads(
            tool_text(server.call_tool("search_docs", {"query": "the", "limit": 20}))
        )["results"]
    }
    assert "/troubleshooting" not in urls
    assert "/" in urls
    server.wait_for_output("search index: left out")
    server.wait_for_output("troubleshooting.md: HTTP 500")
    # Within the index's 60 s, a second search fetches nothing again.
    fetched = len(docs_origin.requests_for(page_path("index")))
    server.call_tool("search_docs", {"query": "setup"})
    assert len(docs_origin.requests_for(page_path("index"))) == fetched == 1


def test_a_page_the_origin_cannot_serve_is_32603(
    start_http: StartHttp, docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> None:
    docs_origin.serve(page_path("setup"), status=503)
    server = start_http(*UNLIMITED, env=origin_env)
    response = server.rpc("tools/call", {"name": "fetch_page", "arguments": {"url": "/setup"}})
    assert response.json()["error"] == {"code": -32603, "message": 'Could not read "/setup".'}
    server.wait_for_output("HTTP 503")
