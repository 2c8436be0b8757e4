"""Where the reason behind a fixed error answer goes: the `kinetis_mcp_docs.server` logger.

A page that cannot be read is answered with a fixed sentence, `Could not read "<uri>".`;
the URL fetched and the real reason are for whoever runs the server. The core is a library
as much as a server, so it logs them through the `logging` module, to `LOGGER_NAME`, and
configures no handler of its own but the `NullHandler` Python's documentation asks of a
library (without one, a host that configures no logging would get Python's last-resort
handler writing our lines to its stderr). A host embedding `DocsApplication` decides where
they go; the two servers of this package own their stderr and send them there, as
`kinetis-docs: ...` lines (`to_stderr`).

`logging` imports `re` and `threading`, which a client start does not need: it is imported
with the first reason, never at import of this module.
"""

from __future__ import annotations

import sys
from _thread import allocate_lock  # `threading` costs start-up time; a lock is all it takes

from .display import stderr_line, write_line

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    import logging

LOGGER_NAME = "kinetis_mcp_docs.server"
_PACKAGE_LOGGER = "kinetis_mcp_docs"
_STDERR_HANDLER = "kinetis-docs stderr"
_configuring = allocate_lock()


def logger() -> logging.Logger:
    """The logger reasons go to, the package's `NullHandler` added with its first use."""
    import logging  # noqa: PLC0415 - see the module's docstring

    package = logging.getLogger(_PACKAGE_LOGGER)
    with _configuring:
        if not any(isinstance(handler, logging.NullHandler) for handler in package.handlers):
            package.addHandler(logging.NullHandler())
    return logging.getLogger(LOGGER_NAME)


def to_stderr() -> None:
    """Send the reasons to this process's stderr, one `kinetis-docs: <reason>` line each,
    as the standalone servers do; a second call changes nothing.

    Lines go to `sys.stderr` as it is at the first call: in the stdio server, its never
    blocking `StderrLog`. They do not propagate further: a server owns its stderr. Each is
    kept to one line (`display.stderr_line`): a reason names a path or quotes an error, and
    a newline or an escape sequence in either would split the line or drive the terminal.
    Each is written as `display.say` writes, in one write under its lock (`write_line`), so
    a reason and a line of the server's own never share a line.
    """
    import logging  # noqa: PLC0415 - see the module's docstring

    reasons = logger()
    with _configuring:
        # Looked at before anything is made: every unreadable page calls this, and a call
        # that made its formatter class first failed with MemoryError in a process at its
        # address-space limit, and its request went unanswered.
        if any(handler.get_name() == _STDERR_HANDLER for handler in reasons.handlers):
            return

        # Defined here, since `logging` is imported only here; generic only in the stubs.
        class OneLine(logging.StreamHandler):  # type: ignore[type-arg]
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    write_line(self.stream, stderr_line(self.format(record)))
                except Exception:  # noqa: BLE001 - logging's own policy for a failed write
                    self.handleError(record)

        handler = OneLine(sys.stderr)
        handler.set_name(_STDERR_HANDLER)
        handler.setFormatter(logging.Formatter("%(message)s"))
        reasons.addHandler(handler)
        reasons.setLevel(logging.INFO)
        reasons.propagate = False
