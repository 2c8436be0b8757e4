"""The daily throttle: what counts as due, and how the time is kept."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.throttle import (
    WINDOW_SECONDS,
    clear_failure,
    is_due,
    read_failure,
    read_last_check,
    read_last_failure,
    record_check,
    record_failure,
)

NOW = 1_750_000_000.0


def test_the_window_is_one_day() -> None:
    assert WINDOW_SECONDS == 86_400


def test_a_check_less_than_a_day_old_is_not_due() -> None:
    assert not is_due(NOW - 86_399, NOW)


def test_a_check_exactly_a_day_old_is_not_yet_due() -> None:
    assert not is_due(NOW - 86_400, NOW)


def test_a_check_more_than_a_day_old_is_due() -> None:
    assert is_due(NOW - 86_400.001, NOW)
    assert is_due(NOW - 86_401, NOW)


def test_no_recorded_check_is_due() -> None:
    assert is_due(None, NOW)


def test_a_check_recorded_in_the_future_is_due() -> None:
    assert is_due(NOW + 1, NOW)


def test_a_check_recorded_this_instant_is_not_due() -> None:
    assert not is_due(NOW, NOW)


def test_the_window_can_be_given() -> None:
    assert is_due(NOW - 11, NOW, window=10)
    assert not is_due(NOW - 10, NOW, window=10)


def test_a_recorded_check_reads_back(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    record_check(path, NOW)
    assert read_last_check(path) == NOW


def test_a_fractional_time_reads_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    record_check(path, 1_750_000_000.123456)
    assert read_last_check(path) == 1_750_000_000.123456


def test_recording_replaces_the_previous_time(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    record_check(path, NOW)
    record_check(path, NOW + 5)
    assert read_last_check(path) == NOW + 5


def test_recording_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    record_check(tmp_path / ".last-update-check", NOW)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".last-update-check"]


def test_an_integer_written_by_hand_reads_as_that_time(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    path.write_text("1750000000\n")
    assert read_last_check(path) == NOW


def test_a_missing_file_reads_as_no_check(tmp_path: Path) -> None:
    assert read_last_check(tmp_path / ".last-update-check") is None


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"yesterday\n", b"nan\n", b"inf\n", b"-inf\n", b"\xff\xfe1\n", b"1e999\n"],
    ids=["empty", "blank", "words", "nan", "inf", "minus-inf", "not-ascii", "overflow"],
)
def test_garbage_reads_as_no_check(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / ".last-update-check"
    path.write_bytes(content)
    assert read_last_check(path) is None


def test_a_huge_file_reads_as_no_check(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    path.write_text("1" * 1_000_000)
    assert read_last_check(path) is None


def test_a_directory_in_its_place_reads_as_no_check(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    path.mkdir()
    assert read_last_check(path) is None


def test_a_failed_recording_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    (path / "in-the-way").mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        record_check(path, NOW)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".last-update-check"]


def test_a_symlink_in_its_place_reads_as_no_check_even_to_a_valid_time(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.write_text(f"{NOW!r}\n")
    path = tmp_path / ".last-update-check"
    path.symlink_to(real)
    assert read_last_check(path) is None


def test_a_fifo_in_its_place_reads_as_no_check_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-check"
    os.mkfifo(path)
    found: list[float | None] = []
    # Opening a FIFO for reading blocks until a writer comes: the read must not.
    reading = threading.Thread(target=lambda: found.append(read_last_check(path)), daemon=True)
    reading.start()
    reading.join(timeout=30)
    assert found == [None]


def test_recording_over_a_symlink_replaces_the_link_and_leaves_its_target_alone(
    tmp_path: Path,
) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("theirs\n")
    path = tmp_path / ".last-update-check"
    path.symlink_to(target)

    record_check(path, NOW)

    assert not path.is_symlink()
    assert read_last_check(path) == NOW
    assert target.read_text() == "theirs\n"


# --- a failed update ----------------------------------------------------------------------


def test_a_recorded_failure_reads_back_with_its_reason_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-failure"
    record_failure(path, NOW, "Could not check for a newer kinetis-mcp-docs:\n  pip said no")

    assert read_failure(path) == (NOW, "Could not check for a newer kinetis-mcp-docs: pip said no")
    assert read_last_failure(path) == NOW
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".last-update-failure"]


@pytest.mark.parametrize("content", [b"", b"soon\nreason\n", b"nan\n", b"\xff\n"])
def test_an_unreadable_failure_record_reads_as_none(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / ".last-update-failure"
    path.write_bytes(content)
    assert read_failure(path) is None
    assert read_last_failure(path) is None


def test_a_failure_record_that_is_a_directory_or_missing_reads_as_none(tmp_path: Path) -> None:
    assert read_failure(tmp_path / "missing") is None
    (tmp_path / "directory").mkdir()
    assert read_failure(tmp_path / "directory") is None


def test_a_cleared_failure_is_gone_and_clearing_none_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / ".last-update-failure"
    record_failure(path, NOW, "down")
    clear_failure(path)
    assert not path.exists()
    clear_failure(path)
