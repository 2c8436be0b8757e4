"""The yardstick: the same two tools and resources, written with the official MCP Python SDK.

`python benchmarks/peer_server.py` serves over stdio with the SDK's high-level server API
(`mcp.server.mcpserver.MCPServer`, called FastMCP before mcp 2). It offers what
`kinetis-mcp-docs` offers — the catalogue as resources, `kinetis_read_doc` and
`kinetis_search_doc` with the same arguments and the same result documents — and reads the
same pages from the same origin: `https://raw.githubusercontent.com/...` through httpx,
honouring `HTTPS_PROXY` and `SSL_CERT_FILE`, streamed and abandoned past 4 MiB, with a 10 s
idle timeout and a 30 s total deadline. The window and search logic is the project's own
(`kinetis_mcp_docs.server.core.lines`), so what the benchmark compares is the transport and the
framework, not the algorithms.

It is written the way the SDK's documentation shows: typed function signatures become
the input schemas, pydantic validates the arguments, async functions run on the event loop.
Where the SDK cannot express part of the contract, the peer keeps the SDK's behaviour (the
benchmark's notes list the differences); that costs it nothing in the figures measured.

Installed in the benchmark session only: it is a yardstick, not a dependency.
"""

from __future__ import annotations

import json
import ssl
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import httpx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.server.application import INSTRUCTIONS, SERVER_NAME
from kinetis_mcp_docs.server.core import catalogue
from kinetis_mcp_docs.server.core.lines import MAX_LINE_COUNT
from kinetis_mcp_docs.server.sources.fetcher import ORIGIN_PREFIX
from kinetis_mcp_docs.server.tools.doc_tools import (
    MAX_QUERY_LENGTH,
    doc_toolset,
    search_document,
    window_document,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

IDLE_TIMEOUT = 10.0
TOTAL_DEADLINE = 30.0
MAX_BODY_BYTES = 4 * 1024 * 1024


class PageFetchFailed(Exception):
    """A page could not be fetched or decoded; the reason is for stderr."""


class Pages:
    """One shared `httpx.AsyncClient`, created on the first read, so connections are reused."""

    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None

    def _client_now(self) -> httpx.AsyncClient:
        if self._client is None:
            context = httpx.create_ssl_context(trust_env=True)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            self._client = httpx.AsyncClient(
                verify=context,
                trust_env=True,
                follow_redirects=False,
                timeout=httpx.Timeout(IDLE_TIMEOUT),
            )
        return self._client

    async def fetch(self, slug: str) -> str:
        url = f"{ORIGIN_PREFIX}{slug}.md"
        try:
            with anyio.fail_after(TOTAL_DEADLINE):
                return await self._download(url)
        except (httpx.HTTPError, OSError, UnicodeDecodeError, TimeoutError) as error:
            raise PageFetchFailed(f"{url}: {error!r}") from error

    async def _download(self, url: str) -> str:
        async with self._client_now().stream("GET", url) as response:
            if response.status_code != httpx.codes.OK:
                raise PageFetchFailed(f"{url}: HTTP {response.status_code}")
            received = bytearray()
            async for chunk in response.aiter_bytes():
                if len(received) + len(chunk) > MAX_BODY_BYTES:
                    raise PageFetchFailed(f"{url}: body exceeds 4 MiB")
                received += chunk
        return received.decode("utf-8")


PAGES = Pages()


async def _page_text(uri: str) -> str | None:
    """The page's text, None when `uri` names no catalogue page; -32603 when unreadable."""
    slug = catalogue.slug_of(uri)
    if slug is None:
        return None
    try:
        return await PAGES.fetch(slug)
    except PageFetchFailed as error:
        raise MCPError(INTERNAL_ERROR, f'Could not read "{uri}".', None) from error


def _document(document: dict[str, Any], *, is_error: bool) -> CallToolResult:
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=document,
        is_error=is_error,
    )


_REFUSED_UNKNOWN = {"status": "resource_unknown"}
_REFUSED_RANGE = {"status": "line_out_of_range"}


async def _tool_result(
    uri: str, build: Callable[[str], dict[str, object] | None]
) -> CallToolResult:
    """Fetch the page and build the tool's document from it, or the contract's refusal."""
    text = await _page_text(uri)
    if text is None:
        return _document(_REFUSED_UNKNOWN, is_error=True)
    document = build(text)
    if document is None:
        return _document(_REFUSED_RANGE, is_error=True)
    return _document(document, is_error=False)


Uri = Annotated[
    str, Field(min_length=1, description="A catalogue page, e.g. kinetis://docs/index.")
]
StartLine = Annotated[int, Field(ge=1, description="First line, from 1.")]


async def kinetis_read_doc(
    uri: Uri,
    startLine: StartLine = 1,  # noqa: N803 - the contract's argument names
    lineCount: Annotated[int, Field(ge=1, le=MAX_LINE_COUNT)] = MAX_LINE_COUNT,  # noqa: N803
) -> CallToolResult:
    return await _tool_result(uri, lambda text: window_document(uri, text, startLine, lineCount))


async def kinetis_search_doc(
    uri: Uri,
    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_LENGTH)],
    startLine: StartLine = 1,  # noqa: N803 - the contract's argument names
) -> CallToolResult:
    return await _tool_result(uri, lambda text: search_document(uri, text, query, startLine))


def _reader(slug: str) -> Callable[[], Awaitable[str]]:
    async def read() -> str:
        try:
            return await PAGES.fetch(slug)
        except PageFetchFailed as error:
            raise ResourceError(f'Could not read "{catalogue.URI_PREFIX}{slug}".') from error

    return read


def build_server() -> MCPServer[Any]:
    """The peer: the catalogue's resources and both tools on an `MCPServer`."""
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    for slug, name, description in catalogue.PAGES:
        server.add_resource(
            FunctionResource(
                uri=catalogue.URI_PREFIX + slug,
                name=name,
                description=description,
                mime_type=catalogue.MIME_TYPE,
                fn=_reader(slug),
            )
        )
    functions: tuple[Callable[..., Awaitable[CallToolResult]], ...] = (
        kinetis_read_doc,
        kinetis_search_doc,
    )
    definitions = doc_toolset(lambda _uri: None).definitions()
    for tool, function in zip(definitions, functions, strict=True):
        annotations = tool["annotations"]
        assert isinstance(annotations, dict)
        server.add_tool(
            function,
            name=str(tool["name"]),
            title=str(tool["title"]),
            description=str(tool["description"]),
            annotations=ToolAnnotations(
                title=str(annotations["title"]),
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=True,
            ),
        )
    return server


if __name__ == "__main__":
    build_server().run("stdio")
