"""Decoding a body from its Content-Encoding, bounded while it decodes.

The fetcher's end-to-end tests serve these bodies from the real origin; here every split of
a body into network reads can be tried, and the memory a bomb costs measured exactly.
"""

from __future__ import annotations

import gzip
import random
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.sources.content_coding import (
    MAX_RATIO,
    RATIO_GRACE,
    BodyRefused,
    BoundedBody,
    parse_content_encoding,
)
from tests.support.bombs import GZIP_BOMBS, MIB, gzip_bomb

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = (DOCS / "server.md").read_bytes() + (DOCS / "protocol.md").read_bytes()
LIMIT = 4 * MIB


def decode(content_encoding: str, raw: bytes, *, read_size: int = 65536) -> bytes:
    """`raw` fed in pieces of `read_size`, as network reads would bring it."""
    body = BoundedBody(parse_content_encoding([content_encoding]), limit=LIMIT)
    for start in range(0, len(raw), read_size):
        body.feed(raw[start : start + read_size])
    return body.finish()


def refusal(content_encoding: str, raw: bytes, *, read_size: int = 65536) -> str:
    with pytest.raises(BodyRefused) as refused:
        decode(content_encoding, raw, read_size=read_size)
    return refused.value.reason


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


ENCODED = [
    ("", PAGE),
    ("identity", PAGE),
    ("gzip", gzip.compress(PAGE)),
    ("x-gzip", gzip.compress(PAGE)),
    ("GZip", gzip.compress(PAGE)),
    ("deflate", zlib.compress(PAGE)),
    ("deflate", raw_deflate(PAGE)),
    ("gzip, gzip", gzip.compress(gzip.compress(PAGE))),
    ("deflate, gzip", gzip.compress(zlib.compress(PAGE))),
    ("identity, gzip ,", gzip.compress(PAGE)),
    ("gzip", gzip.compress(PAGE[:5000]) + gzip.compress(PAGE[5000:])),  # two members
]


@pytest.mark.parametrize(
    ("content_encoding", "raw"),
    ENCODED,
    ids=["none", "identity", "gzip", "x-gzip", "case", "zlib", "raw-deflate", "gzip-gzip",
         "deflate-gzip", "empty-members", "two-gzip-members"],
)  # fmt: skip
def test_every_coding_asked_for_decodes_to_the_page_however_the_reads_split_it(
    content_encoding: str, raw: bytes
) -> None:
    for read_size in (1, 2, 3, 1000, len(raw)):
        assert decode(content_encoding, raw, read_size=read_size) == PAGE


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "x-compress", "aes128gcm", "gzip2"])
def test_a_coding_that_was_not_asked_for_is_refused_by_name(coding: str) -> None:
    assert refusal(f"gzip, {coding}", PAGE) == f"Content-Encoding {coding!r} was not asked for"


def test_more_than_two_stacked_codings_are_refused_before_any_byte_is_decoded() -> None:
    reason = refusal("gzip, gzip, gzip", gzip.compress(gzip.compress(gzip.compress(PAGE))))
    assert reason == "Content-Encoding stacks 3 codings; at most 2 are decoded"


def test_an_empty_body_is_the_empty_page_whatever_its_label() -> None:
    assert decode("gzip", b"") == b""


@pytest.mark.parametrize(
    ("content_encoding", "raw", "reason"),
    [
        ("gzip", gzip.compress(PAGE)[:-1], "the gzip data ends early"),
        ("gzip", gzip.compress(PAGE)[:1], "the gzip data ends early"),
        ("deflate", zlib.compress(PAGE)[:1], "the deflate data ends early"),
        ("gzip, gzip", gzip.compress(gzip.compress(PAGE)[:-8]), "the gzip data ends early"),
        ("deflate", zlib.compress(PAGE) + b"\0", "data follows the end of the deflate stream"),
    ],
    ids=["gzip-cut", "gzip-one-byte", "deflate-one-byte", "inner-cut", "deflate-trailer"],
)
def test_a_stream_cut_short_or_followed_by_data_is_refused(
    content_encoding: str, raw: bytes, reason: str
) -> None:
    assert refusal(content_encoding, raw) == reason


def test_corrupt_data_is_refused_with_zlibs_reason() -> None:
    reason = refusal("gzip", b"\x1f\x8b" + bytes(30))
    assert reason.startswith("the gzip data is corrupt: Error -3 while decompressing data")


def test_exactly_the_cap_is_decoded_and_one_byte_more_is_refused() -> None:
    # Hexadecimal text compresses about twice, like prose: far inside the ratio bound.
    text = random.Random(5).randbytes(LIMIT // 2 + 1).hex().encode()
    assert decode("gzip", gzip.compress(text[:LIMIT])) == text[:LIMIT]
    assert refusal("gzip", gzip.compress(text[: LIMIT + 1])) == "body exceeds 4 MiB"


def test_a_small_page_is_read_whatever_its_ratio_and_a_larger_one_is_held_to_it() -> None:
    rule = b"-" * 99 + b"\n"  # a page of nothing but rules compresses hundreds of times
    small = rule * (RATIO_GRACE // len(rule))
    assert decode("gzip", gzip.compress(small)) == small

    larger = rule * (4 * RATIO_GRACE // len(rule))
    assert "a compression bomb" in refusal("gzip", gzip.compress(larger))


def test_a_page_compressing_as_much_as_the_bound_allows_is_read() -> None:
    # Rows of a generated table, as compressible as real pages get (about 25 times).
    table = b"".join(b"| `KINETIS_SETTING_%05d` | string | `\"\"` | A setting. |\n" % i
                     for i in range(60_000))  # fmt: skip
    assert len(table) / len(gzip.compress(table, 9)) < MAX_RATIO
    assert decode("gzip", gzip.compress(table, 9)) == table


@pytest.mark.parametrize(("content_encoding", "make_bomb"), GZIP_BOMBS)
def test_a_bomb_of_256_mib_is_refused_holding_under_256_kib(
    content_encoding: str, make_bomb: Callable[[int], bytes]
) -> None:
    bomb = make_bomb(256 * MIB)
    for read_size in (len(bomb), 65536, 1):
        tracemalloc.start()
        try:
            reason = refusal(content_encoding, bomb, read_size=read_size)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert reason.endswith("a compression bomb")
        # Beyond the network read being decoded: the grace's worth of page, each
        # decompressor's window, and a step of output in flight.
        assert peak - min(read_size, len(bomb)) < 256 * 1024, (read_size, peak)


def test_the_ratio_counts_the_bytes_decoded_not_the_bytes_received() -> None:
    # One network read can bring 64 KiB of a bomb: it is refused within that read, having
    # decoded the grace, not a hundred times 64 KiB.
    body = BoundedBody(["gzip"], limit=LIMIT)
    with pytest.raises(BodyRefused) as refused:
        body.feed(gzip_bomb(256 * MIB)[:65536])
    assert refused.value.reason.startswith(
        f"the body decodes to more than 100 times its size ({RATIO_GRACE + 1} bytes from "
    )
