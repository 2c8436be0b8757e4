"""The search indexes of the page sets: the catalogue's rebuilt at most every ttl (the old one
answering meanwhile), a tree's brought up to date on every search."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kinetis_mcp_docs.server import site
from kinetis_mcp_docs.server.catalogue import PAGES
from kinetis_mcp_docs.server.pages import PageFetchError
from kinetis_mcp_docs.server.site import CataloguePages, TreePages
from kinetis_mcp_docs.server.tree_watch import TreeWatch


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


def _hits(pages: TreePages, query: str) -> list[str]:
    return [hit.url for hit in pages.search(query, 20)]


def test_a_tree_sees_a_change_on_the_next_search_with_inotify_and_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for watched in (True, False):
        if not watched:

            def unavailable() -> TreeWatch:
                raise OSError("inotify is not available here")

            monkeypatch.setattr(site, "TreeWatch", unavailable)
        root = tmp_path / str(watched)
        (root / "sub").mkdir(parents=True)
        (root / "sub" / "a.md").write_text("# A\nfirst\n", encoding="utf-8")
        pages = TreePages(str(root))
        try:
            assert _hits(pages, "first") == ["/sub/a"]
            assert (pages._watch is not None) is watched
            (root / "sub" / "a.md").write_text("# A\nsecond\n", encoding="utf-8")
            assert _hits(pages, "first") == []
            (root / "new").mkdir()
            (root / "new" / "index.md").write_text("# N\nsecond\n", encoding="utf-8")
            assert _hits(pages, "second") == ["/new", "/sub/a"]
            (root / "sub" / "a.md").unlink()
            assert _hits(pages, "second") == ["/new"]
        finally:
            pages.close()
