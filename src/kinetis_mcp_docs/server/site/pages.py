"""The pages the HTTP route serves by URL path, and the search index over them.

Two page sets answer the same questions — the text of the page a path names, and a search
over all of them:

- `CataloguePages`: the Kinetis catalogue, each page read live through the application's
  page source (the bounded fetcher); `/<slug>` is `kinetis://docs/<slug>`, and `/` is the
  index. Its search index is rebuilt at most every `ttl` seconds, fetching the pages
  concurrently; the previous index answers while a rebuild runs, and a page that fails to
  fetch is left out of that build and logged. A rebuild that fails altogether is logged
  and tried again a `ttl` later, not on every search.
- `TreePages`: a local tree (see `tree_files` for which file a path names and how it is
  read). The root is kept as given and resolved on every read, so a root that is a
  symlink swapped to a new release is followed at once. A changed file is seen by the
  next search: with inotify (Linux) each search asks the kernel whether anything changed,
  elsewhere it looks at the tree again (a walk and a `stat` per file); only changed files
  are read again. Nothing outside the root is indexed.

Searches never hold a lock: each runs on the index snapshot current when it started, and a
change is indexed into a new snapshot swapped in whole (see `search_index`). Only bringing
a tree's snapshot up to date is done one search at a time.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from ..core import catalogue
from ..core.display import say
from ..core.exceptions import PageUnavailable, RejectedUrl
from ..core.unavailable import unavailable_as
from ..search.index import OWNDOCS, Hit, SearchIndex
from ..sources.page_source import PageFetchError, PageSource
from .tree_files import PageFiles, Signature, read_inside, read_page
from .tree_watch import TreeWatch

# What a page read comes to, as a site's `observe` is told it: read, no such page, or a
# page that could not be read (an origin failing, a file over the bounds).
READ = "ok"
MISSING = "missing"
FAILED = "failed"

INDEX_TTL_SECONDS = 60.0
# inotify reports only this machine's changes: on a network filesystem a file another
# machine changed is seen by the first search after this long, even with a watch in place.
TREE_LOOK_SECONDS = 60.0
_FETCH_WORKERS = 8


def _ignore(_outcome: str) -> None:
    pass


@dataclass(frozen=True)
class IndexState:
    """What a site's search index is like now, for a readiness probe and the metrics."""

    built: bool  # built (or, for a tree, brought up to date) at least once
    pages: int  # the pages it holds
    updated_at: float  # when it was last built or found current (`time.time()`); 0 if never
    problem: str | None  # why the pages cannot be served now, or None


class SitePages(Protocol):
    """A set of pages addressed by URL path."""

    def prepare(self) -> None:
        """Build the search index now (it is otherwise built by the first search)."""
        ...

    def keep_current(self) -> None:
        """Bring the index up to date if it is due, as a search would, without a search."""
        ...

    def index_state(self) -> IndexState:
        """The index as it is now; cheap enough for every readiness probe."""
        ...

    def read(self, segments: tuple[str, ...], path: str) -> str | None:
        """The text, exactly as stored, of the page `segments` names, or None when there is
        none; `RejectedUrl` if refused, `PageUnavailable` (naming `path`) on failure."""
        ...

    def search(self, query: str, limit: int) -> list[Hit]:
        """The best `limit` pages for `query`, over the pages as they are now."""
        ...

    def close(self) -> None: ...


def _read_counted(
    observe: Callable[[str], None], path: str, read: Callable[[], str | None]
) -> str | None:
    """`read()`, its failure made the core's `PageUnavailable` naming `path`, and its
    outcome told to `observe`: read, missing (None) or failed."""
    try:
        with unavailable_as(path):
            text = read()
    except PageUnavailable:
        observe(FAILED)
        raise
    observe(MISSING if text is None else READ)
    return text


class NothingReadable(Exception):
    """A search over a catalogue none of whose pages could be read: not an empty result."""

    def __init__(self, pages: int, reason: str) -> None:
        super().__init__(
            f"Search unavailable: none of the {pages} pages could be read ({reason}); "
            "try again later, or read a page with fetch_page."
        )


def _log(message: str) -> None:
    say(message)


class CataloguePages:
    """The catalogue, read live through a page source."""

    def __init__(
        self,
        source: Callable[[], PageSource],
        *,
        ttl: float = INDEX_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        ranking: str = OWNDOCS,
        observe: Callable[[str], None] | None = None,
    ) -> None:
        self._source = source
        self._observe = observe or _ignore
        self._updated_at = 0.0  # wall clock, for `index_state`
        self._ranking = ranking
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()  # guards the fields below, never held over a fetch
        self._index: SearchIndex | None = None
        self._unreadable: str | None = None  # why, when the index holds no page at all
        self._built_at = 0.0
        self._rebuild: threading.Thread | None = None
        self._first_build = threading.Lock()
        self._closed = False

    def read(self, segments: tuple[str, ...], path: str) -> str | None:
        if not segments:
            slug = "index"
        elif len(segments) == 1 and segments[0] in catalogue.SLUGS:
            slug = segments[0]
        else:
            self._observe(MISSING)
            return None
        return _read_counted(self._observe, path, lambda: self._source().fetch(slug))

    def prepare(self) -> None:
        self._current_index()

    def keep_current(self) -> None:
        with self._lock:
            if self._index is not None:
                self._rebuild_if_due()

    def index_state(self) -> IndexState:
        with self._lock:
            index, unreadable, updated_at = self._index, self._unreadable, self._updated_at
        pages = 0 if index is None else len(index)
        problem = None
        if index is not None and not pages and unreadable is not None:
            problem = f"none of the {len(catalogue.PAGES)} pages could be read ({unreadable})"
        return IndexState(index is not None, pages, updated_at, problem)

    def search(self, query: str, limit: int) -> list[Hit]:
        index = self._current_index()
        unreadable = self._unreadable
        if unreadable is not None and not len(index):
            raise NothingReadable(len(catalogue.PAGES), unreadable)
        return index.search(query, limit)

    def close(self) -> None:
        # A rebuild under way is not waited for: closing the page source, next, ends its
        # fetches, and what it built is never used.
        with self._lock:
            self._closed = True

    def _current_index(self) -> SearchIndex:
        with self._lock:
            index = self._index
            if index is not None:
                self._rebuild_if_due()
        if index is not None:
            return index
        with self._first_build:  # the first searches wait for one build, not one each
            with self._lock:
                if self._index is not None:
                    return self._index
            built = self._build()
            with self._lock:
                self._index, self._built_at = built, self._clock()
                self._updated_at = time.time()
            return built

    def _rebuild_if_due(self) -> None:
        """Start a rebuild in the background if the index is a `ttl` old (lock held)."""
        due = self._clock() - self._built_at >= self._ttl
        if due and self._rebuild is None and not self._closed:
            self._rebuild = threading.Thread(
                target=self._rebuild_in_background, name="kinetis-docs index", daemon=True
            )
            self._rebuild.start()

    def _rebuild_in_background(self) -> None:
        built = None
        try:
            built = self._build()
        except Exception:  # noqa: BLE001 - a failed rebuild must not kill the thread silently
            if not self._closed:
                _log("search index: the rebuild failed; the previous index answers meanwhile")
                traceback.print_exc(file=sys.stderr)
        with self._lock:
            # Tried again a ttl from now, whether it worked or not: a rebuild that fails
            # must not start another on every search.
            self._built_at = self._clock()
            if built is not None:
                self._index = built
                self._updated_at = time.time()
            self._rebuild = None

    def _build(self) -> SearchIndex:
        slugs = [slug for slug, _, _ in catalogue.PAGES]
        reasons: list[str] = []
        with ThreadPoolExecutor(_FETCH_WORKERS, thread_name_prefix="kinetis-docs fetch") as pool:
            texts = list(pool.map(lambda slug: self._fetched_or_none(slug, reasons), slugs))
        index = SearchIndex(self._ranking).changed(
            (catalogue_url(slug), text)
            for slug, text in zip(slugs, texts, strict=True)
            if text is not None
        )
        # Kept beside the index it describes; read by search() with it.
        self._unreadable = reasons[-1] if reasons and not len(index) else None
        release_freed_memory()
        return index

    def _fetched_or_none(self, slug: str, reasons: list[str]) -> str | None:
        try:
            text = self._source().fetch(slug)
        except PageFetchError as error:
            self._observe(FAILED)
            reasons.append(error.reason)
            if not self._closed:
                _log(f"search index: left out {error.url}: {error.reason}")
            return None
        self._observe(READ)
        return text


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's `malloc_trim`), where there is one.

    Indexing reads and discards several times the text it keeps; without this, the freed
    memory between the pages kept stays counted in the process's RSS.
    """
    try:
        import ctypes  # noqa: PLC0415 - only after an index build

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, ImportError):
        return
    trim(0)


def catalogue_url(slug: str) -> str:
    """The URL path of a catalogue page: `/` for the index, else `/<slug>`."""
    return "/" if slug == "index" else f"/{slug}"


class TreePages:
    """Every `*.md` and `*.mdx` file under `root`, read from disk on every call."""

    def __init__(
        self,
        root: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        ranking: str = OWNDOCS,
        observe: Callable[[str], None] | None = None,
    ) -> None:
        # As given, not resolved: a root that is a symlink is followed where it leads now.
        self.root = os.path.abspath(root)  # noqa: PTH100 - str paths throughout
        self._clock = clock
        self._observe = observe or _ignore
        self._updated_at = 0.0  # wall clock: when the index was last found current
        self._looked_at = -TREE_LOOK_SECONDS  # when the tree was last looked at whole
        self._lock = threading.Lock()  # one refresh at a time; never held over a search
        self._index = SearchIndex(ranking)
        self._real_root: str | None = None  # the root as the index was last brought up to
        self._seen: dict[str, tuple[str, Signature]] = {}  # url -> (file, signature) indexed
        self._files = PageFiles()
        self._watch: TreeWatch | None = None
        self._polling = False  # no inotify here: every search looks at the disk
        self._stale = True  # the next search must look at the disk whatever inotify says

    def read(self, segments: tuple[str, ...], path: str) -> str | None:
        return _read_counted(
            self._observe, path, lambda: read_page(os.path.realpath(self.root), segments)
        )

    def search(self, query: str, limit: int) -> list[Hit]:
        return self._current_index().search(query, limit)

    def prepare(self) -> None:
        self._current_index()

    def keep_current(self) -> None:
        self._current_index()

    def index_state(self) -> IndexState:
        real_root = os.path.realpath(self.root)
        problem = None
        if not os.path.isdir(real_root):  # noqa: PTH112 - str paths throughout
            problem = f"the pages directory {self.root} is not a directory"
        elif not os.access(real_root, os.R_OK | os.X_OK):
            problem = f"the pages directory {self.root} cannot be read"
        updated_at = self._updated_at
        return IndexState(updated_at > 0, len(self._index), updated_at, problem)

    def close(self) -> None:
        with self._lock:
            self._stop_watching()

    def _stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._polling = True

    def _current_index(self) -> SearchIndex:
        """The index of the tree as it is now: only what changed is read again.

        With inotify, a search that finds no event queued (and the root leading where it
        did) knows the tree is as it was, for up to `TREE_LOOK_SECONDS`; the queue is
        emptied before the tree is looked at, so a change made during the look is seen by
        the next search.
        """
        with self._lock:
            real_root = os.path.realpath(self.root)
            moved = real_root != self._real_root
            due = self._clock() - self._looked_at >= TREE_LOOK_SECONDS
            if moved or due or self._stale or self._watch is None or self._watch.changed():
                self._refresh(real_root)
            self._updated_at = time.time()
            return self._index

    def _refresh(self, real_root: str) -> None:
        self._stale = True  # until this refresh is done: one that fails is done again
        self._looked_at = self._clock()
        if self._watch is None and not self._polling:
            try:
                self._watch = TreeWatch()
            except OSError:
                self._polling = True
        watch = self._watch
        try:
            if watch is not None:
                watch.begin()
            found, root_watched = self._files.walk(real_root, watch)
            if watch is not None:
                watch.end()
        except OSError as error:
            _log(f"search index: cannot watch the tree ({error}); checking it on every search")
            self._stop_watching()
            found, root_watched = self._files.walk(real_root, None)
        self._real_root = real_root
        gone = [url for url in self._seen if url not in found]
        changed = [url for url, seen in found.items() if self._seen.get(url) != seen]
        if gone or changed:
            # What each URL holds once the new index is in: recorded only then, so an index
            # that failed to build leaves `_seen` describing the index still in use.
            settled: dict[str, tuple[str, Signature] | None] = {}
            texts = _page_texts(real_root, gone, changed, found, settled, observe=self._observe)
            self._index = self._index.changed(texts)
            for url, seen in settled.items():
                if seen is None:
                    self._seen.pop(url, None)  # gone, or read again once it changes
                else:
                    self._seen[url] = seen
            release_freed_memory()
        # A root that could not be watched (gone, say) has no parent watched to tell when
        # it comes back: look at it again on the next search.
        self._stale = not root_watched


def _page_texts(
    real_root: str,
    gone: list[str],
    changed: list[str],
    found: dict[str, tuple[str, Signature]],
    settled: dict[str, tuple[str, Signature] | None],
    *,
    observe: Callable[[str], None],
) -> Iterator[tuple[str, str | None]]:
    """Each URL with its page's text now, or None to leave it out (gone or unreadable), one
    page at a time; what each URL then holds goes into `settled`."""
    for url in gone:
        settled[url] = None
        yield url, None
    for url in changed:
        name = found[url][0]
        text = None
        try:
            text = read_inside(real_root, name)
        except PageFetchError as error:
            _log(f"search index: left out {name}: {error.reason}")
        except RejectedUrl:
            _log(f"search index: left out {name}: it now lies outside the tree")
        observe(FAILED if text is None else READ)
        settled[url] = None if text is None else found[url]
        yield url, text
