"""The passage a relevance-mode snippet shows: where in the best section the query's words are.

Every line of the section is scored by the query's terms it holds, each weighted by how rare
it is (the same idf the ranking uses), with a pair of the query's neighbouring words
side by side counting once more; a line is scored with half of the next one's score, since
a snippet of 240 characters usually runs on. The snippet starts at the best line, so its
`line` is exactly where a window read shows it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from .page_text import SNIPPET_LENGTH, Section, clip

Analyze = Callable[[str], list[str]]


def best_passage(
    section: Section,
    weights: dict[str, float],
    phrases: list[tuple[str, str]],
    analyze: Analyze,
    length: int = SNIPPET_LENGTH,
) -> tuple[int, str]:
    """The page line the snippet starts on, and the snippet (at most `length` code points)."""
    lines = section.text.splitlines(keepends=True)
    scores = []
    for text in lines:
        terms = analyze(text)
        present = set(terms)
        score = sum(weights.get(term, 0.0) for term in present)
        if phrases and len(terms) > 1:
            pairs = set(itertools.pairwise(terms))
            score += sum(
                weights.get(a, 0.0) + weights.get(b, 0.0) for a, b in phrases if (a, b) in pairs
            )
        scores.append(score)
    best, best_score = 0, -1.0
    for number, score in enumerate(scores):
        following = scores[number + 1] if number + 1 < len(scores) else 0.0
        total = score + following / 2 if score else 0.0
        if total > best_score:
            best, best_score = number, total
    if best_score <= 0:
        best = next((number for number, text in enumerate(lines) if text.strip()), 0)
    return section.line + best, clip("".join(lines[best : best + 12]), length)
