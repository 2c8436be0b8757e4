"""The files of a local documentation tree: which file a URL path names, every page file the
tree holds, and reading one so that it provably lies inside the tree.

Every `*.md` and `*.mdx` file is a page: `/a/b` is `a/b.md`, `a/b.mdx`, `a/b/index.md` or
`a/b/index.mdx`, the first that is a regular file. A symlink is followed as long as where
it leads stays inside the root; one that leads out is `Path traversal rejected`.

Resolving a path and then opening it leaves a moment in which a directory on the way could
be swapped for a symlink out of the tree. So a file is opened by its resolved path with
`O_NOFOLLOW`, and, where the kernel says which file a descriptor holds
(`/proc/self/fd/N`), that path is checked to lie inside the root before a byte is read.
"""

from __future__ import annotations

import errno
import os
import stat

from ..core.display import utf8_encodable
from ..core.exceptions import RejectedUrl
from ..sources.localdocs import read_open_page
from ..sources.page_source import PageFetchError
from .page_paths import TRAVERSAL, page_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .tree_watch import TreeWatch

EXTENSIONS = (".md", ".mdx")
# What decides that a page file changed: mtime, size, inode, ctime.
Signature = tuple[int, int, int, int]
# An open that finds no file of that name: the next candidate is tried.
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG})


def candidates(url: str) -> list[str]:
    """The files, from the root and `/`-separated, that the URL path `url` (without its
    leading slash; `""` for the root) may name, in the order they are tried."""
    names = [url + extension for extension in EXTENSIONS] if url else []
    prefix = f"{url}/" if url else ""
    return names + [f"{prefix}index{extension}" for extension in EXTENSIONS]


def inside(root: str, path: str) -> bool:
    """Whether the resolved `path` is `root` or lies under it (`root` resolved too)."""
    return path == root or path.startswith(root + os.sep)


def read_page(root: str, segments: tuple[str, ...]) -> str | None:
    """The text of the page the path `segments` names under `root` (resolved), or None when
    there is none; `RejectedUrl` when a candidate leads out of the tree, `PageFetchError`
    when the page cannot be read."""
    for relative in candidates("/".join(segments)):
        try:
            real = os.path.realpath(os.path.join(root, relative))  # noqa: PTH118 - str paths
        except OSError:
            # A symlink on the way that `lstat` saw and `readlink` could not read: swapped
            # for a directory meanwhile (EINVAL), or gone (ENOENT). Python before 3.13
            # raises that even without `strict`. The race's other outcomes are a
            # traversal refused or a page served; which this one was is unknown, so it is
            # refused as the traversal it may have been.
            raise RejectedUrl(TRAVERSAL) from None
        if not inside(root, real):
            raise RejectedUrl(TRAVERSAL)
        text = read_inside(root, real)
        if text is not None:
            return text
    return None


def read_inside(root: str, real: str) -> str | None:
    """The text of the regular file at `real` (a resolved path inside `root`), or None when
    no regular file is there; `RejectedUrl` when the file opened proves to lie outside
    `root`; `PageFetchError` when it cannot be read."""
    try:
        # O_NOFOLLOW: `real` has no symlink left in it; one there now was put there since.
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in _ABSENT:
            return None
        if error.errno == errno.ELOOP:
            raise RejectedUrl(TRAVERSAL) from None
        raise PageFetchError(real, f"cannot open the file ({error.strerror})") from error
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a directory (or a FIFO) of that name: no page
        opened = _opened_path(fd)
        if opened is not None and not inside(root, opened):
            raise RejectedUrl(TRAVERSAL)
        return read_open_page(fd, real)
    finally:
        os.close(fd)


def _opened_path(fd: int) -> str | None:
    """The path of the file open at `fd`, as the kernel knows it; None where it does not say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")  # noqa: PTH115 - str paths throughout
    except OSError:
        return None


class PageFiles:
    """Every page file under a root, as `read_page` would find each, by URL path."""

    def __init__(self) -> None:
        self._urls: dict[str, str | None] = {}  # file from the root -> its URL, if it has one

    def walk(
        self, root: str, watch: TreeWatch | None
    ) -> tuple[dict[str, tuple[str, Signature]], bool]:
        """`{url: (resolved file, signature)}` for every page under `root` (resolved), and
        whether `root` itself is watched. Each directory is watched before it is listed, so
        a file created in it after the listing raises an event; `OSError` when the kernel
        refuses a watch for want of resources."""
        files: dict[str, os.DirEntry[str]] = {}  # path from the root, "/"-separated
        root_watched = self._collect(root, "", files, watch)
        if files.keys() != self._urls.keys():  # which file a URL names changes only then
            self._urls = {relative: _url_of(relative, files) for relative in files}
        found: dict[str, tuple[str, Signature]] = {}
        for relative, entry in files.items():
            url = self._urls[relative]
            if url is None:
                continue
            try:
                # Only a symlink can lead out: walking never enters a symlinked directory.
                real = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
                if not inside(root, real):
                    continue  # a symlink out of the tree: never indexed
                status = entry.stat()
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                found[url] = (
                    real,
                    (status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns),
                )
        return found, root_watched

    def _collect(
        self,
        directory: str,
        prefix: str,
        files: dict[str, os.DirEntry[str]],
        watch: TreeWatch | None,
    ) -> bool:
        watched = watch is not None and watch.watch(directory)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return watched
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                self._collect(entry.path, f"{prefix}{entry.name}/", files, watch)
            elif entry.name.endswith(EXTENSIONS):
                files[prefix + entry.name] = entry
        return watched


def _url_of(relative: str, files: Mapping[str, object]) -> str | None:
    """The URL path `read_page` maps to the file at `relative`, written so that `fetch_page`,
    which percent-decodes a URL, reads it back: a `%` in a name as `%25`. None when another
    file wins the URL, or when no URL can name the file: `fetch_page` reads a backslash as
    `/`, so a name holding one is never served, and is not listed; nor is a name whose
    bytes are not UTF-8 (held as lone surrogates), which a URL's UTF-8 never decodes to,
    and which broke the search index of the whole tree."""
    stem = relative.rsplit(".", 1)[0]
    urls = [stem]
    if stem == "index" or stem.endswith("/index"):
        urls.insert(0, stem[: -len("index")].rstrip("/"))
    for url in urls:
        for candidate in candidates(url):
            if candidate in files:
                if candidate == relative:
                    return None if "\\" in url or not utf8_encodable(url) else _written(url)
                break
    return None


def _written(url: str) -> str:
    return page_path(tuple(url.replace("%", "%25").split("/")) if url else ())
