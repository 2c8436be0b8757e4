"""A documentation tree for the HTTP route's figures: 1,000 pages of 20 KB, written to disk.

Pages read like prose over a large vocabulary (30,000 made-up words drawn with a Zipf-like
skew, as words are in real text), with frontmatter, headings and a non-ASCII character here
and there, so the word index faces a realistic number of distinct words rather than the
two dozen of `pages.synthetic_page`. The same seed gives the same tree.
"""

from __future__ import annotations

import random
from itertools import accumulate
from pathlib import Path

PAGES = 1_000
PAGE_BYTES = 20 * 1024
VOCABULARY = 30_000
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(seed: int = 11) -> list[str]:
    """Made-up words, most frequent first."""
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words["".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4)))] = None
    return list(words)


def write_tree(root: Path, seed: int = 11, pages: int = PAGES) -> int:
    """Write the tree (of `pages` pages) under `root`; the total size of its text in bytes."""
    words = vocabulary(seed)
    weights = list(accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    rng = random.Random(seed)
    total = 0
    for number in range(pages):
        title = " ".join(rng.choices(words[:2000], k=3)).title()
        parts = [f"---\ntitle: {title}\n---\n\n# {title}\n\n"]
        size = len(parts[0])
        while size < PAGE_BYTES:
            if rng.random() < 0.08:
                line = "## " + " ".join(rng.choices(words, cum_weights=weights, k=4)) + "\n\n"
            else:
                sentence = " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(8, 30)))
                line = sentence.capitalize() + (
                    " — see below.\n\n" if rng.random() < 0.1 else ".\n\n"
                )
            parts.append(line)
            size += len(line.encode("utf-8"))
        text = "".join(parts)
        path = root / f"section-{number % 25:02}" / f"page-{number:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")[:PAGE_BYTES].decode("utf-8", "ignore")
        path.write_text(data, encoding="utf-8")
        total += len(data.encode("utf-8"))
    return total


def queries(seed: int = 11) -> dict[str, str]:
    """Queries of every kind a search sees: common, middling, rare, two words, absent."""
    words = vocabulary(seed)
    return {
        "common word": words[3],
        "middling word": words[800],
        "rare word": words[25_000],
        "two words": f"{words[50]} {words[3000]}",
        "absent word": "zzyzx",
    }
