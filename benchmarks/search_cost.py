"""What a `search_docs` query costs, and a search for the costliest one the tool admits.

`worst_query` does not trust a list of shapes: it draws queries at random (one in three past
the bound of 32 words, which the tool answers on their most informative leading words)
from a grammar of token shapes (punctuation pairs, letters around a mark, the commonest
words, with a mark ending a clause or not, common and rare words, pieces of words, a word
glued to another, long runs of one letter, and one long token filling the 1,000
characters), each query from a random mix of one to three shapes, keeps the costliest,
and mutates it (swapping one token for another drawn shape) while that makes it costlier:
a hill climb on CPU time. What it finds is the figure; the query is kept in the results.

    python -m benchmarks.search_cost TREE [--ranking relevance] [--pages N]

run as a child of the bench, prints one JSON document: build time, RSS growth, ordinary
query times, the worst query found and its cost (CPU seconds of this process).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

MARKS = ".,;:-!?()[]{}'\"`/\\_=+*&^%$#@~<>|"
MAX_CHARACTERS = 1000
MAX_TOKENS = 32
# A query past the bound: the leading words the tool reads from it, and more.
LONG_TOKENS = 300


def _shapes(words: list[str], rng: random.Random) -> list[Callable[[], str]]:
    common, rare = words[:200], words[len(words) // 2 :]
    return [
        # Nearly every page holds these: runs of them are phrases whose pages are all pages.
        lambda: rng.choice(words[:20]),
        lambda: rng.choice(words[:20]) + rng.choice(".:"),
        lambda: rng.choice(MARKS) + rng.choice(MARKS),
        lambda: rng.choice(common)[:2] + rng.choice(MARKS) + rng.choice(common)[:2],
        lambda: rng.choice(common),
        lambda: rng.choice(rare),
        lambda: rng.choice(common) + rng.choice(common),
        lambda: rng.choice(common)[-2:] + rng.choice(common)[:2],
        lambda: rng.choice(common)[1:4],
        lambda: rng.choice("etaoinsrhl") * rng.randint(2, 8),
        lambda: "".join(rng.choice("etaoinsrhl") for _ in range(rng.randint(3, 7))),
        lambda: rng.choice(common) + rng.choice(MARKS),
    ]


def _admissible(tokens: list[str], filler: str) -> str:
    """The query of `tokens`: within the bound, filled up to its characters with `filler`;
    past it (more tokens), as it is."""
    query = " ".join(tokens)
    if len(tokens) > MAX_TOKENS:
        return query
    room = MAX_CHARACTERS - len(query) - 1
    if room > 0 and filler:
        query += " " + (filler * (room // len(filler) + 1))[:room]
    return query[:MAX_CHARACTERS]


def worst_query(
    cost: Callable[[str], float], words: list[str], *, seed: int = 13, draws: int = 40
) -> tuple[str, float]:
    """The costliest query found, and its cost."""
    rng = random.Random(seed)
    shapes = _shapes(words, rng)

    def draw() -> list[str]:
        # Each draw mixes a few shapes, so that queries made mostly of one shape (a sentence
        # of the commonest words) are drawn too; a mix that runs out of new tokens is
        # topped up from every shape. One draw in three goes past the bound, which the
        # tool answers on the query's most informative leading words.
        mix = rng.sample(shapes, rng.randint(1, 3))
        size = LONG_TOKENS if rng.random() < 1 / 3 else MAX_TOKENS - 1
        tokens: list[str] = []
        seen: set[str] = set()
        tries = 0
        while len(tokens) < size:
            tries += 1
            token = rng.choice(mix if tries < 20 * size else shapes)()
            if token.lower() not in seen:
                seen.add(token.lower())
                tokens.append(token)
        return tokens

    best_tokens, best_filler, best = draw(), "", -1.0
    for number in range(draws):
        tokens = draw()
        filler = rng.choice(["", "e", "etao", rng.choice(words)])
        spent = cost(_admissible(tokens, filler))
        if spent > best:
            best_tokens, best_filler, best = tokens, filler, spent
        if number == draws // 2:
            break
    for _ in range(draws):  # hill climbing from the best draw
        tokens = list(best_tokens)
        tokens[rng.randrange(len(tokens))] = rng.choice(shapes)()
        if len({t.lower() for t in tokens}) < len(tokens):
            continue
        spent = cost(_admissible(tokens, best_filler))
        if spent > best:
            best_tokens, best = tokens, spent
    query = _admissible(best_tokens, best_filler)
    return query, max(cost(query) for _ in range(3))


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _warm(ranking: str) -> None:
    """Index and search a one-page tree, so that RSS growth counts the index alone.

    The first index a process builds pages in the search libraries' own code (Tantivy's
    is 8 MiB): the same for any tree, and none of it memory the pages cost.
    """
    import tempfile  # noqa: PLC0415

    from kinetis_mcp_docs.server.application import DocsApplication  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "page.md").write_text("# Warm\n\nA page to warm the code.\n")
        application = DocsApplication(pages_root=directory, ranking=ranking)
        application.site_tools().call("search_docs", {"query": "warm"})
        application.close()


def measure(root: Path, ranking: str, *, repeats: int = 15, draws: int = 40) -> dict[str, object]:
    """Build the index over `root` through the route's tool, then time queries on it."""
    from benchmarks import http_tree  # noqa: PLC0415
    from kinetis_mcp_docs.server.application import DocsApplication  # noqa: PLC0415

    _warm(ranking)
    before = _rss_mib()
    application = DocsApplication(pages_root=str(root), ranking=ranking)
    tools = application.site_tools()
    began = time.perf_counter()
    tools.call("search_docs", {"query": "warm"})
    build = time.perf_counter() - began
    grown = _rss_mib() - before

    def cost(query: str, limit: int = 20) -> float:
        began = time.process_time()
        result = tools.call("search_docs", {"query": query, "limit": limit})
        spent = time.process_time() - began
        if result.get("isError"):
            raise ValueError(f"refused: {query!r}")
        return spent

    def wall(query: str) -> float:
        began = time.perf_counter()
        tools.call("search_docs", {"query": query})
        return time.perf_counter() - began

    kinds = http_tree.queries()
    ordinary = {kind: [wall(query) for _ in range(repeats)] for kind, query in kinds.items()}
    every = [sample for samples in ordinary.values() for sample in samples]
    query, worst = worst_query(cost, http_tree.vocabulary(), draws=draws)
    application.close()
    return {
        "ranking": ranking,
        "build_s": build,
        "rss_growth_mib": grown,
        "p50_s": statistics.median(every),
        "per_kind_s": {kind: statistics.median(values) for kind, values in ordinary.items()},
        "worst_cpu_s": worst,
        "worst_query": query,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--ranking", default="owndocs")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--draws", type=int, default=40)
    options = parser.parse_args(argv)
    figures = measure(options.tree, options.ranking, repeats=options.repeats, draws=options.draws)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
