"""`fetch_page`'s URL decoding against `decodeURIComponent` as ECMAScript specifies it."""

from __future__ import annotations

import random

import pytest

from kinetis_mcp_docs.server.core.exceptions import RejectedUrl
from kinetis_mcp_docs.server.site.page_paths import MALFORMED, percent_decoded

_HEX = frozenset("0123456789abcdefABCDEF")


def _decode_uri_component(url: str) -> str | None:
    """ECMAScript's Decode, step by step: each run of escapes decoded as UTF-8 on its own,
    every other character kept; None where it throws a URIError."""
    out: list[str] = []
    position = 0
    while position < len(url):
        if url[position] != "%":
            out.append(url[position])
            position += 1
            continue
        run = bytearray()
        while position < len(url) and url[position] == "%":
            digits = url[position + 1 : position + 3]
            if len(digits) != 2 or not _HEX.issuperset(digits):
                return None
            run.append(int(digits, 16))
            position += 3
        try:
            out.append(run.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    text = "".join(out)
    try:
        text.encode("utf-8")  # a lone surrogate names no file
    except UnicodeEncodeError:
        return None
    return text


_PIECES = [
    *("%", "%2", "%2e", "%2E", "%2f", "%5c", "%5C%78", "%00", "%zz", "%g1"),
    *("%C3", "%A9", "%C3%A9", "%F0%9F", "%98%80", "%E2%82%AC", "%ED%A0%80", "%C0%AF"),
    *("a", "x", "0", "9", "/", "\\", "\\x", "\\u", "\\N{", "}", "\\0", "\\\\"),
    *("é", "\u20ac", "\U0001f600", "\ud800", "\x00", "."),
]


def _random_urls(count: int) -> list[str]:
    pick = random.Random(14)
    return ["".join(pick.choice(_PIECES) for _ in range(pick.randint(0, 10))) for _ in range(count)]


def test_a_url_decodes_exactly_as_decode_uri_component_decodes_it() -> None:
    decoded = 0
    for url in _random_urls(50_000):
        expected = _decode_uri_component(url)
        if expected is None:
            with pytest.raises(RejectedUrl, match=MALFORMED):
                percent_decoded(url)
        else:
            assert percent_decoded(url) == expected, url
            decoded += 1
    assert decoded > 5_000  # the draw holds plenty of both
