"""Who may use the route: the bearer token, compared in constant time.

The token is only ever compared, never logged or echoed: a refusal names the reason, not
what was sent. It is compared as bytes: the bytes the client sent (header text is read as
Latin-1, byte for byte, so encoding it back gives them) with the token's UTF-8. Only
HTTP's own whitespace (space and tab) is trimmed around it: `str.strip()` would also take
U+0085 and U+00A0, which Latin-1 reads for the bytes 85 and A0 that end the UTF-8 of `à`,
`Å` or `Š`.
"""

from __future__ import annotations

import hmac

REALM = "kinetis-mcp-docs"
CHALLENGE = f'Bearer realm="{REALM}"'
MISSING = "Missing bearer token"
WRONG = "Invalid bearer token"
REPEATED = "More than one Authorization header"


HTTP_WHITESPACE = " \t"


def presented_token(authorization: str | None) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive),
    as the bytes the client sent."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip(HTTP_WHITESPACE).partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip(HTTP_WHITESPACE).encode("latin-1") or None


def refusal(
    expected: bytes | None, presented: bytes | None, *, repeated: bool = False
) -> str | None:
    """None when access is granted, else why not (`MISSING`, `WRONG` or `REPEATED`).

    `expected` is the token's UTF-8; `repeated`: the request carried `Authorization` more
    than once, which names no one token.
    """
    if expected is None:
        return None
    if repeated:
        return REPEATED
    if presented is None:
        return MISSING
    if not hmac.compare_digest(presented, expected):
        return WRONG
    return None
