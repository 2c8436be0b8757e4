"""The seam between the application and wherever pages come from."""

from __future__ import annotations

from typing import Protocol

MAX_PAGE_BYTES = 4 * 1024 * 1024
"""The most bytes of text a page may have, wherever it comes from; one more is a failure."""


def describe_size(count: int) -> str:
    """A byte count as a failure reason names it: `4 MiB`, or `1000 bytes`."""
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count and count % mib == 0 else f"{count} bytes"


class PageFetchError(Exception):
    """A page could not be fetched, or its body is not valid UTF-8.

    `reason` is for the operator's log (stderr), never for the wire.
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class PageSource(Protocol):
    """Fetches the current markdown of one catalogue page, by slug."""

    def fetch(self, slug: str) -> str:
        """The page's text; raises `PageFetchError` on any failure."""
        ...

    def close(self) -> None:
        """Release connections; the source is not used afterwards."""
        ...
