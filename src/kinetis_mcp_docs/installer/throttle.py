"""The daily throttle: `DIR/.last-update-check` holds the time of the last good update.

Modelled on pip's self-outdated check: every way the state can be wrong — missing,
unreadable, not a number, from the future — reads as "check now", so a corrupt file can
delay nothing; and the current time is always passed in, so the edges are testable.

This runs on every spawn, so it sticks to `os` (no pathlib or contextlib: see `lock.py`).
"""

from __future__ import annotations

import math
import os

WINDOW_SECONDS = 86_400.0
_MAX_BYTES = 64


def read_last_check(path: str | os.PathLike[str]) -> float | None:
    """The recorded time, or None when it is missing, unreadable or not a finite number."""
    try:
        with open(path, "rb") as file:  # noqa: PTH123 - pathlib is kept off the spawn path
            # A real timestamp is a handful of bytes; never read a huge file whole.
            data = file.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return None
        value = float(data.decode("ascii"))
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
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
    target = os.fspath(path)
    # Beside its target, so the rename stays on one file system and is atomic.
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="ascii") as file:  # noqa: PTH123 - see above
            file.write(f"{now!r}\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)  # noqa: PTH105 - see above
    except BaseException:
        try:  # noqa: SIM105 - contextlib is kept off the spawn path
            os.unlink(temporary)  # noqa: PTH108 - see above
        except FileNotFoundError:
            pass
        raise
