"""Exceptions become codes through one table, and every error class of the core has its entry."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from kinetis_mcp_docs.server.core import exceptions, reasons
from kinetis_mcp_docs.server.core.exceptions import (
    DocsError,
    InvalidArguments,
    PageUnavailable,
    RejectedUrl,
    UnknownResource,
)
from kinetis_mcp_docs.server.errors import ERRORS, MISSING_FILES
from kinetis_mcp_docs.server.protocol.dispatch import ErrorTable, Method, MethodTable
from kinetis_mcp_docs.server.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
)
from kinetis_mcp_docs.server.stdio.dispatcher import Dispatcher
from kinetis_mcp_docs.server.stdio.framing import FrameWriter


def _error_classes(base: type[Exception]) -> set[type[Exception]]:
    found: set[type[Exception]] = set()
    for kind in base.__subclasses__():
        found |= {kind, *_error_classes(kind)}
    return found


def test_every_error_class_of_the_core_has_its_own_entry_in_the_table() -> None:
    classes = _error_classes(DocsError)
    assert classes == {value for value in vars(exceptions).values() if isinstance(value, type)} - {
        DocsError
    }
    assert classes - set(ERRORS.entries) == set()


@pytest.mark.parametrize(
    ("error", "code", "message", "data"),
    [
        (
            InvalidArguments('"uri" is required.'),
            INVALID_PARAMS,
            'Invalid params: "uri" is required.',
            None,
        ),
        (RejectedUrl("Path traversal rejected"), INVALID_PARAMS, "Path traversal rejected", None),
        (
            UnknownResource("kinetis://docs/nope"),
            RESOURCE_NOT_FOUND,
            "Resource not found: kinetis://docs/nope",
            {"uri": "kinetis://docs/nope"},
        ),
        (
            PageUnavailable("kinetis://docs/index", "https://origin/index.md", "HTTP 500"),
            INTERNAL_ERROR,
            'Could not read "kinetis://docs/index".',
            None,
        ),
    ],
)
def test_each_error_becomes_its_code_and_wire_message(
    error: Exception, code: int, message: str, data: object, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = ERRORS.rpc_error(error)
    assert (answer.code, answer.message, answer.data) == (code, message, data)


def test_an_unreadable_page_logs_its_url_and_reason_and_writes_nothing_to_the_hosts_stderr(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=reasons.LOGGER_NAME):
        answer = ERRORS.rpc_error(PageUnavailable("kinetis://docs/x", "https://o/x.md", "HTTP 503"))

    assert "HTTP 503" not in answer.message
    assert capsys.readouterr() == ("", "")
    (record,) = [record for record in caplog.records if record.name == reasons.LOGGER_NAME]
    assert (record.levelname, record.getMessage()) == (
        "WARNING",
        "could not read https://o/x.md: HTTP 503",
    )


def test_a_module_that_cannot_be_loaded_is_a_missing_file_logged_in_one_line_not_a_bug(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # What a lazy import raises once the server's directory was deleted while it ran.
    gone = ModuleNotFoundError("No module named 'kinetis_mcp_docs.server.sources'")

    with caplog.at_level(logging.WARNING, logger=reasons.LOGGER_NAME):
        answer = ERRORS.rpc_error(gone)

    assert (answer.code, answer.message) == (INTERNAL_ERROR, MISSING_FILES)
    assert capsys.readouterr() == ("", "")  # no traceback
    (record,) = [record for record in caplog.records if record.name == reasons.LOGGER_NAME]
    assert record.levelname == "ERROR"
    assert "(No module named 'kinetis_mcp_docs.server.sources')" in record.getMessage()
    assert "\n" not in record.getMessage()


# A host that configures no logging at all: what of ours reaches its stderr.
_UNCONFIGURED_HOST = """
from kinetis_mcp_docs.server.core.exceptions import PageUnavailable
from kinetis_mcp_docs.server.errors import ERRORS
answer = ERRORS.rpc_error(PageUnavailable("kinetis://docs/x", "https://o/x.md", "HTTP 503"))
print(answer.message)
"""


def test_a_host_that_configures_no_logging_gets_nothing_of_ours_on_its_stderr() -> None:
    # Without the package's NullHandler, Python's last-resort handler would print the line.
    done = subprocess.run(
        [sys.executable, "-I", "-c", _UNCONFIGURED_HOST],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert (done.stdout, done.stderr) == ('Could not read "kinetis://docs/x".\n', "")


def test_an_exception_outside_the_table_is_a_bug_answered_internal_error_with_its_trace_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(_params: dict[str, object]) -> object:
        raise KeyError("secret detail")

    table = MethodTable({"broken": Method(broken)}, ERRORS)
    method = table("broken")
    assert method is not None
    with pytest.raises(RpcError) as raised:
        table.run(method, {})
    assert (raised.value.code, raised.value.message) == (INTERNAL_ERROR, "Internal error")
    assert "secret detail" in capsys.readouterr().err


def test_the_table_keeps_its_first_module_path_for_embedding_hosts() -> None:
    from kinetis_mcp_docs.server import errors, methods  # noqa: PLC0415

    assert methods.ERRORS is errors.ERRORS


def test_a_request_whose_error_cannot_be_made_is_still_answered_internal_error() -> None:
    # Reporting an unreadable page once made a class; in a process at its address-space
    # limit that raised MemoryError on the worker thread, and the request went unanswered.
    def unreportable(error: Exception) -> RpcError:
        raise MemoryError

    def unreadable(params: dict[str, object]) -> object:
        raise PageUnavailable("kinetis://docs/index", "https://example.test/index.md", "gone")

    table = MethodTable({"read": Method(unreadable)}, ErrorTable({Exception: unreportable}))
    ours, theirs = os.pipe()
    try:
        dispatcher = Dispatcher(table, FrameWriter(theirs), on_fatal=pytest.fail)
        dispatcher.receive(b'{"jsonrpc":"2.0","id":7,"method":"read"}')
        answer = json.loads(os.read(ours, 65536))
    finally:
        os.close(ours)
        os.close(theirs)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": INTERNAL_ERROR, "message": "Internal error"},
    }
