"""The frame codec drives json's C accelerator directly; it must agree with `json` exactly."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable

import pytest

from kinetis_mcp_docs.server import codec

# The JSON codec is the standard library's C `_json`, built per interpreter.
pytestmark = pytest.mark.interpreter


def _reject(name: str) -> object:
    raise ValueError(name)


def _reference_loads(text: str) -> object:
    return json.loads(text, parse_constant=_reject)


def _outcome(parse: object, text: str) -> tuple[str, object]:
    assert callable(parse)
    try:
        return ("value", parse(text))
    except RecursionError:
        return ("too deep", None)
    except ValueError:
        return ("not json", None)


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kinds = ["int", "str", "float", "bool", "none"] + (["list", "dict"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 2**63, rng.randint(-(10**6), 10**6)])
    if kind == "float":
        return rng.choice([0.5, -1e300, 1e-7, 3.0])
    if kind == "str":
        return "".join(rng.choice(['a', '"', "\\", "\n", "\x00", "é", "☃", "\U0001f600", "\u2028"])
                       for _ in range(rng.randint(0, 8)))  # fmt: skip
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{index}": _random_value(rng, depth + 1) for index in range(rng.randint(0, 4))}


MALFORMED = [
    "", " ", "{", "}", "[1,]", '{"a":1,}', "{'a': 1}", "NaN", "Infinity", "-Infinity",
    '{"a": NaN}', "[1] [2]", '{"a":1} x', "01", "1.", ".5", '"\x01"', '"\\x"', "tru",
    "\ufeff{}", '{"a" 1}', "[" * 100_000, '"\\ud800"', "\x00", "1e999",
]  # fmt: skip
WELL_FORMED = [
    " {} ", '\n\t{"a": [1, 2.5, -3e2, true, false, null]}\r\n', '"x"', "0", "-0", "[]",
    '{"a":{"a":{"a":"\\u00e9\\ud83d\\ude00"}}}', "9" * 4300, "-" + "9" * 4300,
]  # fmt: skip


@pytest.mark.parametrize("text", MALFORMED + WELL_FORMED)
def test_loads_agrees_with_json_on_every_text(text: str) -> None:
    expected = _outcome(_reference_loads, text)
    assert _outcome(codec.loads, text) == expected
    assert _outcome(codec.loads_with_json, text) == expected


@pytest.mark.parametrize("literal", ["1" * 4301, "-" + "9" * 10_000, "1" * 2_000_000])
@pytest.mark.parametrize("loads", [codec.loads, codec.loads_with_json])
def test_an_integer_too_long_to_convert_is_read_as_its_literal(
    literal: str, loads: Callable[[str], object]
) -> None:
    value = loads(f'{{"id": {literal}}}')

    assert isinstance(value, dict)
    integer = value["id"]
    assert isinstance(integer, codec.LongInteger)
    assert integer.text == literal
    # Beyond any bound, on the literal's side of zero.
    assert (integer > 10**4000) if literal[0] != "-" else (integer < -(10**4000))


def test_loads_and_dumps_agree_with_json_on_random_values() -> None:
    rng = random.Random(11)
    for _ in range(2_000):
        value = _random_value(rng)
        for ensure_ascii in (False, True):
            expected = json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":"))
            assert codec.dumps(value, ensure_ascii=ensure_ascii) == expected
            assert codec.dumps_with_json(value, ensure_ascii=ensure_ascii) == expected
            assert codec.loads(expected) == json.loads(expected)


def test_dumps_refuses_what_json_cannot_carry() -> None:
    for value in ({"a": object()}, {(1, 2): 1}):
        with pytest.raises(TypeError):
            json.dumps(value)
        with pytest.raises(TypeError):
            codec.dumps(value)


def test_a_lone_surrogate_is_written_as_json_writes_it() -> None:
    value = {"text": "a\ud800b"}
    assert codec.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(UnicodeEncodeError):
        codec.dumps(value).encode("utf-8")
    assert codec.dumps(value, ensure_ascii=True) == '{"text":"a\\ud800b"}'


def test_malformed_text_is_refused_before_json_was_ever_imported() -> None:
    # Up to Python 3.11 the C scanner needs `json.decoder` imported to report an error.
    script = (
        "from kinetis_mcp_docs.server import codec\n"
        "for text in ['{', '[1,', '{\"a\": NaN}', '[1] x']:\n"
        "    try:\n"
        "        codec.loads(text)\n"
        "    except ValueError:\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit(f'accepted {text!r}')\n"
        "assert codec.loads(' {\"a\": [1]} ') == {'a': [1]}\n"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
