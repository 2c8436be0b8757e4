"""A message kept to one line of a terminal, as the installer and the server write it."""

from __future__ import annotations

import pytest

from kinetis_mcp_docs.printable import one_line
from kinetis_mcp_docs.server.core.display import stderr_line


def test_printable_text_comes_back_as_it_is() -> None:
    text = "Could not create pages-ü (Permission denied)."
    assert one_line(text) is text


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\r\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("tab\there", "tab\\there"),
        ("bell\x07", "bell\\x07"),
        ("line\u2028separator", "line\\u2028separator"),
    ],
)
def test_each_control_character_is_written_as_a_python_string_writes_it(
    text: str, line: str
) -> None:
    assert one_line(text) == line
    assert "\n" not in one_line(text)


def test_a_lone_surrogate_is_escaped_as_itself_where_the_server_shows_its_byte() -> None:
    # The installer's messages escape it as Python would; the server's stderr lines first
    # make it `readable`, the byte it stands for (PEP 383).
    assert one_line("pages-\udcff") == "pages-\\udcff"
    assert stderr_line("pages-\udcff\n") == "kinetis-docs: pages-\\xff\\n"
