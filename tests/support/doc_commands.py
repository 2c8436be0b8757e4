"""The commands of the documentation's ```sh blocks, read as a user reads them."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.wheelhouse import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs"
README = PROJECT_ROOT / "README.md"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# A comment ending a command: two spaces or more, then `# `.
_COMMENT = re.compile(r"\s{2,}#\s.*$")


def commands(text: str) -> list[str]:
    """The commands of the ```sh blocks of `text`: continued lines joined, comments dropped."""
    found = []
    for block in SH_BLOCK.findall(text):
        logical = block.replace("\\\n", " ")
        for line in logical.splitlines():
            command = " ".join(_COMMENT.sub("", line).split())
            if command:
                found.append(command)
    return found


def pages() -> list[Path]:
    """Every page whose commands a user may run: the README, then docs/ in order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def the_one(page: Path, ending: str) -> str:
    """The one command of `page` that ends with `ending`, as written there."""
    (found,) = [
        command for command in commands(page.read_text("utf-8")) if command.endswith(ending)
    ]
    return found
