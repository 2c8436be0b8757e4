"""Text kept to one line of a terminal: what the installer and the server both write.

A message names what a user or the system gave (a path, an argument, an operating system's
reason), and a newline or an escape sequence in it would split the line a log or a script
reads, or move a terminal's cursor. Imports nothing: the stdio server writes its stderr
lines with it on every client start.
"""

from __future__ import annotations


def one_line(text: str) -> str:
    """`text` as one line of a terminal: each control character in it (a newline in a path,
    the ESC of an escape sequence) written as a Python string writes it (`\\n`, `\\x1b`), so
    that a message stays the one line a script reads and cannot move a terminal's cursor or
    change its colours."""
    if text.isprintable():
        return text
    return "".join(
        character if character.isprintable() else character.encode("unicode_escape").decode()
        for character in text
    )
