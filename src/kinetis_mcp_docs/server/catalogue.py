"""The pages this release serves, written out so a release lists what it was cut with.

`kinetis://docs/<slug>` is `docs/<slug>.md` in the Kinetis repository; a test pairs this
list with the repository's `docs/*.md` in both directions. The content of each page is
fetched live on every read; only the list is fixed.
"""

from __future__ import annotations

URI_PREFIX = "kinetis://docs/"
MIME_TYPE = "text/markdown"

# Each entry: the slug, the resource name, and its description.
PAGES: tuple[tuple[str, str, str], ...] = (
    (
        "index",
        "Kinetis docs: start here",
        "What the Kinetis documentation server is, and a map of every page it serves.",
    ),
    (
        "agent-workflow",
        "How an agent reads these docs",
        "Start here as an agent: find the page, search it for a term, read windows around it.",
    ),
    (
        "setup",
        "Installing for Claude Code or Codex",
        "kinetis-docs setup: prerequisites, the install directory and its marker, registration.",
    ),
    (
        "updates",
        "Daily self-update on spawn",
        "How the installed server updates itself: the daily check, the lock, atomic switches.",
    ),
    (
        "server",
        "The stdio server and page fetch",
        "Running the server, the resource catalogue, fetch bounds, proxies and certificates.",
    ),
    (
        "tools",
        "kinetis_read_doc and kinetis_search_doc",
        "Both tools in full: arguments, result documents, window and search rules, refusals.",
    ),
    (
        "protocol",
        "MCP protocol details",
        "MCP 2025-06-18 as this server speaks it: methods, error codes, framing, decisions.",
    ),
    (
        "embedding",
        "Embedding DocsApplication",
        "Serving these resources and tools from another server's process with the Python API.",
    ),
    (
        "development",
        "Working on kinetis-mcp-docs",
        "Layout, nox sessions, the test seams, and how to add a page to the catalogue.",
    ),
    (
        "troubleshooting",
        "Troubleshooting",
        "Symptoms, causes and fixes: refused directories, proxies, certificates, failed updates.",
    ),
    (
        "performance",
        "Performance",
        "Benchmark results beside a server built on the official MCP Python SDK, and how to rerun.",
    ),
)

SLUGS: frozenset[str] = frozenset(slug for slug, _, _ in PAGES)


def slug_of(uri: str) -> str | None:
    """The slug a catalogue URI names, or None when it names no catalogue page."""
    if uri.startswith(URI_PREFIX):
        slug = uri[len(URI_PREFIX) :]
        if slug in SLUGS:
            return slug
    return None


def resources() -> list[dict[str, object]]:
    """The catalogue as `resources/list` entries."""
    return [
        {
            "uri": URI_PREFIX + slug,
            "name": name,
            "description": description,
            "mimeType": MIME_TYPE,
        }
        for slug, name, description in PAGES
    ]
