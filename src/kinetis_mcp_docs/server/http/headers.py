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
from typing import overload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Request headers the route reads, by the name it asks for them under; every other header
# is left unread.
_WANTED_NAMES = (
    "authorization",
    "content-encoding",
    "content-length",
    "content-type",
    "host",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "origin",
    "transfer-encoding",
    "x-forwarded-for",
    "x-request-id",
)
_KEYS = {name: name.encode("ascii") for name in _WANTED_NAMES}
WANTED = frozenset(_KEYS.values())
_NONE: frozenset[str] = frozenset()
_PREFIX = "=?base64?"
_SUFFIX = "?="
_SHORTEST = len(_PREFIX + _SUFFIX)


class RequestHeaders:
    """The wanted headers by lowercase name, each field's lines joined with `, `, and the
    names of the wanted fields that came on more than one line (`repeated`).

    A request's headers are put in a dictionary by C code in one call, and a value is
    decoded only when it is asked for: most requests ask for a few of their headers, and
    building a dictionary of decoded text for every request cost a tenth of the route's
    own time. Only a request with a field on several lines (wanted or not: the count of
    names tells) pays for joining them.
    """

    __slots__ = ("repeated", "values")

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        values = dict(raw)  # the last line of a field wins here; joined below if repeated
        self.repeated = _NONE
        if len(values) < len(raw):
            joined: dict[bytes, list[bytes]] = {}
            for name, value in raw:
                if name in WANTED:
                    joined.setdefault(name, []).append(value)
            values.update((name, b", ".join(lines)) for name, lines in joined.items())
            self.repeated = frozenset(
                name.decode("latin-1") for name, lines in joined.items() if len(lines) > 1
            )
        # Every field by its lowercase name as bytes, as sent (repeated ones joined): the
        # route's hot path reads these directly, a lookup each.
        self.values = values

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        """The field `name` (one of the wanted, in lowercase) as text, byte for byte
        (Latin-1), or `default` when the request has none."""
        value = self.values.get(_KEYS[name])
        return default if value is None else value.decode("latin-1")

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _KEYS.get(name, b"") in self.values


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
