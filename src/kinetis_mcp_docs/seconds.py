"""A number of seconds read from text: a setting of the installer or of the HTTP route, or
the time the daily throttle recorded.

What counts as one is decided here once; each caller words its own refusal and raises its
own error, naming the variable the text came from. Imports nothing but `math`: every client
start reads the throttle's time with it, and a due one its update deadline.
"""

from __future__ import annotations

import math


def parse_seconds(
    text: str, *, minimum: float = 0.0, maximum: float = math.inf, minimum_open: bool = True
) -> float | None:
    """`text` as a finite number of seconds above `minimum` (from it, with `minimum_open`
    false) and at most `maximum`; None when it is not one.

    `nan` and the infinities are refused whatever the bounds: a setting that parses as one
    would be an update, a timeout or a drain without end.
    """
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value > maximum:
        return None
    if value < minimum or (minimum_open and value == minimum):
        return None
    return value
