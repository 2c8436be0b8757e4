"""A small tree of pages for the search tests: API pages, guides, a pasted error's page,
and pages that repeat an identifier more often than its own reference page does."""

from __future__ import annotations

from kinetis_mcp_docs.server.search.index import SearchIndex

FILLER = "Pages render on the server first and then hydrate in the browser. " * 6

PAGES = {
    "/api/use-fetch": (
        "---\ntitle: useFetch\ndescription: Fetch data with an SSR-friendly composable.\n---\n\n"
        "## Usage\n\nCall it in setup:\n\n"
        "```ts\nconst { data } = await useFetch('/api/modules')\n```\n\n"
        "## Options\n\n- `lazy`: resolve after navigation.\n"
        "- `server`: fetch on the server.\n"
    ),
    "/guide/data-fetching": (
        "# Data Fetching\n\n"
        + "You can fetch data with useFetch or with useAsyncData and $fetch. " * 5
        + "\n\n## Caching\n\nuseFetch caches by key. useFetch again.\n"
    ),
    "/blog/announcing": (
        "# Announcing 4.0\n\nuseFetch got faster, useFetch got smaller, useFetch everywhere.\n"
    ),
    "/guide/esm": (
        "# ES Modules\n\n"
        + FILLER
        + "\n\n## Troubleshooting\n\nYou may see this in a terminal:\n\n"
        "```\nSyntaxError: Named export 'named' not found. The requested module "
        "'sample-library' is a CommonJS module, which may not support all module.exports as "
        "named exports.\n```\n\nImport the default export instead.\n"
    ),
    "/guide/modules": (
        "# Modules\n\nA module is a library: named exports, the default export, a CommonJS "
        "module or an ES module, any module may be imported. " * 3 + "\n"
    ),
    "/guide/testing": (
        "# Testing\n\n" + FILLER + "\n\n## Vitest\n\nConfigure vitest in vitest.config.ts to "
        "run the unit tests.\n"
    ),
    "/guide/configuration": (
        "# Configuration\n\nHow to configure the project: how to set options, how to read "
        "them, how to change them.\n"
    ),
}


def relevance_index(pages: dict[str, str] = PAGES) -> SearchIndex:
    """The relevance ranking's index of `pages`."""
    return SearchIndex("relevance").changed(pages.items())
