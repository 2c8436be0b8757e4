"""Compression bombs: bodies of a few kilobytes that decode to hundreds of mebibytes.

Real gzip and deflate streams, valid to their last byte, as a hostile origin would send
them. Each is built once per process (a 256 MiB bomb takes under a second; a 2 GiB one
takes several).
"""

from __future__ import annotations

import functools
import gzip
import zlib

import pytest

MIB = 1024 * 1024
_ZEROS = bytes(MIB)


@functools.cache
def gzip_bomb(decoded_size: int) -> bytes:
    """One gzip member of `decoded_size` zero bytes (a whole number of MiB), level 9."""
    return _compressed_zeros(decoded_size, 16 + zlib.MAX_WBITS)


@functools.cache
def deflate_bomb(decoded_size: int) -> bytes:
    """`Content-Encoding: deflate` as the standard has it: a zlib stream of zeros."""
    return _compressed_zeros(decoded_size, zlib.MAX_WBITS)


@functools.cache
def raw_deflate_bomb(decoded_size: int) -> bytes:
    """`Content-Encoding: deflate` as some servers send it: a raw deflate stream of zeros."""
    return _compressed_zeros(decoded_size, -zlib.MAX_WBITS)


def _compressed_zeros(decoded_size: int, wbits: int) -> bytes:
    """`decoded_size` zero bytes (a whole number of MiB) at level 9, framed as `wbits` says."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [compressor.compress(_ZEROS) for _ in range(decoded_size // MIB)]
    parts.append(compressor.flush())
    return b"".join(parts)


@functools.cache
def stacked_gzip_bomb(decoded_size: int) -> bytes:
    """`gzip_bomb(decoded_size)` gzipped again: for `Content-Encoding: gzip, gzip`."""
    return gzip.compress(gzip_bomb(decoded_size), compresslevel=9, mtime=0)


# `(content_encoding, make_bomb)` for `pytest.mark.parametrize`: each test makes its bomb
# when it runs, not when its module is collected (every test process collects every module).
GZIP_BOMBS = [
    pytest.param("gzip", gzip_bomb, id="gzip"),
    pytest.param("gzip, gzip", stacked_gzip_bomb, id="gzip-gzip"),
]
