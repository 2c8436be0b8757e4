"""A `fetch_page` URL made into path segments, or refused before anything is opened.

The URL is percent-decoded first, exactly once, with the rules of JavaScript's
`decodeURIComponent`: every `%` starts two hex digits, and the decoded bytes must be
UTF-8; otherwise it is `Malformed URL parameter`. Then backslashes become `/`, and the
path is split on `/` with empty segments dropped, so a leading slash is optional and
trailing (or doubled) slashes are trimmed. A segment that is `.` or `..`, or that holds a
NUL, is `Path traversal rejected`, whether it was written plainly or percent-encoded.
A double-encoded dot (`%252e`) decodes once, to the literal name `%2e`, which is no dot.
"""

from __future__ import annotations

from .exceptions import RejectedUrl

TRAVERSAL = "Path traversal rejected"
MALFORMED = "Malformed URL parameter"
_HEX = frozenset("0123456789abcdefABCDEF")


def page_segments(url: str) -> tuple[str, ...]:
    """The segments `url` names; `RejectedUrl` for a traversal or a malformed URL."""
    decoded = percent_decoded(url).replace("\\", "/")
    segments = tuple(segment for segment in decoded.split("/") if segment)
    for segment in segments:
        if segment in (".", "..") or "\0" in segment:
            raise RejectedUrl(TRAVERSAL)
    return segments


def page_path(segments: tuple[str, ...]) -> str:
    """The canonical path of a page: `/` and its segments."""
    return "/" + "/".join(segments)


def percent_decoded(url: str) -> str:
    """`url` with every `%XX` decoded as UTF-8; `RejectedUrl` when it cannot be."""
    if "%" not in url:
        _check_encodable(url)
        return url
    pieces: list[str] = []
    position = 0
    while True:
        escape = url.find("%", position)
        if escape < 0:
            pieces.append(url[position:])
            break
        pieces.append(url[position:escape])
        raw = bytearray()
        while escape < len(url) and url[escape] == "%":
            digits = url[escape + 1 : escape + 3]
            if len(digits) != 2 or not _HEX.issuperset(digits):
                raise RejectedUrl(MALFORMED)
            raw.append(int(digits, 16))
            escape += 3
        try:
            pieces.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise RejectedUrl(MALFORMED) from None
        position = escape
    decoded = "".join(pieces)
    _check_encodable(decoded)
    return decoded


def _check_encodable(text: str) -> None:
    # A lone surrogate (JSON can carry one) names no file: no path can be made of it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RejectedUrl(MALFORMED) from None
