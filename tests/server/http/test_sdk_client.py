"""The official MCP Python SDK's client against the route: it probes server/discover, speaks
2026-07-28, lists both tools and calls each, with and without a bearer token."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from tests.server.http.conftest import UNLIMITED, StartHttp
from tests.support.http import HttpServer

# The HTTP route on uvicorn, uvloop and httptools, each built per interpreter.
pytestmark = pytest.mark.interpreter

TOKEN = "sdk-token"


async def _session(server: HttpServer, token: str | None) -> dict[str, object]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, trust_env=False, timeout=30) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        tools = await client.list_tools()
        searched = await client.call_tool("search_docs", {"query": "mermaid", "limit": 3})
        fetched = await client.call_tool("fetch_page", {"url": "/features/diagrams/mermaid"})
        missing = await client.call_tool("fetch_page", {"url": "/nope"})
        # Not plain ASCII: the client sends Mcp-Name in its =?base64?...?= form.
        unknown = await client.call_tool("recherche_é", {})
        texts = []
        for result in (searched, fetched, missing, unknown):
            (block,) = result.content
            assert isinstance(block, TextContent)
            texts.append(block.text)
        return {
            "version": client.protocol_version,
            "server": client.server_info.name if client.server_info else None,
            "tools": [tool.name for tool in tools.tools],
            "search": json.loads(texts[0]),
            "fetch": json.loads(texts[1]),
            "missing": (missing.is_error, texts[2]),
            "unknown": (unknown.is_error, texts[3]),
        }


def _check(found: dict[str, object], tree_text: str) -> None:
    assert found["version"] == "2026-07-28"
    assert found["server"] == "kinetis-mcp-docs"
    assert found["tools"] == ["search_docs", "fetch_page"]
    search = found["search"]
    assert isinstance(search, dict)
    assert [hit["url"] for hit in search["results"]] == ["/features/diagrams/mermaid"]
    assert found["fetch"] == {"url": "/features/diagrams/mermaid", "content": tree_text}
    assert found["missing"] == (True, "Page not found: /nope")
    assert found["unknown"] == (True, "Unknown tool: recherche_é")


def test_the_sdk_client_discovers_lists_and_calls_both_tools(
    tree_server: HttpServer, docs_tree: Path
) -> None:
    found = anyio.run(_session, tree_server, None)
    _check(found, (docs_tree / "features/diagrams/mermaid.md").read_text("utf-8"))
    tree_server.wait_for_output('"POST /api/mcp HTTP/1.1" 200')


def test_the_sdk_client_with_a_bearer_token_on_a_private_route(
    start_http: StartHttp, docs_tree: Path
) -> None:
    server = start_http(
        "--docs-dir",
        str(docs_tree),
        "--private",
        *UNLIMITED,
        settings={"MCP_ENABLED": "true", "MCP_BEARER_TOKEN": TOKEN},
    )
    found = anyio.run(_session, server, TOKEN)
    _check(found, (docs_tree / "features/diagrams/mermaid.md").read_text("utf-8"))
