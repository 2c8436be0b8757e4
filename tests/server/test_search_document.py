"""The search result's JSON text: exactly what `json.dumps(indent=2)` writes of it."""

from __future__ import annotations

import json
import random

import pytest

from kinetis_mcp_docs.server.search.index import Hit
from kinetis_mcp_docs.server.tools.site_tools import search_document

# Every kind of character a title, URL, snippet or query can hold that JSON writes its own
# way: quotes, backslashes, control characters, DEL, non-ASCII, a lone surrogate, U+2028.
CHARACTERS = 'ab Z0"\\/\n\r\t\x00\x1f\x7féß漢\U0001f600\ud800\u2028'


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARACTERS) for _ in range(rng.randint(0, 12)))


def _plain(query: str, hits: list[Hit], terms_used: int | None = None) -> str:
    results: list[dict[str, object]] = []
    for hit in hits:
        result: dict[str, object] = {"title": hit.title, "url": hit.url, "snippet": hit.snippet}
        if hit.line is not None:
            result["line"] = hit.line
        results.append(result)
    document: dict[str, object] = {"query": query}
    if terms_used is not None:
        document["termsUsed"] = terms_used
    document["results"] = results
    return json.dumps(document, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("seed", range(4))
def test_a_search_document_is_written_as_json_dumps_writes_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        with_lines = rng.random() < 0.5
        hits = [
            Hit(
                _text(rng),
                _text(rng),
                _text(rng),
                rng.random(),
                rng.choice([1, 7, 12_345]) if with_lines else None,
            )
            for _ in range(rng.randint(0, 4))
        ]
        query = _text(rng)
        used = rng.choice([None, 0, 32])
        written = search_document(query, hits, used)
        assert written == _plain(query, hits, used)
        assert json.loads(written)["query"] == query
