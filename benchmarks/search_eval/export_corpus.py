"""Export an evaluation corpus: the pages of a public repository at a fixed commit.

    python -m benchmarks.search_eval.export_corpus PATH-TO-A-NUXT-CLONE
    python -m benchmarks.search_eval.export_corpus --corpus vue PATH-TO-A-VUEJS-DOCS-CLONE

The clone may be bare. Every `*.md` file under the corpus's folders at its commit is
written, byte for byte, under its `docs/` folder here (the folder's prefix `strip` taken
off each path), with the repository's licence and a `SOURCE` file naming the repository
and the commit. The trees are committed so that the benchmark needs no network; run this
again only to move a corpus to another commit (and judge its queries again). Nothing but
git itself is needed.

`nuxt` is the set the ranking was developed against; the others are held out: judged
blind to every ranking, after it was built, and never tuned on (see README.md).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Corpus:
    repository: str
    commit: str
    folders: tuple[str, ...]  # in the repository; every `*.md` below them
    strip: str  # the prefix each page's path loses under `docs/`
    target: Path
    licence: str = "LICENSE"


CORPORA = {
    "nuxt": Corpus(
        "https://github.com/nuxt/nuxt",
        "4e0099839c3ea0483e6dc639e4be6d9bdffc3e56",
        ("docs",),
        "docs/",
        HERE / "nuxt",
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
    for name in pages:
        path = target / "docs" / name.removeprefix(corpus.strip)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_git(clone, "show", f"{corpus.commit}:{name}"))
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
