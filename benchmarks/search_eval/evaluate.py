"""Judge a ranking on the evaluation corpus: MRR@10, Hit@1/3/5, snippet rate, agent bytes.

    python -m benchmarks.search_eval.evaluate [--ranking relevance] [--tree vue] [--show]

A system is anything that answers `search(query) -> [(url, snippet, line | None)]` for the
corpus, best first; `route_system` is `search_docs` itself, called through
`DocsApplication.site_tools()` as the HTTP route calls it; `bm25s_system` and `fts5_system`
are the two plain BM25 baselines: PyPI's `bm25s` (installed in the bench session only) and
SQLite's FTS5, which ships in Python's `sqlite3`.

- MRR@10: the mean over queries of 1/rank of the first answer page in the top 10 (0 if none).
  A result is an answer page when its URL names the file a judgment's URL names: a folder's
  `index.md` is served at the folder's URL and at `…/index` alike. A query the tool refuses
  answers nothing.
- Hit@k: the share of queries with an answer page in the top k.
- Snippet rate: of the queries whose first answer page is in the top 10, the share whose
  result for it has a snippet spanning the answer line (see README.md).
- Agent bytes: what an agent reads that searches (limit 5), then reads the top hit: one
  window of `AGENT_WINDOW` lines at the hit's `line` where the result has one, else the
  whole page (`fetch_page` as the contract has it). The UTF-8 bytes of both tool results'
  text; the median and the 95th percentile over queries.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "queries"  # <tree>.json: each tree's judged queries, frozen
AGENT_WINDOW = 80
KINDS = ("identifier", "question", "error")


@dataclass(frozen=True)
class Result:
    url: str
    snippet: str
    line: int | None = None


@dataclass(frozen=True)
class Query:
    kind: str
    query: str
    answers: dict[str, str]  # url -> answer fragment


@dataclass
class System:
    """A ranking under test: its search, and what the agent's two reads cost."""

    name: str
    search: Callable[[str], list[Result]]
    read_bytes: Callable[[Result], int]
    search_bytes: Callable[[str], int]


@dataclass
class Scores:
    reciprocal: list[float] = field(default_factory=list)
    hits: dict[int, list[bool]] = field(default_factory=lambda: {1: [], 3: [], 5: []})
    snippet_shown: list[bool] = field(default_factory=list)
    agent_bytes: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        return {
            "mrr@10": statistics.fmean(self.reciprocal),
            **{f"hit@{k}": statistics.fmean(found) for k, found in self.hits.items()},
            "snippet_rate": statistics.fmean(self.snippet_shown) if self.snippet_shown else 0.0,
            "agent_bytes_p50": statistics.median(self.agent_bytes),
            "agent_bytes_p95": _percentile(self.agent_bytes, 0.95),
            "queries": len(self.reciprocal),
        }


def _percentile(values: list[int], share: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))])


def queries(path: Path) -> list[Query]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [
        Query(item["kind"], item["query"], {a["url"]: a["answer"] for a in item["answers"]})
        for item in document["queries"]
    ]


@dataclass(frozen=True)
class JudgedTree:
    """A documentation tree and its judged queries."""

    name: str
    root: Path  # its docs/; absent until the tree is exported (see `export_command`)
    queries: Path
    held_out: bool  # never tuned on: its figures are read, never used to choose a change
    repository: str = ""  # where its pages come from (`export_corpus.CORPORA`)

    @property
    def exported(self) -> bool:
        return self.root.is_dir()

    def export_command(self) -> str:
        clone = f"{self.name}.git"
        return (
            f"git clone --bare {self.repository or 'ITS-REPOSITORY'} {clone} && "
            f"python -m benchmarks.search_eval.export_corpus --corpus {self.name} {clone}"
        )


def judged_trees() -> list[JudgedTree]:
    """Every tree of the evaluation (`export_corpus.CORPORA`), those tuned on first."""
    from benchmarks.search_eval.export_corpus import CORPORA  # noqa: PLC0415

    trees = [
        JudgedTree(
            name,
            corpus.target / "docs",
            QUERIES / f"{name}.json",
            corpus.held_out,
            corpus.repository,
        )
        for name, corpus in CORPORA.items()
    ]
    return sorted(trees, key=lambda tree: tree.held_out)


def page_file(root: Path, url: str) -> Path:
    for candidate in (f"{url.strip('/')}.md", f"{url.strip('/')}/index.md"):
        if (root / candidate).is_file():
            return root / candidate
    raise FileNotFoundError(url)


def answer_line(text: str, fragment: str) -> int:
    position = text.find(fragment)
    if position < 0:
        raise ValueError(f"judged fragment not in the page: {fragment!r}")
    return text.count("\n", 0, position) + 1


def snippet_lines(text: str, snippet: str, line: int | None) -> range:
    """The page lines a snippet spans: from its `line` when it has one, else from where
    its words are found in the page."""
    words = snippet.replace("…", " ").split()
    if not words:
        return range(0)
    lines = text.splitlines()
    if line is None:
        # Find the line holding the snippet's first few words, in order.
        head = " ".join(words[: min(4, len(words))])
        flat: list[str] = []
        starts: list[tuple[int, int]] = []
        for number, content in enumerate(lines, 1):
            starts.append((len(" ".join(flat)), number))
            flat.extend(content.split())
        joined = " ".join(flat)
        position = joined.find(head)
        if position < 0:
            return range(0)
        line = max(number for start, number in starts if start <= position + 1)
    # As many lines as the snippet's words fill.
    remaining, end = len(words), line
    while remaining > 0 and end <= len(lines):
        remaining -= len(lines[end - 1].split())
        end += 1
    return range(line, max(end, line + 1))


def evaluate(system: System, judged: list[Query], root: Path) -> dict[str, Scores]:
    """Scores of `system` over `judged`, by kind and overall (`all`)."""
    by_kind = {kind: Scores() for kind in (*KINDS, "all")}
    for query in judged:
        results = system.search(query.query)
        answers = {page_file(root, url): fragment for url, fragment in query.answers.items()}
        pages = [_page_or_none(root, result.url) for result in results[:10]]
        rank = next((number for number, page in enumerate(pages, 1) if page in answers), 0)
        for scores in (by_kind[query.kind], by_kind["all"]):
            scores.reciprocal.append(1 / rank if rank else 0.0)
            for k, found in scores.hits.items():
                found.append(0 < rank <= k)
        if rank:
            result, page = results[rank - 1], pages[rank - 1]
            assert page is not None  # it is an answer page
            text = page.read_text(encoding="utf-8")
            target = answer_line(text, answers[page])
            shown = target in snippet_lines(text, result.snippet, result.line)
            for scores in (by_kind[query.kind], by_kind["all"]):
                scores.snippet_shown.append(shown)
        else:
            urls = [result.url for result in results[:3]]
            by_kind["all"].misses.append(f"{query.kind}: {query.query[:70]} -> {urls}")
        spent = system.search_bytes(query.query) + (system.read_bytes(results[0]) if results else 0)
        for scores in (by_kind[query.kind], by_kind["all"]):
            scores.agent_bytes.append(spent)
    return by_kind


def _page_or_none(root: Path, url: str) -> Path | None:
    try:
        return page_file(root, url)
    except FileNotFoundError:
        return None


def route_system(ranking: str, root: Path) -> tuple[System, Callable[[], None]]:
    """`search_docs` and `fetch_page` over `root` in this process; and how to close them."""
    from kinetis_mcp_docs.server.application import DocsApplication  # noqa: PLC0415

    application = DocsApplication(pages_root=str(root), ranking=ranking)
    tools = application.site_tools()

    def text_of(result: dict[str, object]) -> str:
        content = result["content"]
        assert isinstance(content, list)
        return str(content[0]["text"])

    def search(query: str) -> list[Result]:
        answered = tools.call("search_docs", {"query": query})
        if answered.get("isError"):
            return []
        document = json.loads(text_of(answered))
        return [
            Result(item["url"], item["snippet"], item.get("line")) for item in document["results"]
        ]

    def search_bytes(query: str) -> int:
        return len(text_of(tools.call("search_docs", {"query": query})).encode())

    def read_bytes(result: Result) -> int:
        arguments: dict[str, object] = {"url": result.url}
        if result.line is not None:
            arguments |= {"startLine": result.line, "lineCount": AGENT_WINDOW}
        return len(text_of(tools.call("fetch_page", arguments)).encode())

    return System(f"search_docs ({ranking})", search, read_bytes, search_bytes), application.close


def bm25s_system(root: Path) -> System | None:
    """The plain BM25 baseline: `bm25s` over each page's title (twice) and text, its own
    tokenizer (no stemmer); snippets are the page's first 240 characters; the agent reads
    the whole page. None where `bm25s` is not installed."""
    try:
        import bm25s  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415
    except ImportError:
        return None
    from kinetis_mcp_docs.server.search.index import split_frontmatter  # noqa: PLC0415

    urls, corpus, texts = [], [], {}
    for path in sorted(root.rglob("*.md")):
        url = _url_of(root, path)
        text = path.read_text(encoding="utf-8")
        fields, body = split_frontmatter(text)
        title = fields.get("title", "")
        urls.append(url)
        texts[url] = text
        corpus.append(f"{title} {title} {body}")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)

    def search(query: str) -> list[Result]:
        tokens = bm25s.tokenize([query], show_progress=False)
        if not tokens.vocab:
            return []
        found, scores = retriever.retrieve(tokens, k=min(10, len(urls)), show_progress=False)
        return [
            Result(urls[int(index)], " ".join(corpus[int(index)].split())[:240])
            for index, score in zip(found[0], scores[0], strict=True)
            if score > 0
        ]

    def search_bytes(query: str) -> int:
        return len(json.dumps([vars(result) for result in search(query)[:5]]).encode())

    def read_bytes(result: Result) -> int:
        return len(json.dumps({"url": result.url, "content": texts[result.url]}).encode())

    return System("bm25s (title twice + body)", search, read_bytes, search_bytes)


def fts5_system(root: Path) -> System:
    """The plain SQLite baseline: an FTS5 table of each page's title and text (the Porter
    stemmer over `unicode61`, FTS5's English set-up), ranked by FTS5's `bm25()` with the
    title weighing twice the text, any of the query's words matching (OR); snippets are
    FTS5's own `snippet()` of the text; the agent reads the whole page."""
    import sqlite3  # noqa: PLC0415

    from kinetis_mcp_docs.server.search.index import split_frontmatter  # noqa: PLC0415

    database = sqlite3.connect(":memory:", check_same_thread=False)
    database.execute(
        "CREATE VIRTUAL TABLE pages USING fts5(title, body, tokenize='porter unicode61')"
    )
    urls, texts = [], {}
    for path in sorted(root.rglob("*.md")):
        url = _url_of(root, path)
        text = path.read_text(encoding="utf-8")
        fields, body = split_frontmatter(text)
        urls.append(url)
        texts[url] = text
        database.execute(
            "INSERT INTO pages (rowid, title, body) VALUES (?, ?, ?)",
            (len(urls), fields.get("title", ""), body),
        )

    def search(query: str) -> list[Result]:
        words = re.findall(r"\w+", query.lower())
        if not words:
            return []
        match = " OR ".join(f'"{word}"' for word in dict.fromkeys(words))
        found = database.execute(
            "SELECT rowid, snippet(pages, 1, '', '', '…', 40) FROM pages WHERE pages MATCH ? "
            "ORDER BY bm25(pages, 2.0, 1.0) LIMIT 10",
            (match,),
        ).fetchall()
        return [Result(urls[row - 1], " ".join(snippet.split())[:240]) for row, snippet in found]

    def search_bytes(query: str) -> int:
        return len(json.dumps([vars(result) for result in search(query)[:5]]).encode())

    def read_bytes(result: Result) -> int:
        return len(json.dumps({"url": result.url, "content": texts[result.url]}).encode())

    return System("SQLite FTS5 (bm25, title twice)", search, read_bytes, search_bytes)


def _url_of(root: Path, path: Path) -> str:
    """The URL the route serves the page file `path` at."""
    relative = path.relative_to(root).with_suffix("").as_posix()
    return "/" + (relative[: -len("/index")] if relative.endswith("/index") else relative)


def _nothing() -> None:
    pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ranking", action="append", choices=["owndocs", "relevance", "bm25s", "fts5"]
    )
    parser.add_argument("--show", action="store_true", help="print the misses")
    trees = {tree.name: tree for tree in judged_trees()}
    parser.add_argument("--tree", choices=sorted(trees), default="nuxt")
    options = parser.parse_args(argv)
    tree = trees[options.tree]
    if not tree.exported:
        print(f"{tree.name} is not exported: {tree.export_command()}", file=sys.stderr)
        return 2
    judged = queries(tree.queries)
    for ranking in options.ranking or ["owndocs", "relevance"]:
        if ranking == "bm25s":
            baseline = bm25s_system(tree.root)
            if baseline is None:
                print("bm25s is not installed (nox -s bench installs it)", file=sys.stderr)
                return 2
            system, close = baseline, _nothing
        elif ranking == "fts5":
            system, close = fts5_system(tree.root), _nothing
        else:
            system, close = route_system(ranking, tree.root)
        try:
            scores = evaluate(system, judged, tree.root)
        finally:
            close()
        for kind, kind_scores in scores.items():
            figures = kind_scores.summary()
            print(system.name, kind, {k: round(v, 3) for k, v in figures.items()})
        if options.show:
            print("\n".join(scores["all"].misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
