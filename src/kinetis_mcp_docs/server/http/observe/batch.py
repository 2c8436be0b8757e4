"""Rows a request records, handed over together: what the access log and the metrics keep.

A request only appends its row, on the event loop's thread; the rows go to their handler
together, within `seconds` of the first one waiting or as soon as `most` wait (and when
the owner flushes: before a scrape, at exit). Formatted or added up one request at a time,
between requests, the same code ran cold each time and cost twice as much.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

Row = TypeVar("Row")


class Batch(Generic[Row]):
    """Rows waiting for `handle`, which gets them in the order they were added."""

    __slots__ = ("_due", "_handle", "_most", "_rows", "_seconds")

    def __init__(self, handle: Callable[[list[Row]], None], *, most: int, seconds: float) -> None:
        self._handle = handle
        self._most = most
        self._seconds = seconds
        self._rows: list[Row] = []
        self._due = False

    def add(self, row: Row) -> None:
        """Keep `row`; called on the event loop's thread."""
        rows = self._rows
        rows.append(row)
        if len(rows) >= self._most:
            self.flush()
        elif not self._due:
            self._due = True
            asyncio.get_running_loop().call_later(self._seconds, self.flush)

    def flush(self) -> None:
        """Hand every waiting row over now."""
        self._due = False
        if self._rows:
            rows, self._rows = self._rows, []
            self._handle(rows)
