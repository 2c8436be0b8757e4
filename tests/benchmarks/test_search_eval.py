"""The judged trees the search figures are measured on: every judgment points at a real
line, and the export script writes a repository's pages byte for byte."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from benchmarks.search_eval import evaluate
from benchmarks.search_eval.export_corpus import CORPORA, Corpus, export

TREES = evaluate.judged_trees()


def test_at_most_three_trees_are_tuned_on_and_they_come_first() -> None:
    tuned = [tree.name for tree in TREES if not tree.held_out]
    assert tuned == ["nuxt", "eslint", "redis"]
    assert [tree.held_out for tree in TREES] == sorted(tree.held_out for tree in TREES)
    assert {tree.name for tree in TREES} == set(CORPORA)


def test_four_trees_have_at_least_60_judged_queries_of_every_kind() -> None:
    counts = {tree.name: Counter(q.kind for q in evaluate.queries(tree.queries)) for tree in TREES}
    for kinds in counts.values():
        assert set(kinds) == set(evaluate.KINDS)
    large = [name for name, kinds in counts.items() if sum(kinds.values()) >= 60]
    assert len(large) >= 4, counts
    assert any(name for name in large if CORPORA[name].held_out)


@pytest.mark.parametrize("tree", TREES, ids=[tree.name for tree in TREES])
def test_every_judged_answer_is_a_line_of_an_existing_page(tree: evaluate.JudgedTree) -> None:
    if not tree.exported:
        pytest.skip(f"{tree.name} is not exported here: {tree.export_command()}")
    judged = evaluate.queries(tree.queries)
    for query in judged:
        assert query.answers, query.query
        for url, fragment in query.answers.items():
            text = evaluate.page_file(tree.root, url).read_text(encoding="utf-8")
            assert "\n" not in fragment  # the answer is one line
            evaluate.answer_line(text, fragment)  # raises when the page does not hold it


def _git(repository: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repository), *arguments], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_an_export_writes_the_folders_pages_at_the_commit_byte_for_byte(tmp_path: Path) -> None:
    repository = tmp_path / "repository"
    (repository / "site" / "docs" / "guide").mkdir(parents=True)
    (repository / "site" / "other").mkdir()
    page = "---\ntitle: Caf\u00e9\n---\r\nA line\r\nwith CRLF and no final newline"
    (repository / "site" / "docs" / "guide" / "intro.md").write_bytes(page.encode("utf-8"))
    (repository / "site" / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (repository / "site" / "docs" / "notes.txt").write_text("not a page\n", encoding="utf-8")
    (repository / "site" / "other" / "left.md").write_text("# Elsewhere\n", encoding="utf-8")
    (repository / "LICENSE").write_text("The licence.\n", encoding="utf-8")
    _git(repository.parent, "init", "-q", str(repository))
    _git(repository, "add", "-A")
    _git(repository, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pages")
    commit = _git(repository, "rev-parse", "HEAD")
    # A later commit changes a page: the export reads the named commit, not the work tree.
    (repository / "site" / "docs" / "index.md").write_text("# Changed\n", encoding="utf-8")
    _git(repository, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "later")
    target = tmp_path / "corpus"
    (target / "docs").mkdir(parents=True)
    (target / "docs" / "stale.md").write_text("# From a run before\n", encoding="utf-8")
    corpus = Corpus("https://example.org/site", commit, ("site/docs",), "site/docs/", target)

    assert export(repository, corpus) == 2

    written = sorted(path.relative_to(target).as_posix() for path in target.rglob("*"))
    assert written == [
        "LICENSE",
        "SOURCE",
        "docs",
        "docs/guide",
        "docs/guide/intro.md",
        "docs/index.md",
    ]
    assert (target / "docs" / "guide" / "intro.md").read_bytes() == page.encode("utf-8")
    assert (target / "docs" / "index.md").read_text(encoding="utf-8") == "# Home\n"
    assert (target / "SOURCE").read_text(encoding="utf-8") == (
        f"https://example.org/site\ncommit {commit}\nsite/docs/*.md, exported by export_corpus.py\n"
    )


def _tree(root: Path, pages: dict[str, str]) -> Path:
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _system(urls: list[str]) -> evaluate.System:
    return evaluate.System(
        "fixed",
        lambda _query: [evaluate.Result(url, "", None) for url in urls],
        lambda _result: 0,
        lambda _query: 0,
    )


def test_a_result_naming_the_answer_page_by_another_of_its_urls_finds_it(tmp_path: Path) -> None:
    # A folder's index.md is served at the folder's URL; a judgment may name it `…/index`.
    root = _tree(tmp_path, {"guide/index.md": "# Guide\n\nThe answer.\n", "other.md": "# O\n"})
    judged = [evaluate.Query("question", "q", {"/guide/index": "The answer."})]
    scores = evaluate.evaluate(_system(["/other", "/guide"]), judged, root)
    assert scores["all"].reciprocal == [0.5]


def test_the_sqlite_baseline_ranks_by_bm25_with_the_title_weighing_more(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "body.md": "---\ntitle: Other\n---\nThe cache holds pages.\n",
            "cache.md": "---\ntitle: Cache\n---\nHow pages are kept.\n",
            "none.md": "---\ntitle: None\n---\nNothing of the kind.\n",
        },
    )
    system = evaluate.fts5_system(root)
    found = system.search("cache")
    assert [result.url for result in found] == ["/cache", "/body"]
    assert found[1].snippet == "The cache holds pages."
    assert system.search("?!") == []


def test_a_tree_not_exported_is_a_row_naming_the_command_that_exports_it() -> None:
    from benchmarks import search_quality  # noqa: PLC0415 - the bench's module, here alone

    tree = evaluate.JudgedTree(
        "absent",
        Path("no-such-folder"),
        Path("absent.json"),
        held_out=True,
        repository="https://example.org/absent",
    )
    (row,) = search_quality.search_quality_rows([tree])
    assert row.ours == "not run"
    assert "git clone --bare https://example.org/absent absent.git" in row.note
    assert "export_corpus --corpus absent absent.git" in row.note
