"""The stdio server: frames in on stdin, frames out on a private duplicate of stdout.

`python -m kinetis_mcp_docs.server [--docs-dir DIR]` and `kinetis-docs serve [--docs-dir
DIR]` both end here. Options are parsed by hand: `argparse` would import `re` and
`gettext` on every client spawn.
"""

from __future__ import annotations

import os
import sys
from _thread import stack_size  # `threading` costs start-up time; this is all it takes

from ... import __version__
from ..application import DocsApplication
from ..core import reasons
from ..core.display import say
from ..core.exceptions import PageUnavailable
from ..errors import ERRORS
from ..protocol.dispatch import ErrorTable
from ..protocol.errors import RpcError
from .dispatcher import Dispatcher
from .framing import FrameWriter, read_frames
from .methods import method_table
from .signal_wakeup import SignalWakeup
from .standard_streams import StdoutClosed, open_standard_streams
from .stderr_log import StderrLog

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Sequence

USAGE = """\
usage: python -m kinetis_mcp_docs.server [--docs-dir DIR]

The Kinetis documentation MCP server, over stdio: JSON-RPC messages, one per line, on
stdin; answers on stdout; logs on stderr. An MCP client (Claude Code, Codex) starts it.

options:
  --docs-dir DIR  read kinetis://docs/<slug> from DIR/<slug>.md instead of fetching it
                  from the Kinetis repository (for a machine offline, or a checkout)
  -h, --help      show this message and exit
"""
# What a person who started the server in a terminal by mistake needs to know.
TERMINAL_NOTICE = (
    "this is the Kinetis docs MCP server (kinetis-mcp-docs {version}), "
    "waiting for JSON-RPC messages on stdin, one per line; an MCP client such as Claude "
    "Code or Codex starts it for you. End it with Ctrl-D (or Ctrl-C)."
)
# The shell's convention for a process ended by SIGINT.
INTERRUPTED_EXIT = 130
WORKER_STACK_BYTES = 256 * 1024
"""The stack of every thread the server starts: a page read runs on two (the request's,
and its fetch's, which the deadline abandons), up to 32 reads at once. A thread's stack is
reserved whole, so the default (8 MiB, the stack limit of the shell) made 32 reads reserve
512 MiB of address space, too much under a 1 GiB limit; these threads run an HTTPS
request, a decoder and a page window, which need a small fraction of this."""


class UsageError(Exception):
    """A command line the server does not accept; the message is one line for stderr."""


def parse_docs_dir(argv: Sequence[str]) -> str | None:
    """The `--docs-dir` value of `argv` as an absolute path, or None; `UsageError` otherwise."""
    docs_dir: str | None = None
    arguments = list(argv)
    while arguments:
        argument = arguments.pop(0)
        if argument == "--docs-dir":
            if not arguments:
                raise UsageError("--docs-dir needs a directory")
            value = arguments.pop(0)
        elif argument.startswith("--docs-dir="):
            value = argument.partition("=")[2]
        else:
            raise UsageError(f"unknown argument {argument!r} (see --help)")
        if not value:
            raise UsageError("--docs-dir needs a directory")
        docs_dir = value
    if docs_dir is None:
        return None
    if not os.path.isdir(docs_dir):  # noqa: PTH112 - pathlib stays off the spawn path
        raise UsageError(f"--docs-dir {docs_dir}: not a directory")
    return os.path.abspath(docs_dir)  # noqa: PTH100


def reserve_stdout() -> int:
    """Keep the real stdout for frames only; everything else that writes to it gets stderr.

    A stray `print`, a warning or a child process inheriting file descriptor 1 would
    otherwise corrupt the stream the client parses. This process's own writes to either
    go through the `StderrLog` of `open_standard_streams`, which drops lines rather than
    block on a stderr nobody reads.
    """
    log = open_standard_streams()  # raises StdoutClosed: there is no stdout to reserve
    sys.stdout.flush()
    frames = os.dup(1)  # not inheritable: children never see the frame stream
    os.dup2(2, 1)
    sys.stdout = log
    return frames


def _fatal(message: str) -> None:
    say(f"{message}; exiting.")
    if isinstance(sys.stderr, StderrLog):
        sys.stderr.drain()  # bounded: whoever stopped reading stdout may not read stderr
    os._exit(1)


def _small_thread_stacks() -> None:
    """Start every later thread with `WORKER_STACK_BYTES` of stack, where Python can."""
    try:  # noqa: SIM105 - contextlib is kept off the spawn path
        stack_size(WORKER_STACK_BYTES)
    except (ValueError, RuntimeError):
        pass  # a platform that cannot size stacks keeps its default


def _reported(error: PageUnavailable | ImportError) -> RpcError:
    """The library's answer for an unreadable page, or a module of its own it cannot load
    (its files removed while it runs), its reason sent to this server's stderr.

    The reason is logged (`reasons.py`); this server sends that logger to its stderr, as a
    `kinetis-docs:` line, configuring it with the first reason: `logging` costs a client
    start time it does not otherwise need.
    """
    reasons.to_stderr()
    return ERRORS.rpc_error(error)


# The library's table, with the stdio server's stderr attached to its page failures.
STDIO_ERRORS = ErrorTable({**ERRORS.entries, PageUnavailable: _reported, ImportError: _reported})


def serve(
    application: DocsApplication, *, input_fd: int, output_fd: int, wakeup: int | None = None
) -> int:
    """Answer frames from `input_fd` until end of input; the requests in flight finish first.
    `wakeup`, a signal wakeup descriptor, lets a signal interrupt the reads at any moment."""
    table = method_table(application, STDIO_ERRORS)
    dispatcher = Dispatcher(table, FrameWriter(output_fd), _fatal)
    for frame in read_frames(input_fd, wakeup=wakeup):
        dispatcher.receive(frame)
    dispatcher.drain()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server on this process's stdin and stdout; `argv` defaults to `sys.argv[1:]`."""
    try:
        open_standard_streams()
    except StdoutClosed as error:
        say(f"{error}; exiting.")
        return 1
    arguments = sys.argv[1:] if argv is None else argv
    if "-h" in arguments or "--help" in arguments:
        print(USAGE, end="")
        return 0
    try:
        docs_dir = parse_docs_dir(arguments)
    except UsageError as error:
        say(str(error))  # one line whatever the path holds (`display.stderr_line`)
        return 2
    output_fd = reserve_stdout()
    _small_thread_stacks()
    application = DocsApplication(docs_dir=docs_dir)
    wakeup = SignalWakeup()
    try:
        wakeup.open()
        if os.isatty(0):
            say(TERMINAL_NOTICE.format(version=__version__))
        return serve(application, input_fd=0, output_fd=output_fd, wakeup=wakeup.read_fd)
    except KeyboardInterrupt:
        # Ctrl-C is how a person ends a server they started by hand: no traceback.
        return INTERRUPTED_EXIT
    finally:
        wakeup.close()
        application.close()
