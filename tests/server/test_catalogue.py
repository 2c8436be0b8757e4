"""The catalogue written in code and the pages in docs/ name each other, both ways."""

from __future__ import annotations

import re
from pathlib import Path

from kinetis_mcp_docs.server.application import DocsApplication
from kinetis_mcp_docs.server.core.catalogue import PAGES, URI_PREFIX, slug_of

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_catalogue_entry_names_a_page_in_docs() -> None:
    missing = [slug for slug, *_ in PAGES if not (DOCS / f"{slug}.md").is_file()]
    assert missing == []


def test_every_page_in_docs_has_a_catalogue_entry() -> None:
    listed = {slug for slug, *_ in PAGES}
    unlisted = sorted(path.stem for path in DOCS.glob("*.md") if path.stem not in listed)
    assert unlisted == []


def test_the_catalogue_holds_the_pages_the_server_and_smoke_test_rely_on() -> None:
    assert slug_of(URI_PREFIX + "index") == "index"
    assert slug_of(URI_PREFIX + "agent-workflow") == "agent-workflow"


def test_a_uri_outside_the_catalogue_names_no_page() -> None:
    for uri in ("kinetis://docs/", "kinetis://docs/index.md", "KINETIS://docs/index", "index"):
        assert slug_of(uri) is None


def test_catalogue_slugs_are_unique() -> None:
    slugs = [slug for slug, *_ in PAGES]
    assert len(slugs) == len(set(slugs))


def _table_under(page: Path, heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` in `page`, each as its cells."""
    text = page.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return [row for row in rows[1:] if not re.fullmatch(r"-+", row[0])]


def test_the_server_pages_catalogue_table_is_the_catalogue_the_server_lists_in_order() -> None:
    shown = [
        (uri.strip("`"), name) for uri, name in _table_under(DOCS / "server.md", "## The catalogue")
    ]

    application = DocsApplication()
    try:
        listed = [(resource["uri"], resource["name"]) for resource in application.resources()]
    finally:
        application.close()

    assert shown == listed
