"""The server's own command line, as a person or a client starts it: options, a terminal,
Ctrl-C, and `--docs-dir` serving a local directory instead of the origin."""

from __future__ import annotations

import ctypes
import os
import pty
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.core.catalogue import PAGES
from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR, RESOURCE_NOT_FOUND
from tests.server.conftest import SpawnServer
from tests.support.origin import DocsOrigin, page_path
from tests.support.processes import sigint_restored
from tests.support.stdio import TIMEOUT, assert_only_frames, module_argv, serve_argv

INDEX = "kinetis://docs/index"
REPOSITORY_DOCS = Path(__file__).resolve().parents[2] / "docs"
_MODULE = "python -m kinetis_mcp_docs.server"


@pytest.mark.parametrize("argv", [serve_argv(), module_argv()], ids=["serve", "module"])
def test_docs_dir_serves_every_catalogue_page_from_the_directory_with_no_origin(
    spawn_server: SpawnServer, argv: list[str]
) -> None:
    # No proxy and no reachable origin: every page must come from the directory.
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    server = spawn_server([*argv, "--docs-dir", os.fspath(REPOSITORY_DOCS)], env)
    for slug, _, _ in PAGES:
        uri = f"kinetis://docs/{slug}"
        contents = server.request("resources/read", {"uri": uri})["result"]["contents"][0]
        assert contents["text"] == (REPOSITORY_DOCS / f"{slug}.md").read_text(encoding="utf-8")
    window = server.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 1})
    assert window["result"]["structuredContent"]["endLine"] == 1
    assert server.finish() == 0
    assert_only_frames(server.lines)


def test_docs_dir_reads_the_file_again_on_every_call_and_keeps_the_catalogue(
    spawn_server: SpawnServer, tmp_path: Path
) -> None:
    (tmp_path / "index.md").write_text("first\n", encoding="utf-8")
    (tmp_path / "extra.md").write_text("not catalogued\n", encoding="utf-8")
    server = spawn_server([*module_argv(), f"--docs-dir={tmp_path}"])
    read = {"uri": "kinetis://docs/index"}
    assert server.request("resources/read", read)["result"]["contents"][0]["text"] == "first\n"
    (tmp_path / "index.md").write_text("second\n", encoding="utf-8")
    assert server.request("resources/read", read)["result"]["contents"][0]["text"] == "second\n"
    extra = server.request("resources/read", {"uri": "kinetis://docs/extra"})
    assert extra["error"]["code"] == RESOURCE_NOT_FOUND
    missing = server.request("resources/read", {"uri": "kinetis://docs/setup"})
    assert missing["error"] == {
        "code": INTERNAL_ERROR,
        "message": 'Could not read "kinetis://docs/setup".',
    }
    assert server.finish() == 0
    assert f"could not read {tmp_path / 'setup.md'}: cannot open the file" in server.stderr


def test_a_reason_naming_a_path_with_a_newline_and_an_escape_is_one_line_on_stderr(
    spawn_server: SpawnServer, tmp_path: Path
) -> None:
    # A newline once split the line in two, and the ESC reached a terminal as it was: it
    # starts the sequence that moves the cursor or changes the colours.
    docs = tmp_path / "a\nkinetis-docs: b\x1b[31mc"
    docs.mkdir()
    server = spawn_server([*module_argv(), "--docs-dir", os.fspath(docs)])
    missing = server.request("resources/read", {"uri": "kinetis://docs/setup"})
    assert missing["error"]["code"] == INTERNAL_ERROR
    assert server.finish() == 0

    path = f"{tmp_path}/a\\nkinetis-docs: b\\x1b[31mc/setup.md"
    assert server.stderr.splitlines() == [
        f"kinetis-docs: could not read {path}: cannot open the file (No such file or directory)"
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--docs-dir"], "--docs-dir needs a directory"),
        (["--docs-dir="], "--docs-dir needs a directory"),
        (["--docs-dir", "/nonexistent/kinetis-docs"], "not a directory"),
        (["--port", "1"], "unknown argument '--port'"),
    ],
)
def test_a_bad_command_line_is_one_line_and_exit_2_before_any_frame(
    arguments: list[str], message: str
) -> None:
    completed = subprocess.run(
        [*module_argv(), *arguments],
        input=b"",
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == b""
    lines = completed.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("kinetis-docs: ")
    assert message in lines[0]


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (["--docs-dir", "{missing}"], "--docs-dir {missing}: not a directory"),
        (["--docs-dir", "{file}"], "--docs-dir {file}: not a directory"),
        (["--http", "--docs-dir", "{missing}"], "--docs-dir {missing}: not a directory"),
        (["--host", "127.0.0.2"], "--host applies to --http only"),
        # A newline in a path once split the line in two.
        (["--docs-dir", "{missing}\nx"], "--docs-dir {missing}\\nx: not a directory"),
        (
            ["--no-such-option"],
            "No such option '--no-such-option' (see `kinetis-docs serve --help`)",
        ),
        (
            ["--http", "--port", "65536"],
            (
                "Invalid value for '--port': '65536' is not a port number, from 0 to 65535 (0 "
                "picks a free port) (see `kinetis-docs serve --help`)"
            ),
        ),
        # Once click's `'abc' is not a valid integer range`.
        (
            ["--http", "--port", "abc"],
            (
                "Invalid value for '--port': 'abc' is not a port number, from 0 to 65535 (0 "
                "picks a free port) (see `kinetis-docs serve --help`)"
            ),
        ),
        (
            ["--http", "--workers", "two"],
            (
                "Invalid value for '--workers': 'two' is not a whole number from 1 up (see "
                "`kinetis-docs serve --help`)"
            ),
        ),
        # Once passed by click's range, then refused by the route naming a variable
        # (KINETIS_DOCS_HEADER_TIMEOUT) that no one had set.
        (
            ["--http", "--header-timeout", "nan"],
            (
                "Invalid value for '--header-timeout': 'nan' is not a finite number of seconds "
                "(see `kinetis-docs serve --help`)"
            ),
        ),
        (
            ["--idle-timeout", "1e309"],
            (
                "Invalid value for '--idle-timeout': '1e309' is not a finite number of seconds "
                "(see `kinetis-docs serve --help`)"
            ),
        ),
    ],
)
def test_serve_refuses_a_bad_command_line_in_one_line_with_exit_status_2(
    tmp_path: Path, arguments: list[str], line: str
) -> None:
    paths = {"missing": os.fspath(tmp_path / "missing"), "file": os.fspath(tmp_path / "file")}
    (tmp_path / "file").write_text("", encoding="utf-8")
    completed = subprocess.run(
        [*serve_argv(), *(argument.format(**paths) for argument in arguments)],
        input=b"",
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == b""
    assert completed.stderr.decode().splitlines() == [f"kinetis-docs: {line.format(**paths)}"]


def _documented_refusals() -> dict[str, str]:
    """docs/server.md's table of what each way to start the server says to an unknown option:
    the first command of each row, and the line."""
    text = (REPOSITORY_DOCS / "server.md").read_text(encoding="utf-8")
    table = text[text.index("| Started as | Given `--no-such-option`") :].split("\n\n")[0]
    rows = re.findall(r"^\| `([^`]+)`[^|]*\| (`+)(.+?)\2 \|$", table, flags=re.MULTILINE)
    return {command: line.strip() for command, _, line in rows}


def test_an_unknown_option_is_refused_in_the_words_the_server_page_gives() -> None:
    # The page once said that both name `kinetis-docs serve --help`; only serve does.
    documented = _documented_refusals()
    said = {}
    for command, argv in [("kinetis-docs serve", serve_argv()), (_MODULE, module_argv())]:
        completed = subprocess.run(
            [*argv, "--no-such-option"],
            input=b"",
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert completed.returncode == 2
        (said[command],) = completed.stderr.decode().splitlines()
    assert said == documented


def test_help_describes_the_server_and_its_option() -> None:
    completed = subprocess.run(
        [*module_argv(), "--help"], capture_output=True, timeout=TIMEOUT, check=True
    )
    assert b"--docs-dir DIR" in completed.stdout
    assert b"MCP server" in completed.stdout


def _start_on_a_terminal(argv: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        sigint_restored(argv), stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    os.close(terminal)
    return process, controller


def _interrupted(
    argv: list[str], interrupt: Callable[[subprocess.Popen[bytes]], None]
) -> tuple[str, int, bytes, bytes]:
    """Started on a terminal, its notice read, then `interrupt`ed: (the notice, its exit
    code, what it wrote on stdout and on stderr after the notice)."""
    process, controller = _start_on_a_terminal(argv)
    try:
        assert process.stderr is not None
        notice = process.stderr.readline().decode()
        interrupt(process)
        code = process.wait(timeout=TIMEOUT)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.communicate()
    return notice, code, stdout, stderr


@pytest.mark.parametrize("argv", [serve_argv(), module_argv()], ids=["serve", "module"])
def test_on_a_terminal_it_says_what_it_is_and_ctrl_c_ends_it_without_a_traceback(
    argv: list[str],
) -> None:
    notice, code, stdout, stderr = _interrupted(
        argv, lambda process: process.send_signal(signal.SIGINT)
    )

    assert "MCP server" in notice
    assert "Ctrl-D" in notice
    assert code == 130
    assert stdout == b""
    assert b"Traceback" not in stderr
    assert b"KeyboardInterrupt" not in stderr


def _to_a_helper_thread(process: subprocess.Popen[bytes]) -> None:
    """SIGINT sent to a thread of `process` other than its main one (the stderr writer,
    started by the notice), as the kernel sometimes chooses to deliver it."""
    tasks = Path(f"/proc/{process.pid}/task").iterdir()
    (helper, *_) = [int(task.name) for task in tasks if task.name != str(process.pid)]
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(process.pid, helper, signal.SIGINT) == 0, ctypes.get_errno()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_ctrl_c_ends_it_even_when_a_helper_thread_takes_the_signal() -> None:
    notice, code, stdout, stderr = _interrupted(module_argv(), _to_a_helper_thread)

    assert "MCP server" in notice
    assert code == 130
    assert stdout == b""
    assert b"Traceback" not in stderr


def test_a_client_sees_no_terminal_notice() -> None:
    completed = subprocess.run(
        module_argv(), input=b"", capture_output=True, timeout=TIMEOUT, check=True
    )
    assert completed.stderr == b""


def test_ctrl_c_during_a_stalled_read_ends_the_server_at_once(
    spawn_server: SpawnServer, docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> None:
    docs_origin.serve(page_path("index"), body=b"# Index\n" * 100, stall_after=8)
    server = spawn_server(sigint_restored(module_argv()), origin_env)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": INDEX}})
    docs_origin.wait_for_received(page_path("index"))
    started = time.monotonic()
    server.process.send_signal(signal.SIGINT)
    assert server.process.wait(timeout=TIMEOUT) == 130
    # Well inside the 10 s idle timeout a stalled read would otherwise take.
    assert time.monotonic() - started < 5
    server.kill()
    assert "Traceback" not in server.stderr
