"""JSON text in and out of frames: the standard library's own C codec, without `import json`.

`import json` costs more than the rest of the server's start-up put together: it imports
`re` (and with it `enum`, `functools`, `collections`) to compile patterns that only its
pure-Python fallback uses. The C scanner and encoder that `json` itself runs (`_json`) need
none of that, so this module drives them directly with exactly the options `json.loads`
and `json.dumps(..., separators=(",", ":"))` use, and the same errors: `ValueError` (a
`json.JSONDecodeError`, where the C scanner raises one) for text that is not one JSON
value, `RecursionError` for nesting too deep, `TypeError` for an object JSON cannot carry.

One difference: an integer literal too long for Python to convert (`json.loads` refuses
one of more than 4,300 digits) is valid JSON, and is read as a `LongInteger`.

Where `_json` is missing or differs (another Python implementation), `json` is used.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    import _json
    from collections.abc import Callable

# What JSON calls whitespace, and nothing else (`str.strip()` would take more).
_WHITESPACE = " \t\n\r"
# Digits an integer literal may have and still be converted: Python's own limit (4,300
# unless configured lower), which exists because converting is quadratic in the length.
_INTEGER_DIGITS = min(4300, getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300)
_BEYOND_EVERY_BOUND = 10**_INTEGER_DIGITS - 1


class LongInteger(int):
    """An integer literal of more digits than Python converts, as it was written.

    `text` is the literal, which an answer echoes (a request `id`). The int value is a
    stand-in of the same sign and `_INTEGER_DIGITS` nines: beyond any bound a server
    compares it with, so a huge argument is out of range where a range is set, as the
    literal itself would be, and never converted.
    """

    text: str

    def __new__(cls, text: str) -> LongInteger:
        sign = -1 if text.startswith("-") else 1
        integer = super().__new__(cls, sign * _BEYOND_EVERY_BOUND)
        integer.text = text
        return integer


def parse_integer(text: str) -> int:
    """An integer literal's value: a `LongInteger` when it is too long to convert."""
    if len(text) - text.startswith("-") > _INTEGER_DIGITS:
        return LongInteger(text)
    return int(text)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _DecoderOptions:
    """The attributes `_json.make_scanner` reads: those of a default `json.JSONDecoder`,
    except that NaN and Infinity are refused."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = staticmethod(parse_integer)
    parse_constant = staticmethod(_reject_constant)
    array_hook = None  # read from Python 3.15 on


class _QuickOptions(_DecoderOptions):
    """The same, reading integers in C (`int` itself, which the scanner calls directly)
    instead of through `parse_integer`: a call into Python for every integer of a message
    cost a tenth of reading a small one. An integer too long to convert makes it fail,
    and the text is read again by the full scanner."""

    parse_int = int  # type: ignore[assignment]


class _Accelerated:
    """The C scanners and the two C encoders, built once and shared: they keep no state."""

    __slots__ = ("ascii_only", "quick", "scan", "unicode")

    def __init__(self) -> None:
        import _json  # noqa: PLC0415 - the C accelerator behind `json`; optional by design

        # The scanner reads its options as attributes of any object (duck typing).
        self.scan = _json.make_scanner(_DecoderOptions())  # type: ignore[arg-type]
        self.quick = _json.make_scanner(_QuickOptions())  # type: ignore[arg-type]
        # Built the way `json.JSONEncoder.iterencode` builds its own.
        self.unicode = _compact_encoder(_json.make_encoder, _json.encode_basestring)
        self.ascii_only = _compact_encoder(_json.make_encoder, _json.encode_basestring_ascii)


def _compact_encoder(
    make_encoder: type[_json.make_encoder], encode_string: Callable[[str], str]
) -> _json.make_encoder:
    """A C encoder with the options of `json.dumps(value, separators=(",", ":"))`."""
    return make_encoder(
        None,  # markers: frames are never circular, and a shared dict is not thread-safe
        _not_serializable,  # default
        encode_string,  # how strings are written (ensure_ascii or not)
        None,  # indent
        ":",  # key_separator
        ",",  # item_separator
        False,  # noqa: FBT003 - sort_keys, positional in the C signature
        False,  # noqa: FBT003 - skipkeys
        True,  # noqa: FBT003 - allow_nan
    )


def _accelerated() -> _Accelerated | None:
    try:
        return _Accelerated()
    except (ImportError, AttributeError, TypeError):
        return None


_ACCELERATED = _accelerated()


def loads(text: str) -> object:
    """The one JSON value `text` holds; NaN and Infinity are refused like any non-JSON."""
    if _ACCELERATED is None:
        return loads_with_json(text)
    if text[:1] == "{":
        # The common message, read by the quick scanner; anything it refuses (an integer
        # too long to convert, and every malformed text) is read again below, which gives
        # the answer and the error the full scanner gives.
        try:
            value, end = _ACCELERATED.quick(text, 0)
        except (ValueError, StopIteration, SystemError):
            pass
        else:
            if end == len(text) or not text[end:].strip(_WHITESPACE):
                return value
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _ACCELERATED.scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value at character {stop.value}") from None
    except SystemError:
        # Up to Python 3.11 the C scanner raises `json.decoder.JSONDecodeError` only when
        # `json.decoder` is already imported, and otherwise fails this way. The text is
        # malformed either way: `json` says how (and is imported for the next time).
        return loads_with_json(text)
    if end != len(text) and text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data at character {end}")
    return value


def dumps(value: object, *, ensure_ascii: bool = False) -> str:
    """Compact JSON text (`","` and `":"` separators), as `json.dumps` writes it."""
    if _ACCELERATED is None:
        return dumps_with_json(value, ensure_ascii=ensure_ascii)
    encode = _ACCELERATED.ascii_only if ensure_ascii else _ACCELERATED.unicode
    chunks: tuple[str, ...] | list[str] = encode(value, 0)
    return "".join(chunks)


def loads_with_json(text: str) -> object:
    """`loads` by way of the `json` module: the fallback, and the reference in tests."""
    import json  # noqa: PLC0415 - only where `_json` cannot be used

    return json.loads(text, parse_int=parse_integer, parse_constant=_reject_constant)


def dumps_with_json(value: object, *, ensure_ascii: bool = False) -> str:
    """`dumps` by way of the `json` module: the fallback, and the reference in tests."""
    import json  # noqa: PLC0415 - only where `_json` cannot be used

    return json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":"))
