"""The benchmark's own helpers: the pages it generates, the table it prints, its probes."""

from __future__ import annotations

import os
import sys

import pytest
from benchmarks.report import Row, table
from benchmarks.wire import BenchError, run_to_exit

from benchmarks import contract, pages


def test_synthetic_pages_stay_within_the_fetch_cap_and_carry_forty_needles() -> None:
    for make in (pages.synthetic_page, pages.short_line_page):
        text = make(4 * pages.MIB)
        size = len(text.encode("utf-8"))
        assert 4 * pages.MIB - 4096 < size <= 4 * pages.MIB, make.__name__
        assert text.count(pages.NEEDLE) == pages.NEEDLE_LINES, make.__name__
        assert text.endswith("\n")


def test_a_synthetic_page_is_the_same_on_every_run_and_not_all_ascii() -> None:
    first = pages.synthetic_page(pages.MIB)
    assert first == pages.synthetic_page(pages.MIB)
    assert not first.isascii()


def test_the_table_has_one_line_per_row_under_a_header_and_a_rule() -> None:
    rows = [
        Row("a figure", "1 ms", "2 ms", "2.0x", "<= 4x", met=True),
        Row("another, longer figure", "failed", "-", "-", "= 1", met=False),
        Row("informative", "3", "3", "-", "-", met=None),
    ]
    lines = table(rows).splitlines()
    assert len(lines) == 2 + len(rows)
    assert len({len(line) for line in lines}) == 1  # columns padded to one width
    assert [line.split("|")[6].strip() for line in lines[2:]] == ["yes", "NO", "—"]


def test_a_failing_command_is_reported_with_what_it_said() -> None:
    failing = [sys.executable, "-c", "import sys; print('said this'); sys.exit(3)"]
    with pytest.raises(BenchError, match="status 3: said this"):
        run_to_exit(failing, dict(os.environ), timeout=60)


def test_our_server_keeps_every_contract_point_the_probes_check() -> None:
    # None of the probes reads a page from our server, so no origin is needed.
    argv = [sys.executable, "-I", "-m", "kinetis_mcp_docs.server"]
    kept = contract.probe(argv, dict(os.environ))
    assert kept == dict.fromkeys(kept, True)
    assert len(kept) == len(contract.PROBES)
