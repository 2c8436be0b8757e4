"""The pages the HTTP route serves by URL path, and the search index over them.

Two page sets answer the same questions — which file or page a path names, its text, and
a search over all of them:

- `CataloguePages`: the Kinetis catalogue, each page read live through the application's
  page source (the bounded fetcher); `/<slug>` is `kinetis://docs/<slug>`, and `/` is the
  index. Its search index is rebuilt at most every `ttl` seconds, fetching the pages
  concurrently; the previous index answers while a rebuild runs, and a page that fails to
  fetch is left out of that build and logged.
- `TreePages`: a local tree, where every `*.md` and `*.mdx` file is a page: `/a/b` is
  `a/b.md`, `a/b.mdx`, `a/b/index.md` or `a/b/index.mdx`, the first that exists. Every
  candidate is resolved (symlinks followed) and must lie inside the root before it is
  opened; one that does not is `Path traversal rejected`. A changed file is seen by the
  next search: with inotify (Linux) each search asks the kernel whether anything changed,
  elsewhere it looks at the tree again (a walk and a `stat` per file); only changed files
  are read again. Nothing outside the root is indexed.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from . import catalogue
from .exceptions import PageUnavailable, RejectedUrl
from .localdocs import read_page_file
from .page_paths import TRAVERSAL, page_path
from .pages import PageFetchError, PageSource
from .search_index import Hit, SearchIndex
from .tree_watch import TreeWatch

INDEX_TTL_SECONDS = 60.0
_EXTENSIONS = (".md", ".mdx")
_FETCH_WORKERS = 8


class SitePages(Protocol):
    """A set of pages addressed by URL path."""

    def resolve(self, segments: tuple[str, ...]) -> str | None:
        """The page `segments` names (a key for `read`), or None; `RejectedUrl` if refused."""
        ...

    def read(self, key: str, path: str) -> str:
        """The page's text exactly as stored; `PageUnavailable` (naming `path`) on failure."""
        ...

    def search(self, query: str, limit: int) -> list[Hit]:
        """The best `limit` pages for `query`, over the pages as they are now."""
        ...

    def close(self) -> None: ...


def _log(message: str) -> None:
    print(f"kinetis-docs: {message}", file=sys.stderr, flush=True)


class CataloguePages:
    """The catalogue, read live through a page source."""

    def __init__(self, source: Callable[[], PageSource], *, ttl: float = INDEX_TTL_SECONDS) -> None:
        self._source = source
        self._ttl = ttl
        self._lock = threading.Lock()  # guards the fields below, never held over a fetch
        self._index: SearchIndex | None = None
        self._built_at = 0.0
        self._rebuild: threading.Thread | None = None
        self._first_build = threading.Lock()
        self._closed = False

    def resolve(self, segments: tuple[str, ...]) -> str | None:
        if not segments:
            return "index"
        if len(segments) == 1 and segments[0] in catalogue.SLUGS:
            return segments[0]
        return None

    def read(self, key: str, path: str) -> str:
        try:
            return self._source().fetch(key)
        except PageFetchError as error:
            raise PageUnavailable(path, error.url, error.reason) from error

    def search(self, query: str, limit: int) -> list[Hit]:
        index = self._current_index()
        with self._lock:
            return index.search(query, limit)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            rebuild = self._rebuild
        if rebuild is not None:
            rebuild.join()

    def _current_index(self) -> SearchIndex:
        with self._lock:
            index = self._index
            due = index is not None and time.monotonic() - self._built_at >= self._ttl
            if due and self._rebuild is None and not self._closed:
                self._rebuild = threading.Thread(
                    target=self._rebuild_in_background, name="kinetis-docs index", daemon=True
                )
                self._rebuild.start()
        if index is not None:
            return index
        with self._first_build:  # the first searches wait for one build, not one each
            with self._lock:
                if self._index is not None:
                    return self._index
            built = self._build()
            with self._lock:
                self._index, self._built_at = built, time.monotonic()
            return built

    def _rebuild_in_background(self) -> None:
        try:
            built = self._build()
            with self._lock:
                self._index, self._built_at = built, time.monotonic()
        finally:
            with self._lock:
                self._rebuild = None

    def _build(self) -> SearchIndex:
        index = SearchIndex()
        slugs = [slug for slug, _, _ in catalogue.PAGES]
        with ThreadPoolExecutor(_FETCH_WORKERS, thread_name_prefix="kinetis-docs fetch") as pool:
            texts = list(pool.map(self._fetched_or_none, slugs))
        for slug, text in zip(slugs, texts, strict=True):
            if text is not None:
                index.put(catalogue_url(slug), text)
        release_freed_memory()
        return index

    def _fetched_or_none(self, slug: str) -> str | None:
        try:
            return self._source().fetch(slug)
        except PageFetchError as error:
            _log(f"search index: left out {error.url}: {error.reason}")
            return None


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

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._lock = threading.Lock()
        self._index = SearchIndex()
        self._seen: dict[str, tuple[str, tuple[int, ...]]] = {}  # url -> (file, signature)
        self._urls: dict[str, str | None] = {}  # file from the root -> its URL, if it has one
        self._watch: TreeWatch | None = None
        self._scanned = False

    def resolve(self, segments: tuple[str, ...]) -> str | None:
        base = os.path.join(self.root, *segments)  # noqa: PTH118 - str paths for os.open
        names = [base + extension for extension in _EXTENSIONS] if segments else []
        names += [os.path.join(base, "index" + extension) for extension in _EXTENSIONS]  # noqa: PTH118
        for name in names:
            real = os.path.realpath(name)
            if not self._inside(real):
                raise RejectedUrl(TRAVERSAL)
            if os.path.isfile(real):  # noqa: PTH113 - str paths throughout, as in os.walk
                return real
        return None

    def read(self, key: str, path: str) -> str:
        try:
            return read_page_file(key)
        except PageFetchError as error:
            raise PageUnavailable(path, error.url, error.reason) from error

    def search(self, query: str, limit: int) -> list[Hit]:
        with self._lock:
            self._refresh()
            return self._index.search(query, limit)

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None

    def _inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root + os.sep)

    def _refresh(self) -> None:
        """Bring the index up to the tree as it is now: read only what changed.

        With inotify, a search that finds no event queued knows the tree is as it was; the
        queue is emptied before the tree is looked at, so a change made during the look
        is seen by the next search.
        """
        if self._watch is not None and not self._watch.changed() and self._scanned:
            return
        if not self._scanned:
            try:
                self._watch = TreeWatch()
            except OSError:
                self._watch = None  # every search looks at the disk
        directories: list[str] = []
        found = dict(self._pages_on_disk(directories))
        if self._watch is not None and not all(map(self._watch.watch, directories)):
            _log(
                "search index: cannot watch the tree (inotify limit?); checking it on every search"
            )
            self._watch.close()
            self._watch = None
        self._scanned = True
        for url in [url for url in self._seen if url not in found]:
            del self._seen[url]
            self._index.remove(url)
        changed = False
        for url, (name, signature) in found.items():
            if self._seen.get(url) == (name, signature):
                continue
            changed = True
            try:
                text = read_page_file(name)
            except PageFetchError as error:
                _log(f"search index: left out {name}: {error.reason}")
                self._seen.pop(url, None)
                self._index.remove(url)
                continue
            self._seen[url] = (name, signature)
            self._index.put(url, text)
        if changed:
            release_freed_memory()

    def _pages_on_disk(
        self, directories: list[str]
    ) -> Iterator[tuple[str, tuple[str, tuple[int, ...]]]]:
        """(url, (file, signature)) for every page file, as `resolve` would find it; every
        directory walked is added to `directories`."""
        files: dict[str, os.DirEntry[str]] = {}  # path from the root, "/"-separated
        self._collect(self.root, "", files, directories)
        if files.keys() != self._urls.keys():  # which file a URL names changes only then
            self._urls = {relative: _url_of(relative, files) for relative in files}
        for relative, entry in files.items():
            url = self._urls[relative]
            if url is None:
                continue
            try:
                # Only a symlink can lead out: walking never enters a symlinked directory.
                real = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
                if not self._inside(real):
                    continue  # a symlink out of the tree: never indexed
                status = entry.stat()
            except OSError:
                continue
            if not stat.S_ISREG(status.st_mode):
                continue
            signature = (status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns)
            yield url, (real, signature)

    def _collect(
        self,
        directory: str,
        prefix: str,
        files: dict[str, os.DirEntry[str]],
        directories: list[str],
    ) -> None:
        directories.append(directory)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                self._collect(entry.path, f"{prefix}{entry.name}/", files, directories)
            elif entry.name.endswith(_EXTENSIONS):
                files[prefix + entry.name] = entry


def _url_of(relative: str, files: Mapping[str, object]) -> str | None:
    """The URL path `resolve` maps to the file at `relative`, or None when another wins it."""
    stem = relative.rsplit(".", 1)[0]
    urls = [stem]
    if stem == "index" or stem.endswith("/index"):
        urls.insert(0, stem[: -len("index")].rstrip("/"))
    for url in urls:
        for candidate in _candidates(url):
            if candidate in files:
                if candidate == relative:
                    return page_path(tuple(url.split("/")) if url else ())
                break
    return None


def _candidates(url: str) -> list[str]:
    names = [url + extension for extension in _EXTENSIONS] if url else []
    prefix = f"{url}/" if url else ""
    return names + [f"{prefix}index{extension}" for extension in _EXTENSIONS]
