"""A response body decoded from its `Content-Encoding` under bounds that hold while decoding.

httpx decodes a body without any limit on what one chunk may inflate to, so a few kilobytes
of stacked gzip can become gigabytes before any cap is checked. The fetcher reads the raw
bytes instead and decodes them here, where every decompressor call is given a `max_length`:

- only `gzip` and `deflate` are asked for (`ACCEPT_ENCODING`) and decoded; a body labelled
  with any other coding is refused, never served as it came;
- at most `MAX_CODINGS` codings may be stacked (each one holds a decompressor's state);
- the decoded body is refused as soon as it passes `limit` bytes;
- every coding's output is refused as soon as it passes `max(RATIO_GRACE, MAX_RATIO * raw)`,
  where `raw` is the number of body bytes decoded so far. A real page compresses 2 to 25
  times; a bomb hundreds or a thousand times, so it is recognised after `RATIO_GRACE`
  rather than at the 4 MiB cap, and many of them read at once still cost little memory.

Whatever arrives, this holds at most `max(RATIO_GRACE, MAX_RATIO * raw) + 1` decoded bytes,
plus one `STEP` of output per coding in flight and the decompressors' own state.
"""

from __future__ import annotations

import zlib

from .page_source import describe_size

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterable

ACCEPT_ENCODING = "gzip, deflate"
"""What the fetcher asks for: the codings decoded here, and nothing else."""
MAX_CODINGS = 2
"""Codings one body may stack: servers send one; two is a pre-compressed file passed
through a compressing proxy. More only multiplies decompressor state."""
MAX_RATIO = 100
"""Decoded bytes allowed per raw body byte decoded, past `RATIO_GRACE`."""
RATIO_GRACE = 64 * 1024
"""Decoded bytes allowed whatever the ratio, so that a small, very repetitive page is read."""
STEP = 16 * 1024
"""The most bytes one decompressor call returns."""

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS
_NAMES = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}


class BodyRefused(Exception):
    """The body cannot be accepted; `reason` says why, for the operator's log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_content_encoding(values: Iterable[str]) -> list[str]:
    """The codings named by `Content-Encoding` header values, in the order applied.

    `identity` and empty list members name no coding. Raises `BodyRefused` for a coding
    that was not asked for, or for more than `MAX_CODINGS`.
    """
    codings = []
    for value in values:
        for member in value.split(","):
            coding = member.strip().lower()
            if not coding or coding == "identity":
                continue
            name = _NAMES.get(coding)
            if name is None:
                raise BodyRefused(f"Content-Encoding {member.strip()!r} was not asked for")
            codings.append(name)
    if len(codings) > MAX_CODINGS:
        raise BodyRefused(
            f"Content-Encoding stacks {len(codings)} codings; at most {MAX_CODINGS} are decoded"
        )
    return codings


class BoundedBody:
    """Accumulates a body from its raw bytes, decoding `codings` (as applied) on the way."""

    def __init__(self, codings: list[str], *, limit: int) -> None:
        self._limit = limit
        # Undone last-applied first: the outermost coding is decoded first.
        self._layers = [_Layer(name) for name in reversed(codings)]
        self._received = 0
        self._consumed = 0  # raw bytes the outermost decompressor has taken in
        self._body = bytearray()

    def feed(self, raw: bytes) -> None:
        """Take the next raw bytes of the body; raises `BodyRefused` past any bound."""
        self._received += len(raw)
        if self._layers:
            self._push(0, raw)
        else:
            self._keep(raw)

    def finish(self) -> bytes:
        """The decoded body, once every raw byte was fed; `BodyRefused` if a coding is cut."""
        if self._received:
            for layer in self._layers:
                if not layer.ended:
                    raise BodyRefused(f"the {layer.name} data ends early")
        return bytes(self._body)

    def _allowance(self) -> int:
        return max(RATIO_GRACE, MAX_RATIO * self._consumed)

    def _push(self, index: int, data: bytes) -> None:
        """Decode `data` through layer `index` and every layer after it, in bounded steps.

        Input goes in `STEP` bytes at a time, so what a decompressor leaves over (a copy)
        is small too. The ratio is measured against the raw bytes actually decoded so far,
        not those received: one network read can bring 64 KiB of a bomb, which inflates to
        gigabytes.
        """
        view = memoryview(data)
        for start in range(0, len(view), STEP):
            self._push_piece(index, view[start : start + STEP])

    def _push_piece(self, index: int, data: memoryview | bytes) -> None:
        layer = self._layers[index]
        last = index == len(self._layers) - 1
        pending = data
        while True:
            room = self._allowance() - layer.produced
            if last:
                room = min(room, self._limit - len(self._body))
            before = len(pending)
            output, pending = layer.decode(pending, min(STEP, room + 1))
            if index == 0:
                self._consumed += before - len(pending)
            layer.produced += len(output)
            if layer.produced > self._allowance():
                raise BodyRefused(
                    f"the body decodes to more than {MAX_RATIO} times its size"
                    f" ({layer.produced} bytes from {self._consumed}): a compression bomb"
                )
            if last:
                self._keep(output)
            elif output:
                self._push(index + 1, output)
            if not pending and not layer.more_pending:
                return

    def _keep(self, decoded: bytes) -> None:
        if len(self._body) + len(decoded) > self._limit:
            raise BodyRefused(f"body exceeds {describe_size(self._limit)}")
        self._body += decoded


class _Layer:
    """One coding's decompressor: gzip (any number of members) or deflate (zlib or raw)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.produced = 0
        self.ended = False
        self.more_pending = False
        # "deflate" is zlib-wrapped by the standard and raw by some servers: its first two
        # bytes tell which, so they are held until both have arrived.
        self._head = b"" if name == "deflate" else None
        self._decompressor = zlib.decompressobj(_GZIP_WBITS if name == "gzip" else _ZLIB_WBITS)

    def decode(self, data: memoryview | bytes, max_length: int) -> tuple[bytes, memoryview | bytes]:
        """At most `max_length` decoded bytes of `data`, and what of `data` is left over."""
        if self._head is not None:
            self._head += data
            if len(self._head) < 2:
                return b"", b""
            data, self._head = self._head, None
            if not _is_zlib_header(data):
                self._decompressor = zlib.decompressobj(_RAW_DEFLATE_WBITS)
        if self.ended:
            if not data:
                return b"", b""
            self._start_next_member()
        try:
            output = self._decompressor.decompress(data, max_length)
        except zlib.error as error:
            raise BodyRefused(f"the {self.name} data is corrupt: {error}") from None
        # A full output may leave more in the decompressor even with no input left.
        self.more_pending = len(output) == max_length
        if self._decompressor.eof:
            self.ended = True
            self.more_pending = False
            return output, self._decompressor.unused_data
        return output, self._decompressor.unconsumed_tail

    def _start_next_member(self) -> None:
        """After the end of a stream: gzip allows another member; anything else is refused."""
        if self.name != "gzip":
            raise BodyRefused(f"data follows the end of the {self.name} stream")
        self._decompressor = zlib.decompressobj(_GZIP_WBITS)
        self.ended = False


def _is_zlib_header(head: bytes) -> bool:
    """Whether two bytes open a zlib stream (RFC 1950): method 8, a window up to 32 KiB,
    and a check that makes them a multiple of 31."""
    method, flags = head[0], head[1]
    return method & 0x0F == 8 and method >> 4 <= 7 and (method << 8 | flags) % 31 == 0
