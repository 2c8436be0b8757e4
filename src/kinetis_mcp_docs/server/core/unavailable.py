"""A page source's failure made the core's: `PageFetchError` becomes `PageUnavailable`.

Written once, for the three places that read a page for a client (a resource or tool read
of the catalogue, and the HTTP route's pages, from the catalogue or a local tree).
"""

from __future__ import annotations

from .exceptions import PageUnavailable


class unavailable_as:  # noqa: N801 - read as a `with` phrase, as `contextlib` helpers are
    """`with unavailable_as(uri):` makes a page source's `PageFetchError` the core's
    `PageUnavailable` naming `uri`: the one place a fetch failure becomes the core's.

    A class, not `contextlib.contextmanager`: this module is imported on every client start,
    and neither `contextlib` nor the page source's module is needed to answer `initialize`.
    """

    __slots__ = ("_uri",)

    def __init__(self, uri: str) -> None:
        self._uri = uri

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if error is None:
            return
        from ..sources.page_source import PageFetchError  # noqa: PLC0415 - see above

        if isinstance(error, PageFetchError):
            raise PageUnavailable(self._uri, error.url, error.reason) from error
