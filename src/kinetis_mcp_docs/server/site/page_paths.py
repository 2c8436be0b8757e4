"""A `fetch_page` URL made into path segments, or refused before anything is opened.

The URL is percent-decoded first, exactly once, with the rules of JavaScript's
`decodeURIComponent`: every `%` starts two hex digits, and the decoded bytes must be
UTF-8; otherwise it is `Malformed URL parameter`. Then backslashes become `/`, and the
path is split on `/` with empty segments dropped, so a leading slash is optional and
trailing (or doubled) slashes are trimmed. A segment that is `.` or `..`, or that holds a
NUL, is `Path traversal rejected`, whether it was written plainly or percent-encoded.
A double-encoded dot (`%252e`) decodes once, to the literal name `%2e`, which is no dot.

A URL longer than `MAX_URL_CHARACTERS` once decoded, or of more than `MAX_SEGMENTS`
segments, is `URL too long` before any file is looked at: resolving a path costs time in
its length times its segments, and no page of a documentation site is named by a path
anywhere near either bound. One longer than `MAX_RAW_CHARACTERS` as sent is `URL too long`
before it is decoded: decoding costs time in its length too (a `url` of 2 MB took half a
second), and no URL that long decodes to `MAX_URL_CHARACTERS` or fewer, since a character
takes at most 12 to write (`%F0%9F%98%80`, four bytes of UTF-8).
"""

from __future__ import annotations

from ..core.exceptions import RejectedUrl

TRAVERSAL = "Path traversal rejected"
MALFORMED = "Malformed URL parameter"
MAX_URL_CHARACTERS = 4096
MAX_SEGMENTS = 256
# The longest a URL within MAX_URL_CHARACTERS can be written: each character as four
# percent-encoded bytes. So this bound refuses no URL that the decoded bound accepts.
MAX_RAW_CHARACTERS = 12 * MAX_URL_CHARACTERS
TOO_LONG = f"URL too long: at most {MAX_URL_CHARACTERS} characters and {MAX_SEGMENTS} segments"


def page_segments(url: str) -> tuple[str, ...]:
    """The segments `url` names; `RejectedUrl` for a traversal, a malformed or a long URL."""
    if len(url) > MAX_RAW_CHARACTERS:
        raise RejectedUrl(TOO_LONG)
    decoded = percent_decoded(url).replace("\\", "/")
    if len(decoded) > MAX_URL_CHARACTERS:
        raise RejectedUrl(TOO_LONG)
    segments = tuple(segment for segment in decoded.split("/") if segment)
    if len(segments) > MAX_SEGMENTS:
        raise RejectedUrl(TOO_LONG)
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
    # Decoded by codecs that run in C, not escape by escape in Python (a URL at the raw
    # bound took 11 ms so): every `%` becomes Python's `\x` escape, after each backslash
    # of the URL itself was escaped, so `\xHH` is the only escape there is; the codec
    # refuses one without two hex digits, as `decodeURIComponent` does. What it gives is
    # Latin-1 for the bytes, which must then be UTF-8: the whole text at once, which
    # accepts and refuses exactly what decoding each run of escapes on its own would,
    # since a literal character's UTF-8 can neither finish nor begin another's sequence.
    try:
        escaped = url.replace("\\", "\\\\").replace("%", "\\x").encode("utf-8")
        return escaped.decode("unicode_escape").encode("latin-1").decode("utf-8")
    except UnicodeError:  # a bad escape, bytes that are not UTF-8, a lone surrogate
        raise RejectedUrl(MALFORMED) from None


def _check_encodable(text: str) -> None:
    # A lone surrogate (JSON can carry one) names no file: no path can be made of it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RejectedUrl(MALFORMED) from None
