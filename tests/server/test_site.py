"""The search indexes of the page sets: the catalogue's rebuilt at most every ttl (the old one
answering meanwhile), a tree's brought up to date on every search, and a tree's files read
only where they provably lie inside it."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.core.catalogue import PAGES
from kinetis_mcp_docs.server.core.exceptions import RejectedUrl
from kinetis_mcp_docs.server.search.index import Hit, SearchIndex
from kinetis_mcp_docs.server.site import pages as site
from kinetis_mcp_docs.server.site import tree_files
from kinetis_mcp_docs.server.site.pages import CataloguePages, TreePages
from kinetis_mcp_docs.server.site.tree_watch import TreeWatch
from kinetis_mcp_docs.server.sources.page_source import PageFetchError
from tests.support.http import write_tree
from tests.support.processes import wait_for

WAIT = 30.0


class GatedSource:
    """Serves `text` for every slug; once `gate` is cleared, a fetch waits until it is set.
    With `failure` set, every fetch raises it instead."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.fetched = 0
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()
        self.failure: Exception | None = None
        self._lock = threading.Lock()

    def fetch(self, slug: str) -> str:
        with self._lock:
            self.fetched += 1
        if not self.gate.is_set():
            self.waiting.set()
            assert self.gate.wait(WAIT)
        if self.failure is not None:
            raise self.failure
        if slug == "setup":
            raise PageFetchError("https://origin/setup.md", "HTTP 500")
        return self.text

    def close(self) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _rebuilds() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "kinetis-docs index"]


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
        assert source.waiting.wait(WAIT)
        assert pages.search("new", 20) == []
        source.gate.set()
        wait_for(lambda: len(pages.search("new", 20)) == len(PAGES) - 1, "the rebuilt index", WAIT)
    finally:
        pages.close()


def test_within_the_ttl_nothing_is_fetched_again() -> None:
    source = GatedSource("# T\n\nwords\n")
    pages = CataloguePages(lambda: source, ttl=3600.0)
    pages.search("words", 5)
    fetched = source.fetched
    pages.search("words", 5)
    pages.close()
    assert source.fetched == fetched == len(PAGES)


def test_a_rebuild_that_fails_is_tried_again_a_ttl_later_not_on_every_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = GatedSource("# T\n\nwords\n")
    clock = Clock()
    pages = CataloguePages(lambda: source, ttl=60.0, clock=clock)
    try:
        pages.search("words", 5)
        source.failure = RuntimeError("a bug in the page source")
        clock.now = 61.0
        pages.search("words", 5)  # due: a rebuild starts, and fails
        for thread in _rebuilds():
            thread.join(WAIT)
        fetched = source.fetched
        assert fetched > len(PAGES)
        for _ in range(20):
            assert len(pages.search("words", 5)) == 5  # the previous index answers
            for thread in _rebuilds():
                thread.join(WAIT)
        assert source.fetched == fetched  # no rebuild started again before the ttl
        assert "the rebuild failed" in capsys.readouterr().err
        clock.now = 121.0
        source.failure = None
        pages.search("words", 5)
        wait_for(lambda: source.fetched > fetched, "the next rebuild", WAIT)
    finally:
        pages.close()
        for thread in _rebuilds():
            thread.join(WAIT)


def test_closing_does_not_wait_for_a_rebuild_under_way() -> None:
    earlier = set(_rebuilds())  # another test's rebuild may still be finishing
    source = GatedSource("# T\n\nwords\n")
    clock = Clock()
    pages = CataloguePages(lambda: source, ttl=60.0, clock=clock)
    pages.search("words", 5)
    source.gate.clear()
    clock.now = 61.0
    pages.search("words", 5)
    assert source.waiting.wait(WAIT)
    pages.close()  # returns while the rebuild's fetches are still blocked
    (rebuild,) = set(_rebuilds()) - earlier
    assert rebuild.is_alive()
    source.gate.set()
    rebuild.join(WAIT)


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
            (root / "sub" / "a.md").write_text("# A\nsecond\n", encoding="utf-8")
            assert _hits(pages, "first") == []
            (root / "new").mkdir()
            (root / "new" / "index.md").write_text("# N\nsecond\n", encoding="utf-8")
            assert _hits(pages, "second") == ["/new", "/sub/a"]
            (root / "sub" / "a.md").unlink()
            assert _hits(pages, "second") == ["/new"]
        finally:
            pages.close()


def test_a_change_no_watch_reports_is_seen_once_the_tree_is_due_a_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A network filesystem changed from another machine: inotify here reports nothing.
    monkeypatch.setattr(TreeWatch, "changed", lambda _self: False)
    root = write_tree(tmp_path / "tree", {"a.md": "# A\nfirst\n"})
    clock = Clock()
    pages = TreePages(str(root), clock=clock)
    try:
        assert _hits(pages, "first") == ["/a"]
        (root / "a.md").write_text("# A\nsecond\n", encoding="utf-8")
        clock.now = site.TREE_LOOK_SECONDS - 1
        assert _hits(pages, "second") == []  # the watch is trusted until the look is due
        clock.now = site.TREE_LOOK_SECONDS
        assert _hits(pages, "second") == ["/a"]
        assert _hits(pages, "first") == []
    finally:
        pages.close()


def test_a_file_created_in_a_new_directory_while_it_is_first_walked_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "tree", {"a.md": "# A\napple\n"})

    class Racing(TreeWatch):
        """Creates a file in `new/` at the moment the walk comes to watch it."""

        def watch(self, directory: str) -> bool:
            late = Path(directory) / "late.md"
            if directory.endswith("/new") and not late.exists():
                late.write_text("# Late\nkiwi\n", encoding="utf-8")
            return super().watch(directory)

    monkeypatch.setattr(site, "TreeWatch", Racing)
    pages = TreePages(str(root))
    try:
        assert _hits(pages, "apple") == ["/a"]
        (root / "new").mkdir()
        assert _hits(pages, "kiwi") == ["/new/late"]
        assert _hits(pages, "kiwi") == ["/new/late"]
    finally:
        pages.close()


def test_a_directory_deleted_while_it_is_walked_leaves_inotify_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "tree"
    (root / "doomed").mkdir(parents=True)
    (root / "a.md").write_text("# A\napple\n", encoding="utf-8")

    class Racing(TreeWatch):
        """Deletes `doomed/` at the moment the walk comes to watch it (ENOENT)."""

        def watch(self, directory: str) -> bool:
            if directory.endswith("/doomed"):
                shutil.rmtree(directory, ignore_errors=True)
            return super().watch(directory)

    monkeypatch.setattr(site, "TreeWatch", Racing)
    pages = TreePages(str(root))
    try:
        assert _hits(pages, "apple") == ["/a"]
        assert "cannot watch the tree" not in capsys.readouterr().err
        (root / "b.md").write_text("# B\napple\n", encoding="utf-8")
        assert _hits(pages, "apple") == ["/a", "/b"]
    finally:
        pages.close()


def _inotify_watches() -> int:
    """How many inotify watches this process holds, as the kernel lists them."""
    count = 0
    for info_file in Path("/proc/self/fdinfo").iterdir():
        try:
            info = info_file.read_text()
        except OSError:
            continue
        count += info.count("inotify wd:")
    return count


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="no /proc here")
def test_a_tree_moved_out_of_the_root_is_no_longer_watched(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "deeper" / "a.md").write_text("# A\napple\n", encoding="utf-8")
    before = _inotify_watches()
    pages = TreePages(str(root))
    try:
        assert _hits(pages, "apple") == ["/sub/deeper/a"]
        assert _inotify_watches() == before + 3  # the root, sub and sub/deeper
        (root / "sub").rename(tmp_path / "elsewhere")
        assert _hits(pages, "apple") == []
        assert _inotify_watches() == before + 1  # the root alone
        (root / "b.md").write_text("# B\napple\n", encoding="utf-8")
        assert _hits(pages, "apple") == ["/b"]
    finally:
        pages.close()


def test_a_root_that_is_a_symlink_is_followed_where_it_leads_now(tmp_path: Path) -> None:
    for release, word in (("one", "alpha"), ("two", "beta")):
        (tmp_path / release).mkdir()
        (tmp_path / release / "page.md").write_text(f"# Page\n{word}\n", encoding="utf-8")
    current = tmp_path / "current"
    current.symlink_to(tmp_path / "one")
    pages = TreePages(str(current))
    try:
        assert _hits(pages, "alpha") == ["/page"]
        assert pages.read(("page",), "/page") == "# Page\nalpha\n"
        swapping = tmp_path / "current.new"
        swapping.symlink_to(tmp_path / "two")
        swapping.replace(current)  # the link swapped in one rename, as a release does
        assert _hits(pages, "alpha") == []
        assert _hits(pages, "beta") == ["/page"]
        assert pages.read(("page",), "/page") == "# Page\nbeta\n"
    finally:
        pages.close()


def _tree_beside_a_secret(tmp_path: Path) -> tuple[Path, Path]:
    """`tree/docs/page.md` inside, and `outside/page.md`, the file a swap would expose."""
    root = tmp_path / "tree"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "page.md").write_text("inside\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "page.md").write_text("SECRET\n", encoding="utf-8")
    return root, outside


def _swap_docs_out(root: Path, outside: Path) -> None:
    shutil.rmtree(root / "docs")
    (root / "docs").symlink_to(outside)


def test_a_directory_swapped_for_a_symlink_out_after_resolution_is_refused(
    tmp_path: Path,
) -> None:
    root, outside = _tree_beside_a_secret(tmp_path)
    resolved = os.path.realpath(root / "docs" / "page.md")
    _swap_docs_out(root, outside)  # between the resolution and the open
    with pytest.raises(RejectedUrl):
        tree_files.read_inside(os.path.realpath(root), resolved)


def test_a_file_swapped_for_a_symlink_after_resolution_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (tmp_path / "secret.md").write_text("SECRET\n", encoding="utf-8")
    resolved = os.path.realpath(root / "page.md")
    (root / "page.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(RejectedUrl):
        tree_files.read_inside(os.path.realpath(root), resolved)


def test_a_swap_between_resolving_and_opening_a_page_is_refused_when_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = _tree_beside_a_secret(tmp_path)
    read_inside = tree_files.read_inside

    def swapped_first(real_root: str, real: str) -> str | None:
        _swap_docs_out(root, outside)
        return read_inside(real_root, real)

    monkeypatch.setattr(tree_files, "read_inside", swapped_first)
    pages = TreePages(str(root))
    with pytest.raises(RejectedUrl):
        pages.read(("docs", "page"), "/docs/page")


def test_a_search_under_way_holds_up_no_other_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "tree", {"a.md": "# A\napple\n"})
    entered, release = threading.Event(), threading.Event()
    search = SearchIndex.search

    def slow_for_slow(index: SearchIndex, query: str, limit: int) -> list[Hit]:
        if query == "slow":
            entered.set()
            assert release.wait(WAIT)
        return search(index, query, limit)

    monkeypatch.setattr(SearchIndex, "search", slow_for_slow)
    source = GatedSource("# T\n\napple\n")
    catalogue = CataloguePages(lambda: source, ttl=3600.0)
    for pages in (TreePages(str(root)), catalogue):
        try:
            slow = threading.Thread(target=pages.search, args=("slow", 5))
            slow.start()
            assert entered.wait(WAIT)
            assert pages.search("apple", 5)  # while the slow one is still searching
            release.set()
            slow.join(WAIT)
        finally:
            release.set()
            pages.close()
        entered.clear()
        release.clear()


def test_a_tree_index_that_failed_to_build_is_built_again_by_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "tree", {"a.md": "# A\napple\n"})
    changed = SearchIndex.changed
    failures = [RuntimeError("a bug while indexing")]

    def failing_once(index: SearchIndex, updates: Iterable[tuple[str, str | None]]) -> SearchIndex:
        if failures:
            list(updates)  # the pages are read, then the build fails
            raise failures.pop()
        return changed(index, updates)

    monkeypatch.setattr(SearchIndex, "changed", failing_once)
    pages = TreePages(str(root))
    try:
        with pytest.raises(RuntimeError):
            pages.search("apple", 5)
        assert _hits(pages, "apple") == ["/a"]
    finally:
        pages.close()


def test_a_catalogue_search_with_no_page_readable_is_an_error_result_not_no_match() -> None:
    from kinetis_mcp_docs.server.tools.site_tools import site_toolset  # noqa: PLC0415

    source = GatedSource("# T\n\nwords\n")
    source.failure = PageFetchError("https://origin/page.md", "HTTP 503")
    pages = CataloguePages(lambda: source, ttl=3600.0)
    try:
        result = site_toolset(pages).call("search_docs", {"query": "words"})
        assert result["isError"] is True
        content = result["content"]
        assert isinstance(content, list)
        assert "none of the" in content[0]["text"]
        assert "HTTP 503" in content[0]["text"]
        source.failure = None  # one page readable (all but `setup` now): ordinary results
        partial = CataloguePages(lambda: source, ttl=3600.0)
        assert "isError" not in site_toolset(partial).call("search_docs", {"query": "words"})
        partial.close()
    finally:
        pages.close()
