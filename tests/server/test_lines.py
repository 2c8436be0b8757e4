"""The page window and the page search, as pure functions over text."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from kinetis_mcp_docs.server.core.lines import (
    MAX_WINDOW_BYTES,
    SearchResult,
    line_offset,
    read_window,
    search_lines,
)


def _reassemble(text: str, line_count: int = 200) -> tuple[str, int]:
    """Read a page window after window; the concatenation and the number of calls."""
    parts = []
    start = 1
    calls = 0
    while True:
        window = read_window(text, start, line_count)
        assert window is not None
        calls += 1
        parts.append(window.content)
        if not window.has_more:
            return "".join(parts), calls
        start = window.end_line + 1


def test_a_window_keeps_crlf_blank_lines_and_a_missing_final_newline() -> None:
    text = "one\r\n\r\ntwo\n\nthree"
    window = read_window(text, 1, 200)
    assert window is not None
    assert window.content == text
    assert (window.start_line, window.end_line, window.has_more) == (1, 5, False)


def test_a_window_counts_lines_split_after_every_newline_only() -> None:
    # Form feeds, vertical tabs and U+2028 are not line breaks for a window.
    text = "a\x0cb\x0bc\u2028d\re\nsecond\n"
    window = read_window(text, 2, 1)
    assert window is not None
    assert window.content == "second\n"
    assert window.end_line == 2


def test_a_window_stops_at_line_count_and_says_the_page_goes_on() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 11))
    window = read_window(text, 3, 4)
    assert window is not None
    assert window.content == "line 3\nline 4\nline 5\nline 6\n"
    assert (window.end_line, window.has_more) == (6, True)


def test_a_window_ending_on_the_last_line_has_no_more() -> None:
    window = read_window("a\nb\n", 2, 5)
    assert window is not None
    assert (window.content, window.end_line, window.has_more) == ("b\n", 2, False)


def test_a_start_line_past_the_last_line_is_out_of_range() -> None:
    assert read_window("a\nb\n", 3, 1) is None
    assert read_window("a\nb", 3, 1) is None
    assert read_window("a\nb", 2, 1) is not None
    assert read_window("a\n", 10**12, 1) is None


def test_an_empty_page_has_no_lines() -> None:
    assert read_window("", 1, 200) is None
    assert search_lines("", "x", 1) is None


def test_a_window_never_passes_the_byte_ceiling_and_never_splits_a_line() -> None:
    line = "x" * 199 + "\n"  # 200 bytes: 163 lines fit, a 164th would pass 32,768
    text = line * 1000
    window = read_window(text, 1, 200)
    assert window is not None
    assert len(window.content.encode()) == 32_600
    assert window.end_line == 163
    assert window.has_more


def test_a_window_of_exactly_the_ceiling_is_served_whole() -> None:
    text = "a" * (MAX_WINDOW_BYTES - 10) + "\n" + "b" * 8 + "\n" + "c\n"
    window = read_window(text, 1, 200)
    assert window is not None
    assert len(window.content.encode()) == MAX_WINDOW_BYTES
    assert window.end_line == 2


def test_multibyte_characters_count_as_their_utf8_bytes_at_the_ceiling() -> None:
    # 8,191 four-byte characters and a newline: 32,765 bytes, but 8,192 code points.
    first = "😀" * 8191 + "\n"
    fits = "é\n"  # 3 bytes: exactly 32,768 in all
    text = first + fits + "é\n"
    window = read_window(text, 1, 200)
    assert window is not None
    assert window.content == first + fits
    assert len(window.content.encode()) == MAX_WINDOW_BYTES
    assert (window.end_line, window.has_more) == (2, True)


def test_a_line_longer_than_the_ceiling_is_returned_whole_when_it_comes_first() -> None:
    long_line = "L" * 40_000 + "\n"
    text = "short\n" + long_line + "after\n"
    first = read_window(text, 1, 200)
    assert first is not None
    assert (first.content, first.end_line, first.has_more) == ("short\n", 1, True)
    second = read_window(text, 2, 200)
    assert second is not None
    assert (second.content, second.end_line, second.has_more) == (long_line, 2, True)
    third = read_window(text, 3, 200)
    assert third is not None
    assert third.content == "after\n"


def test_successive_windows_reassemble_a_page_byte_for_byte() -> None:
    rng = random.Random(20261129)
    pieces = ["", "a", "é", "😀", "\r", "\t", " ", "word", "\u2028", "x" * 5000]
    for _ in range(60):
        lines = []
        for _ in range(rng.randint(0, 150)):
            body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            lines.append(body + rng.choice(["\n", "\r\n", "\n"]))
        text = "".join(lines)
        if rng.random() < 0.5:
            text += "no final newline"
        if not text:
            continue
        for line_count in (1, 7, 200):
            rebuilt, calls = _reassemble(text, line_count)
            assert rebuilt.encode() == text.encode()
            assert calls >= 1


def test_reassembly_crosses_a_line_longer_than_the_ceiling() -> None:
    text = "a\n" + "b" * 70_000 + "\r\n" + "c" * 33_000 + "\nend"
    rebuilt, calls = _reassemble(text)
    assert rebuilt == text
    assert calls == 4


def test_search_is_literal_and_case_sensitive() -> None:
    text = "Alpha a.c\nabc\nalpha A.C\n"
    found = search_lines(text, "a.c", 1)
    assert found is not None
    assert [(m.line, m.content) for m in found.matches] == [(1, "Alpha a.c")]
    assert not found.has_more


def test_search_compares_each_line_without_its_terminator() -> None:
    text = "key=1\r\nkey=2\nkey=3"
    found = search_lines(text, "key", 1)
    assert found is not None
    assert [(m.line, m.content) for m in found.matches] == [
        (1, "key=1"),
        (2, "key=2"),
        (3, "key=3"),
    ]
    crossing = search_lines(text, "1\r", 1)
    assert crossing is not None
    assert crossing.matches == []


def test_a_carriage_return_inside_a_line_is_content() -> None:
    found = search_lines("a\rb\nc\r\n", "a\rb", 1)
    assert found is not None
    assert [(m.line, m.content) for m in found.matches] == [(1, "a\rb")]


def test_a_query_with_a_line_break_matches_nothing() -> None:
    found = search_lines("a\nb\n", "a\nb", 1)
    assert found is not None
    assert found.matches == []
    assert not found.has_more


def test_a_line_is_reported_once_however_often_it_matches() -> None:
    found = search_lines("x x x\nno\nx\n", "x", 1)
    assert found is not None
    assert [m.line for m in found.matches] == [1, 3]


def test_search_starts_at_start_line() -> None:
    found = search_lines("x\nx\nx\n", "x", 2)
    assert found is not None
    assert [m.line for m in found.matches] == [2, 3]
    assert search_lines("x\nx\nx\n", "x", 4) is None


def test_search_stops_at_fifty_matches_and_continues_from_the_next_line() -> None:
    text = "".join(f"match {n}\n" if n % 3 else f"other {n}\n" for n in range(1, 200))
    expected = [n for n in range(1, 200) if n % 3]
    seen: list[int] = []
    start = 1
    while True:
        found = search_lines(text, "match", start)
        assert found is not None
        assert len(found.matches) <= 50
        seen += [m.line for m in found.matches]
        if not found.has_more:
            break
        assert len(found.matches) == 50
        start = found.matches[-1].line + 1
    assert seen == expected


def test_exactly_fifty_matches_have_no_more() -> None:
    found = search_lines("hit\n" * 50 + "miss\n", "hit", 1)
    assert found is not None
    assert len(found.matches) == 50
    assert not found.has_more


def test_search_line_numbers_agree_with_windows() -> None:
    rng = random.Random(7)
    shapes = ["needle here\r\n", "hay\n", "\n", "ééé needle\n", "😀\n"]
    lines = [rng.choice(shapes) for _ in range(500)]
    text = "".join(lines)
    found = search_lines(text, "needle", 1)
    assert found is not None
    for match in found.matches:
        window = read_window(text, match.line, 1)
        assert window is not None
        assert window.content.rstrip("\n").rstrip("\r") == match.content


def _offset_by_walking(text: str, line: int) -> int | None:
    """Where line `line` starts, found one newline at a time: the obvious reference."""
    offset = 0
    for _ in range(line - 1):
        offset = text.find("\n", offset) + 1
        if offset == 0:
            return None
    return offset if offset < len(text) else None


def test_line_offsets_agree_with_walking_the_page_across_span_boundaries() -> None:
    rng = random.Random(7)
    pieces = ["\n", "\n", "a", "\r\n", "\u00e9", "word ", "x" * 300 + "\n"]
    for size in (0, 1, 15, 16, 17, 255, 257, 4_097, 70_000):
        text = "".join(rng.choice(pieces) for _ in range(size))
        newlines = text.count("\n")
        lines = {1, 2, 3, newlines, newlines + 1, newlines + 2}
        lines.update(rng.randint(1, newlines + 2) for _ in range(20))
        for line in lines:
            assert line_offset(text, line) == _offset_by_walking(text, line), (size, line)


def test_a_page_of_two_byte_lines_is_windowed_from_its_end() -> None:
    text = "x\n" * 2_000_000
    window = read_window(text, 1_999_900, 200)
    assert window is not None
    assert (window.start_line, window.end_line, window.has_more) == (1_999_900, 2_000_000, False)
    assert window.content == "x\n" * 101


def test_a_query_ending_in_a_carriage_return_matches_only_where_the_line_holds_it() -> None:
    text = "a\rb\r\nkeep\r\r\nend\r\ncr at the end\r"
    found = search_lines(text, "\r", 1)
    assert found is not None
    assert [(m.line, m.content) for m in found.matches] == [
        (1, "a\rb"),
        (2, "keep\r"),
        (4, "cr at the end\r"),
    ]
    ending = search_lines(text, "p\r", 1)
    assert ending is not None
    assert [m.line for m in ending.matches] == [2]


def test_a_query_ending_in_a_carriage_return_costs_about_what_any_search_of_a_page_costs() -> None:
    # Two million lines of `\r\n` (4 MiB): every line holds a `\r` that is its terminator's.
    page = "\r\n" * 2**21
    ordinary = min(_cpu(lambda: search_lines(page, "absent", 1)) for _ in range(5))
    ending_in_cr = _cpu(lambda: search_lines(page, "\r", 1))
    assert ending_in_cr < 40 * max(ordinary, 1e-3)


def _cpu(search: Callable[[], SearchResult | None]) -> float:
    began = time.process_time()
    found = search()
    spent = time.process_time() - began
    assert found is not None
    assert found.matches == []
    return spent
