"""Export the evaluation corpus: the `docs/` pages of a clone of nuxt/nuxt at a fixed commit.

    python -m benchmarks.search_eval.export_corpus PATH-TO-A-NUXT-CLONE

The clone may be bare. Every `*.md` file under `docs/` at `COMMIT` is written, byte for
byte, under `benchmarks/search_eval/nuxt/docs/`, with the repository's licence (MIT) and a
`SOURCE` file naming the repository and the commit. The tree is committed so that the
benchmark needs no network; run this again only to move to another commit (and judge the
queries again). Nothing but git itself is needed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = "https://github.com/nuxt/nuxt"
COMMIT = "4e0099839c3ea0483e6dc639e4be6d9bdffc3e56"
TARGET = Path(__file__).resolve().parent / "nuxt"


def _git(clone: Path, *arguments: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(clone), *arguments], check=True, capture_output=True
    ).stdout


def export(clone: Path, target: Path = TARGET, commit: str = COMMIT) -> int:
    """Write the tree under `target` (replaced whole); the number of pages written."""
    names = _git(clone, "ls-tree", "-r", "-z", "--name-only", commit, "docs").split(b"\0")
    pages = [name.decode("utf-8") for name in names if name.endswith(b".md")]
    if target.exists():
        shutil.rmtree(target)
    for name in pages:
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_git(clone, "show", f"{commit}:{name}"))
    (target / "LICENSE").write_bytes(_git(clone, "show", f"{commit}:LICENSE"))
    (target / "SOURCE").write_text(
        f"{REPOSITORY}\ncommit {commit}\ndocs/*.md, exported by export_corpus.py\n",
        encoding="utf-8",
    )
    return len(pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, help="a clone of nuxt/nuxt (bare or not)")
    parser.add_argument("--target", type=Path, default=TARGET)
    options = parser.parse_args(argv)
    count = export(options.clone, options.target)
    print(f"{count} pages at {COMMIT} written to {options.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
