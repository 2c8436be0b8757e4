"""The catalogue written in code and the pages in docs/ name each other, both ways."""

from __future__ import annotations

from pathlib import Path

from kinetis_mcp_docs.server.catalogue import PAGES, URI_PREFIX, slug_of

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
