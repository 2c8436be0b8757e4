"""The catalogue's search index: rebuilt at most every ttl, the old one answering meanwhile."""

from __future__ import annotations

import threading

from kinetis_mcp_docs.server.catalogue import PAGES
from kinetis_mcp_docs.server.pages import PageFetchError
from kinetis_mcp_docs.server.site import CataloguePages


class GatedSource:
    """Serves `text` for every slug; once `gate` is cleared, a fetch waits until it is set."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.fetched = 0
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

    def fetch(self, slug: str) -> str:
        self.fetched += 1
        if not self.gate.is_set():
            self.waiting.set()
            assert self.gate.wait(30)
        if slug == "setup":
            raise PageFetchError("https://origin/setup.md", "HTTP 500")
        return self.text

    def close(self) -> None:
        pass


def test_the_previous_index_answers_while_a_rebuild_runs() -> None:
    source = GatedSource("# T\n\nold words\n")
    pages = CataloguePages(lambda: source, ttl=0.0)
    try:
        first = pages.search("old", 20)
        assert len(first) == len(PAGES) - 1  # the failing page is left out
        source.text = "# T\n\nnew words\n"
        source.gate.clear()
        # Due (ttl 0): a rebuild starts, blocked on the gate; the old index answers now.
        assert len(pages.search("old", 20)) == len(PAGES) - 1
        assert source.waiting.wait(30)
        assert pages.search("new", 20) == []
        source.gate.set()
    finally:
        pages.close()
    assert len(pages.search("new", 20)) == len(PAGES) - 1


def test_within_the_ttl_nothing_is_fetched_again() -> None:
    source = GatedSource("# T\n\nwords\n")
    pages = CataloguePages(lambda: source, ttl=3600.0)
    pages.search("words", 5)
    fetched = source.fetched
    pages.search("words", 5)
    pages.close()
    assert source.fetched == fetched == len(PAGES)
