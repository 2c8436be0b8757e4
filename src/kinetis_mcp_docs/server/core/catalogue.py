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
        "Kinetis MCP Docs",
        "What this server is, a map of every page with one line each, and where to start.",
    ),
    (
        "agent-workflow",
        "Agent workflow",
        (
            "Start here: how an agent finds, searches and reads these pages instead of "
            "answering from memory."
        ),
    ),
    (
        "setup",
        "Setup",
        (
            "Installing for Claude Code or Codex: what setup does, the install directory, "
            "mirrors, local pages, status, update and uninstall."
        ),
    ),
    (
        "updates",
        "Updates",
        (
            "The daily, atomic update run at spawn: lock, throttle, deadline, failure "
            "handling, forcing and rolling back."
        ),
    ),
    (
        "server",
        "Server",
        (
            "Running the server, the resource catalogue, how pages are fetched live, "
            "proxies, failures and concurrency."
        ),
    ),
    (
        "http",
        "HTTP route",
        (
            "kinetis-docs serve --http: one shared MCP endpoint with search_docs and "
            "fetch_page; running, deploying, access, rate limit, errors, curl examples."
        ),
    ),
    (
        "tools",
        "Tools",
        (
            "kinetis_read_doc and kinetis_search_doc in full: arguments, results, window and "
            "search rules, refusals."
        ),
    ),
    (
        "protocol",
        "Protocol",
        (
            "The MCP 2025-06-18 wire: methods, error codes, ids, notifications, framing, and "
            "decisions the reference leaves open."
        ),
    ),
    (
        "embedding",
        "Embedding",
        (
            "Using DocsApplication inside another MCP server's process, with exception "
            "mapping and a custom page source."
        ),
    ),
    (
        "development",
        "Development",
        (
            "Working on the project: source layout, nox sessions, CI, test seams, "
            "conventions, and adding a page."
        ),
    ),
    (
        "troubleshooting",
        "Troubleshooting",
        (
            "Symptom, cause and fix: refused directory, missing CLI or venv, proxies, CAs, "
            "-32603 reads, updates, clients."
        ),
    ),
    (
        "performance",
        "Performance",
        "Performance targets and the results of the benchmark session (nox -s bench).",
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
