"""The daily throttle: `DIR/.last-update-check` holds the time of the last good update.

Modelled on pip's self-outdated check: every way the state can be wrong — missing,
unreadable, not a number, from the future — reads as "check now", so a corrupt file can
delay nothing; and the current time is always passed in, so the edges are testable.

Read on every spawn, so it sticks to `os` (no pathlib, typing or contextlib: see `start.py`).
"""

from __future__ import annotations

import math
import os

from kinetis_mcp_docs.installer.files import read_regular, write_atomic

WINDOW_SECONDS = 86_400.0
_MAX_BYTES = 64


def read_last_check(path: str | os.PathLike[str]) -> float | None:
    """The recorded time, or None when it is missing, unreadable or not a finite number.

    A symlink, a directory or a FIFO under the name reads as None too (`files.py`).
    """
    # A real timestamp is a handful of bytes; never read a huge file whole.
    data = read_regular(os.fspath(path), _MAX_BYTES)
    if data is None or len(data) > _MAX_BYTES:
        return None
    try:
        value = float(data.decode("ascii"))
    except ValueError:  # UnicodeDecodeError is a ValueError
        return None
    return value if math.isfinite(value) else None


def is_due(last: float | None, now: float, window: float = WINDOW_SECONDS) -> bool:
    """Whether an update check is due at `now`.

    Due when nothing is recorded, when *more* than `window` seconds have passed, or when
    the record is in the future (a clock set back must not postpone updates for good).
    Exactly `window` seconds after the last check is still inside the window: not due.
    """
    if last is None or last > now:
        return True
    return now - last > window


def record_check(path: str | os.PathLike[str], now: float) -> None:
    """Write `now` to `path` atomically: a reader sees the old time or the new, never half."""
    write_atomic(os.fspath(path), f"{now!r}\n".encode("ascii"))
