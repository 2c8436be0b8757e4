"""The daily throttle: `DIR/.last-update-check` holds the time of the last good update.

Modelled on pip's self-outdated check: every way the state can be wrong — missing,
unreadable, not a number, from the future — reads as "check now", so a corrupt file can
delay nothing; and the current time is always passed in, so the edges are testable.

A client start's failed update is recorded apart, in `DIR/.last-update-failure` (its time,
then its one-line reason), for `status` to report; it defers nothing: as the reference
has it, the next start tries again rather than waiting out the window (each try bounded by
the start's deadline and pip's fail-fast options, see `update.py`).

Read on every spawn, so it sticks to `os` (no pathlib, typing or contextlib: see `start.py`).
"""

from __future__ import annotations

import math
import os

from ...seconds import parse_seconds
from .files import read_regular, write_atomic

TYPE_CHECKING = False  # `typing` stays off the spawn path; mypy honours the name
if TYPE_CHECKING:
    from ..layout import InstallLayout

WINDOW_SECONDS = 86_400.0
_MAX_BYTES = 64
_MAX_FAILURE_BYTES = 4096


def read_last_check(path: str | os.PathLike[str]) -> float | None:
    """The recorded time, or None when it is missing, unreadable or not a finite number.

    A symlink, a directory or a FIFO under the name reads as None too (`files.py`).
    """
    # A real timestamp is a handful of bytes; never read a huge file whole.
    data = read_regular(os.fspath(path), _MAX_BYTES)
    if data is None or len(data) > _MAX_BYTES:
        return None
    return _seconds(data)


def _seconds(data: bytes) -> float | None:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    # A time, not a length of time: any finite number of seconds, before the epoch included.
    return parse_seconds(text, minimum=-math.inf)


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


def read_failure(path: str | os.PathLike[str]) -> tuple[float, str] | None:
    """The recorded failed update: its time and its reason; None when there is none.

    Read as the timestamp is: anything but a regular file starting with a number is None.
    """
    data = read_regular(os.fspath(path), _MAX_FAILURE_BYTES)
    if data is None:
        return None
    first, _, rest = data[:_MAX_FAILURE_BYTES].partition(b"\n")
    when = _seconds(first)
    if when is None:
        return None
    return when, rest.decode("utf-8", "replace").strip()


def read_last_failure(path: str | os.PathLike[str]) -> float | None:
    """The time of the recorded failed update, or None."""
    failure = read_failure(path)
    return None if failure is None else failure[0]


def record_failure(path: str | os.PathLike[str], now: float, reason: str) -> None:
    """Write `now` and the one-line `reason` to `path` atomically."""
    line = " ".join(reason.split())
    write_atomic(os.fspath(path), f"{now!r}\n{line}\n".encode("utf-8", "backslashreplace"))


def clear_failure(path: str | os.PathLike[str]) -> None:
    """Forget a recorded failure once an update succeeded; best effort (a record left behind
    is older than the success, so it defers nothing and status shows none)."""
    try:  # noqa: SIM105 - contextlib is kept off the spawn path
        os.unlink(path)  # noqa: PTH108 - see above
    except OSError:
        pass


def record_success(layout: InstallLayout, now: float) -> None:
    """An install or an update succeeded at `now`: record its time, forget a failure since.

    Raises `OSError` when the time cannot be written.
    """
    record_check(layout.last_update_check, now)
    clear_failure(layout.last_update_failure)
