"""The yardstick for the HTTP route: the same two tools over the same tree, on the MCP SDK.

`python benchmarks/http_peer.py TREE` serves `search_docs` and `fetch_page` with the SDK's
high-level server (`MCPServer`) and its own stateless Streamable HTTP app (JSON responses)
at `/api/mcp`, on uvicorn with one worker: the way the SDK's documentation shows a
stateless HTTP server. The pages are read into memory at start and searched with a plain
scan, the contract's scoring as written (lowercase, split, +4 title, +1 title/body/url);
`fetch_page` reads the file, refusing `.`/`..`/NUL segments. Installed in the bench session
only: it is a yardstick, not a dependency.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ContentBlock, TextContent

Pages = dict[str, tuple[str, str, str]]


def _title(text: str, url: str) -> str:
    for line in text.splitlines():
        if line.startswith("title:"):
            return line[6:].strip()
        if line.startswith("# "):
            return line[2:].strip()
    return url


def load(root: Path) -> Pages:
    """url -> (title, text, lowercased text) for every page under `root`."""
    pages = {}
    for path in sorted(root.rglob("*.md*")):
        url = "/" + path.relative_to(root).with_suffix("").as_posix()
        text = path.read_text(encoding="utf-8")
        pages[url] = (_title(text, url), text, text.lower())
    return pages


def plain_search(pages: Pages, query: str, limit: float) -> list[dict[str, str]]:
    """The contract's scoring by a plain scan of every page for every token."""
    tokens = query.lower().split()
    count = max(1, min(20, int(limit // 1)))
    scored = []
    for url, (title, text, folded) in pages.items():
        score = 0
        for token in tokens:
            in_title = token in title.lower()
            score += 4 if in_title else 0
            score += 1 if in_title or token in folded or token in url.lower() else 0
        if score:
            scored.append((-score, url, title, text, folded))
    scored.sort()
    results = []
    for _, url, title, text, folded in scored[:count]:
        found = min((folded.find(t) for t in tokens if t in folded), default=0)
        snippet = " ".join(text[max(0, found - 60) : found + 400].split())[:240]
        results.append({"title": title, "url": url, "snippet": snippet})
    return results


def build_server(root: Path) -> MCPServer[Any]:
    pages = load(root)
    server: MCPServer[Any] = MCPServer("kinetis-mcp-docs-peer", log_level="WARNING")

    @server.tool(description="Search the documentation by free-text query.")
    def search_docs(query: str, limit: float = 5) -> CallToolResult:
        if not query.split():
            missing: list[ContentBlock] = [TextContent(type="text", text="Missing query")]
            return CallToolResult(content=missing, is_error=True)
        results = plain_search(pages, query, limit)
        document = json.dumps({"query": query, "results": results}, indent=2)
        return CallToolResult(content=[TextContent(type="text", text=document)])

    @server.tool(description="Fetch the raw content of a documentation page by URL path.")
    def fetch_page(url: str) -> CallToolResult:
        segments = [s for s in url.replace("\\", "/").split("/") if s]
        if any(s in (".", "..") or "\0" in s for s in segments):
            raise ValueError("Path traversal rejected")
        base = root.joinpath(*segments)
        for candidate in (base.with_name(base.name + ".md"), base / "index.md"):
            if candidate.is_file():
                text = candidate.read_text(encoding="utf-8")
                document = json.dumps({"url": "/" + "/".join(segments), "content": text}, indent=2)
                return CallToolResult(content=[TextContent(type="text", text=document)])
        message = f"Page not found: /{'/'.join(segments)}"
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)

    return server


if __name__ == "__main__":
    app = build_server(Path(sys.argv[1])).streamable_http_app(
        streamable_http_path="/api/mcp", json_response=True, stateless_http=True
    )
    uvicorn.run(app, host="127.0.0.1", port=0, log_level="info", access_log=False)
