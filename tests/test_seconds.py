"""A number of seconds read from text, as every setting of seconds reads it."""

from __future__ import annotations

import math

import pytest

from kinetis_mcp_docs.seconds import parse_seconds


@pytest.mark.parametrize(
    ("text", "seconds"), [("5", 5.0), ("0.25", 0.25), (" 10 ", 10.0), ("1e3", 1000.0)]
)
def test_a_positive_number_is_that_many_seconds(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "5s", "ten", "0x10"])
def test_what_is_not_a_number_is_none(text: str) -> None:
    assert parse_seconds(text) is None


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "Infinity", "1e999"])
def test_nan_and_the_infinities_are_none_whatever_the_bounds(text: str) -> None:
    assert parse_seconds(text) is None
    assert parse_seconds(text, minimum=-math.inf) is None
    assert parse_seconds(text, minimum=0, minimum_open=False, maximum=math.inf) is None


def test_by_default_zero_and_below_are_none() -> None:
    assert parse_seconds("0") is None
    assert parse_seconds("-0.0") is None
    assert parse_seconds("-1") is None
    assert parse_seconds("1e-9") == 1e-9


def test_a_closed_minimum_is_itself_a_number_of_seconds() -> None:
    assert parse_seconds("0", minimum_open=False) == 0.0
    assert parse_seconds("-0.001", minimum_open=False) is None


def test_the_maximum_is_itself_a_number_of_seconds_and_more_is_none() -> None:
    assert parse_seconds("3600", maximum=3600) == 3600.0
    assert parse_seconds("3600.5", maximum=3600) is None


def test_with_no_lower_bound_any_finite_number_is_a_time() -> None:
    assert parse_seconds("-1.5", minimum=-math.inf) == -1.5
    assert parse_seconds("1750000000.25", minimum=-math.inf) == 1_750_000_000.25
