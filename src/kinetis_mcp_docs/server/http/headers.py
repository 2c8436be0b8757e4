"""The request headers the route reads, as HTTP defines them when a field comes more than once.

RFC 9110 (section 5.3): the lines of one field are one comma-separated list, in order. So
`X-Forwarded-For` sent on two lines is one list whose first address is the client's. A
field that is not a list — `Host`, `Authorization`, `Origin`, MCP's routing headers — has
no meaning when repeated: one reader would take the first copy and another the last, so
the route refuses it (each where its own check runs) rather than pick one.

MCP's routing headers (`Mcp-Method`, `Mcp-Name`) carry a value that is not plain visible
ASCII in the form `=?base64?<base64 of its UTF-8>?=`; it is decoded before it is compared
with the body, as the MCP specification requires.
"""

from __future__ import annotations

import base64
import binascii

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Request headers the route reads; every other header is left unread.
WANTED = frozenset(
    {
        b"authorization",
        b"content-length",
        b"content-type",
        b"host",
        b"mcp-method",
        b"mcp-name",
        b"mcp-protocol-version",
        b"origin",
        b"x-forwarded-for",
    }
)
_PREFIX = "=?base64?"
_SUFFIX = "?="
_SHORTEST = len(_PREFIX + _SUFFIX)


class RequestHeaders(dict[str, str]):
    """The wanted headers by lowercase name, each field's lines joined with `, `, and the
    names of the fields that came on more than one line (`repeated`)."""

    __slots__ = ("repeated",)

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        super().__init__(
            {
                name.decode("latin-1"): value.decode("latin-1")
                for name, value in raw
                if name in WANTED
            }
        )
        self.repeated: frozenset[str] = frozenset()
        if len({name for name, _ in raw}) < len(raw):  # a field on several lines, wanted or not
            joined: dict[str, list[str]] = {}
            for name, value in raw:
                if name in WANTED:
                    joined.setdefault(name.decode("latin-1"), []).append(value.decode("latin-1"))
            self.update((name, ", ".join(values)) for name, values in joined.items())
            self.repeated = frozenset(name for name, values in joined.items() if len(values) > 1)


def decoded_value(value: str) -> str | None:
    """`value`, or what its `=?base64?...?=` form encodes; None when that form is malformed
    (not canonical base64, or not UTF-8), which then matches nothing."""
    if not value.startswith(_PREFIX) or not value.endswith(_SUFFIX) or len(value) < _SHORTEST:
        return value  # `=?base64?=` is no encoded value: its markers overlap
    payload = value[len(_PREFIX) : -len(_SUFFIX)]
    try:
        raw = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    # Only the canonical form: the encoder never writes another, and a value must have one
    # spelling so that a proxy and the route agree on it.
    if base64.b64encode(raw).decode("ascii") != payload:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
