"""DocsApplication: the catalogue, the whole-page read and the tools, without any wire.

This is the embeddable core. The stdio server wraps it in JSON-RPC and serves its
resources and two page tools; the HTTP route serves its `site_tools()` (`search_docs` and
`fetch_page`) over the same core; a host server can compose it in its own process and
publish the same resources and tools beside its own.
Errors are this module's exceptions; each host maps them to its own wire.

Importing this module is cheap, because the stdio server imports it on every spawn:
`typing` (through `pages`) and the HTTP client are imported on the first page read, which
pays for the network anyway.
"""

from __future__ import annotations

from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

from .. import __version__
from .core import catalogue
from .core.display import readable
from .core.exceptions import (
    DocsError,
    InvalidArguments,
    PageUnavailable,
    RejectedUrl,
    UnknownResource,
)
from .core.unavailable import unavailable_as
from .tools.doc_tools import doc_toolset

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable

    from .site.pages import SitePages
    from .sources.page_source import PageSource
    from .tools.base import Toolset

__all__ = [
    "DocsApplication",
    "DocsError",
    "InvalidArguments",
    "PageUnavailable",
    "RejectedUrl",
    "UnknownResource",
]

SERVER_NAME = "kinetis-mcp-docs"

_HOW_TO_READ = (
    "Read these pages rather than answering Kinetis questions from memory. "
    "Start with kinetis://docs/agent-workflow. Read a page with kinetis_read_doc, a bounded "
    "window of lines (continue at endLine + 1 while hasMore is true); locate a named term in "
    "a page you know with kinetis_search_doc, then read a window around the match; use "
    "resources/read only when you need a whole page."
)
_CHECK_THE_RELEASE = "check that release before relying on a recent feature."
INSTRUCTIONS = (
    "This server serves the current Kinetis documentation, fetched live from the Kinetis "
    f"repository. {_HOW_TO_READ} Pages come from the main branch, so they can describe "
    "behaviour newer than the Kinetis release installed in the project you are working on: "
    f"{_CHECK_THE_RELEASE}"
)


def local_instructions(directory: str) -> str:
    """The instructions under `--docs-dir`: where the pages come from is what differs.

    The directory is shown `readable`: a path's bytes that are not UTF-8 would otherwise
    reach the `initialize` answer as lone surrogates, which a strict client refuses."""
    return (
        "This server serves the Kinetis documentation from a local directory of its pages, "
        f"{readable(directory)}, read again on every call. {_HOW_TO_READ} The pages are "
        "whatever that directory holds, so they can describe behaviour other than the Kinetis "
        f"release installed in the project you are working on: {_CHECK_THE_RELEASE}"
    )


class DocsApplication:
    """The Kinetis docs resources and tools over a page source. Safe to call from threads."""

    def __init__(
        self,
        source: PageSource | None = None,
        *,
        pages_root: str | None = None,
        docs_dir: str | None = None,
        ranking: str = "owndocs",
        local_pages: str | None = None,
        fetch_observer: Callable[[str], None] | None = None,
    ) -> None:
        """`source` serves the catalogue (the live origin by default); `docs_dir`, instead,
        a directory holding its pages as `<slug>.md`, read on every call, which the
        instructions then name. `pages_root`, when given, is the local tree the HTTP
        route's tools serve instead of the catalogue. `ranking` is how `search_docs`
        ranks: `owndocs` (the contract's) or `relevance`. `local_pages`, 1.0's way to name
        the directory a `source` of the host's reads, still names it in the instructions.
        `fetch_observer` is told the outcome of every page the site tools read (`site`
        names them), for a host's metrics."""
        if source is not None and docs_dir is not None:
            raise ValueError("give a page source or a docs directory, not both")
        named = docs_dir if docs_dir is not None else local_pages
        self._instructions = INSTRUCTIONS if named is None else local_instructions(named)
        self._source = source
        self._docs_dir = docs_dir
        self._source_lock = allocate_lock()
        self._tools = doc_toolset(self._page_text)
        self._pages_root = pages_root
        self._ranking = ranking
        self._fetch_observer = fetch_observer
        self._site: tuple[SitePages, Toolset] | None = None

    @property
    def server_info(self) -> dict[str, str]:
        return {"name": SERVER_NAME, "version": __version__}

    @property
    def instructions(self) -> str:
        return self._instructions

    def resources(self) -> list[dict[str, object]]:
        """Every catalogue page, as `resources/list` entries."""
        return catalogue.resources()

    def read_resource(self, uri: object) -> dict[str, object]:
        """One `resources/read` contents entry holding the whole page."""
        if not isinstance(uri, str) or not uri:
            raise InvalidArguments('"uri" must be a non-empty string.')
        slug = catalogue.slug_of(uri)
        if slug is None:
            raise UnknownResource(uri)
        return {"uri": uri, "mimeType": catalogue.MIME_TYPE, "text": self._fetch(uri, slug)}

    def tools(self) -> list[dict[str, object]]:
        """Both tool definitions, as `tools/list` entries."""
        return self._tools.definitions()

    def call_tool(self, name: object, arguments: object = None) -> dict[str, object]:
        """Run a tool: a `tools/call` result with the document as text and as structuredContent.

        Arguments are validated completely before any page is fetched. A window or search
        that ran and was refused is a result with `isError: true`, not an exception.
        """
        return self._tools.call(name, arguments)

    def site_tools(self) -> Toolset:
        """`search_docs` and `fetch_page` (the HTTP route's tools), over the pages by URL path:
        the local tree of `pages_root`, else the catalogue read through the page source."""
        return self._site_parts()[1]

    def site_pages(self) -> SitePages:
        """The pages `site_tools()` serves, whose index a host may build before the first
        search (`prepare`) and keep current (`keep_current`)."""
        return self._site_parts()[0]

    def close(self) -> None:
        with self._source_lock:
            site, self._site = self._site, None
        if site is not None:
            site[0].close()
        with self._source_lock:
            if self._source is not None:
                self._source.close()

    def _site_parts(self) -> tuple[SitePages, Toolset]:
        with self._source_lock:
            if self._site is None:
                # Imported here: the stdio server never needs the search index.
                from .site.pages import CataloguePages, TreePages  # noqa: PLC0415
                from .tools.site_tools import site_toolset  # noqa: PLC0415

                observe = self._fetch_observer
                pages: SitePages = (
                    CataloguePages(self._page_source, ranking=self._ranking, observe=observe)
                    if self._pages_root is None
                    else TreePages(self._pages_root, ranking=self._ranking, observe=observe)
                )
                self._site = (pages, site_toolset(pages))
            return self._site

    def _page_text(self, uri: str) -> str | None:
        """The page `uri` names, fetched now; None, with no fetch, when it names none."""
        slug = catalogue.slug_of(uri)
        return None if slug is None else self._fetch(uri, slug)

    def _fetch(self, uri: str, slug: str) -> str:
        source = self._page_source()
        with unavailable_as(uri):
            return source.fetch(slug)

    def _page_source(self) -> PageSource:
        with self._source_lock:
            if self._source is None and self._docs_dir is not None:
                from .sources.localdocs import LocalPageSource  # noqa: PLC0415

                self._source = LocalPageSource(self._docs_dir)
            elif self._source is None:
                # Imported here: httpx costs more start-up time than everything else.
                from .sources.fetcher import HttpPageSource  # noqa: PLC0415

                self._source = HttpPageSource()
            return self._source
