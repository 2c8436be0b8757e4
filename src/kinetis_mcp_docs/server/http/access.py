"""Who may use the route: the bearer token, compared in constant time.

The token is only ever compared, never logged or echoed: a refusal names the reason, not
what was sent.
"""

from __future__ import annotations

import hmac

REALM = "kinetis-mcp-docs"
CHALLENGE = f'Bearer realm="{REALM}"'
MISSING = "Missing bearer token"
WRONG = "Invalid bearer token"
REPEATED = "More than one Authorization header"


def presented_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def refusal(expected: str | None, presented: str | None, *, repeated: bool = False) -> str | None:
    """None when access is granted, else why not (`MISSING`, `WRONG` or `REPEATED`).

    `repeated`: the request carried `Authorization` more than once, which names no one token.
    """
    if expected is None:
        return None
    if repeated:
        return REPEATED
    if presented is None:
        return MISSING
    # Header text is decoded as Latin-1, byte for byte: encoding it back gives the bytes
    # the client sent, compared with the token's UTF-8 (compare_digest refuses non-ASCII str).
    if not hmac.compare_digest(presented.encode("latin-1"), expected.encode("utf-8")):
        return WRONG
    return None
