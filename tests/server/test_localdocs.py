"""Pages from a local directory: the fetch's bounds, without a network."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.sources.localdocs import LocalPageSource, read_page_file
from kinetis_mcp_docs.server.sources.page_source import MAX_PAGE_BYTES, PageFetchError


def test_a_page_is_its_file_byte_for_byte_and_read_again_on_every_call(tmp_path: Path) -> None:
    page = tmp_path / "index.md"
    page.write_bytes("# Index\r\nhé 😀\nno final newline".encode())
    source = LocalPageSource(tmp_path)
    assert source.fetch("index") == "# Index\r\nhé 😀\nno final newline"
    page.write_text("changed\n", encoding="utf-8")
    assert source.fetch("index") == "changed\n"


def test_exactly_the_size_cap_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "big.md"
    page.write_bytes(b"a" * MAX_PAGE_BYTES)
    assert len(read_page_file(os.fspath(page))) == MAX_PAGE_BYTES
    page.write_bytes(b"a" * (MAX_PAGE_BYTES + 1))
    with pytest.raises(PageFetchError, match="exceeds 4 MiB"):
        read_page_file(os.fspath(page))


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"caf\xe9\n", "not valid UTF-8 at byte 3"), (b"\xff", "not valid UTF-8 at byte 0")],
)
def test_a_file_that_is_not_utf8_is_refused_with_where(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    (tmp_path / "index.md").write_bytes(content)
    with pytest.raises(PageFetchError, match=reason) as raised:
        LocalPageSource(tmp_path).fetch("index")
    assert raised.value.url == os.fspath(tmp_path / "index.md")


def test_a_missing_page_or_a_directory_under_its_name_is_a_fetch_error(tmp_path: Path) -> None:
    source = LocalPageSource(tmp_path)
    with pytest.raises(PageFetchError, match="cannot open the file"):
        source.fetch("index")
    (tmp_path / "setup.md").mkdir()
    with pytest.raises(PageFetchError):
        source.fetch("setup")


def test_a_fifo_under_a_pages_name_is_refused_without_waiting_for_a_writer(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "index.md")
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            LocalPageSource(tmp_path).fetch("index")
        except PageFetchError as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "the read blocked on a FIFO"
    assert "not a regular file" in str(outcome[0])


def test_the_root_is_made_absolute_so_a_later_chdir_does_not_move_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# here\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    source = LocalPageSource("docs")
    monkeypatch.chdir(tmp_path / "docs")
    assert source.fetch("index") == "# here\n"
