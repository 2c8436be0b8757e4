"""Synthetic documentation pages of a chosen size.

`synthetic_page` is shaped like the real pages: markdown-like lines of 20 to 140
characters, headings and blank lines, and one line in five carrying non-ASCII text (an em
dash, an arrow), so a window has to measure those lines in UTF-8 bytes rather than take
the fast ASCII path. `short_line_page` is the worst shape for line counting: 2-byte lines,
two million of them in 4 MiB. In both, a known term, `NEEDLE_TERM`, occurs on 40 lines
spread evenly through the page.
"""

from __future__ import annotations

import random

MIB = 1024 * 1024
NEEDLE = "NEEDLE_TERM"
NEEDLE_LINES = 40

_NEEDLE_PREFIX = f"set {NEEDLE}=on, "
_NEEDLE_ROOM = (NEEDLE_LINES + 1) * len(_NEEDLE_PREFIX)
_LONGEST_LINE = 512
_WORDS = [
    "kinetis",
    "server",
    "page",
    "window",
    "search",
    "origin",
    "fetch",
    "proxy",
    "client",
    "install",
    "update",
    "lock",
    "timestamp",
    "resource",
    "catalogue",
    "tool",
    "schema",
    "argument",
    "result",
    "refusal",
    "line",
    "byte",
    "stream",
]


def synthetic_page(size: int, *, seed: int = 5) -> str:
    """A page of just under `size` UTF-8 bytes (at most 2 KiB less), the same on every run.

    Under, so that a 4 MiB page stays within the fetch's 4 MiB cap.
    """
    rng = random.Random(seed)
    lines: list[str] = []
    used = 0
    budget = size - _NEEDLE_ROOM - _LONGEST_LINE
    while used < budget:
        kind = rng.random()
        if kind < 0.05:
            line = f"## {' '.join(rng.choices(_WORDS, k=rng.randint(2, 5))).title()}\n"
        elif kind < 0.12:
            line = "\n"
        else:
            words = " ".join(rng.choices(_WORDS, k=rng.randint(3, 20)))
            if rng.random() < 0.2:
                words += " — see the next section → for details"
            line = words + "\n"
        lines.append(line)
        used += len(line.encode("utf-8"))
    return _with_needles(lines)


def short_line_page(size: int) -> str:
    """Just under `size` bytes of `x\\n` lines, 40 of them carrying the needle."""
    return _with_needles(["x\n"] * ((size - _NEEDLE_ROOM) // 2))


def _with_needles(lines: list[str]) -> str:
    step = max(1, len(lines) // NEEDLE_LINES)
    for index in range(step // 2, len(lines), step)[:NEEDLE_LINES]:
        lines[index] = _NEEDLE_PREFIX + lines[index]
    return "".join(lines)


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)
