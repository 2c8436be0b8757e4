"""Export an evaluation corpus: the pages of a public repository at a fixed commit.

    python -m benchmarks.search_eval.export_corpus --corpus eslint PATH-TO-AN-ESLINT-CLONE
    python -m benchmarks.search_eval.export_corpus --corpus cpp-docs PATH-TO-A-CPP-DOCS-CLONE

The clone may be bare (`git clone --bare URL`; the commit must be in it). Every `*.md`
file under the corpus's folders at its commit is written, byte for byte, under its
`docs/` folder (the folder's prefix `strip` taken off each path), with the repository's
licence and a `SOURCE` file naming the repository and the commit. Nothing but git itself
is needed.

`CORPORA` is the evaluation's table of trees. The three small ones first judged (nuxt,
sveltekit, vue) are committed beside this file, so that the benchmark runs without a
network; the others are exported into `.bench/corpora/` of the checkout, which is not
committed (cpp-docs alone is 45 MB), and the benchmark says, for a tree not exported yet,
the command that exports it. A tree with `held_out` False is one the ranking may be tuned
on; the rest are held out (see README.md).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Trees that are not committed (their licences or sizes keep them out of the repository)
# are exported here, beside the benchmark's other results, and read from here.
EXPORTED = HERE.parent.parent / ".bench" / "corpora"


@dataclass(frozen=True)
class Corpus:
    repository: str
    commit: str
    folders: tuple[str, ...]  # in the repository; every `*.md` below them
    strip: str  # the prefix each page's path loses under `docs/`
    target: Path
    licence: str = "LICENSE"
    # Held out: never tuned on; its figures are read, never used to choose a change.
    held_out: bool = True


CORPORA = {
    "nuxt": Corpus(
        "https://github.com/nuxt/nuxt",
        "4e0099839c3ea0483e6dc639e4be6d9bdffc3e56",
        ("docs",),
        "docs/",
        HERE / "nuxt",
        held_out=False,
    ),
    "vue": Corpus(
        "https://github.com/vuejs/docs",
        "01e098a967951ea92d09b100b8e7d82c7a3369a2",
        ("src/guide", "src/api", "src/error-reference", "src/style-guide", "src/glossary"),
        "src/",
        HERE / "heldout" / "vue",
    ),
    "sveltekit": Corpus(
        "https://github.com/sveltejs/kit",
        "aa810a04146b98b77592f7b384347140d29ff599",
        ("documentation/docs",),
        "documentation/docs/",
        HERE / "heldout" / "sveltekit",
    ),
    "eslint": Corpus(
        "https://github.com/eslint/eslint",
        "c27bc926e496985eb7911c09eb60914b2e4b5d0f",
        ("docs/src",),
        "docs/src/",
        EXPORTED / "eslint",
        held_out=False,
    ),
    "redis": Corpus(
        "https://github.com/redis/docs",
        "63f31f69985905d997fa5b0c02e1559b5d04c8b2",
        (
            "content/commands",
            "content/develop/data-types",
            "content/develop/reference",
            "content/develop/using-commands",
            "content/develop/programmability",
            "content/develop/pubsub",
            "content/develop/get-started",
        ),
        "content/",
        EXPORTED / "redis",
        held_out=False,
    ),
    "cpp-docs": Corpus(
        "https://github.com/MicrosoftDocs/cpp-docs",
        "a2e592a8fc391b6aff8d1323f5b58696abdc5d57",
        ("docs",),
        "docs/",
        EXPORTED / "cpp-docs",
    ),
}


def _git(clone: Path, *arguments: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(clone), *arguments], check=True, capture_output=True
    ).stdout


def export(clone: Path, corpus: Corpus, target: Path | None = None) -> int:
    """Write the corpus under `target` (its own by default; replaced whole); the number
    of pages written."""
    target = corpus.target if target is None else target
    names = _git(clone, "ls-tree", "-r", "-z", "--name-only", corpus.commit, *corpus.folders)
    pages = [name.decode("utf-8") for name in names.split(b"\0") if name.endswith(b".md")]
    if target.exists():
        shutil.rmtree(target)
    # One `git cat-file --batch` for every page: a `git show` each took minutes for the
    # 10,000 pages of the largest tree.
    request = "".join(f"{corpus.commit}:{name}\n" for name in pages).encode("utf-8")
    output = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "--batch"],
        input=request,
        check=True,
        capture_output=True,
    ).stdout
    position = 0
    for name in pages:
        header_end = output.index(b"\n", position)
        size = int(output[position:header_end].split()[2])
        content = output[header_end + 1 : header_end + 1 + size]
        position = header_end + 1 + size + 1
        path = target / "docs" / name.removeprefix(corpus.strip)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (target / "LICENSE").write_bytes(_git(clone, "show", f"{corpus.commit}:{corpus.licence}"))
    folders = ", ".join(f"{folder}/*.md" for folder in corpus.folders)
    (target / "SOURCE").write_text(
        f"{corpus.repository}\ncommit {corpus.commit}\n{folders}, exported by export_corpus.py\n",
        encoding="utf-8",
    )
    return len(pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, help="a clone of the corpus's repository")
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="nuxt")
    parser.add_argument("--target", type=Path, default=None)
    options = parser.parse_args(argv)
    corpus = CORPORA[options.corpus]
    count = export(options.clone, corpus, options.target)
    print(f"{count} pages at {corpus.commit} written to {options.target or corpus.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
