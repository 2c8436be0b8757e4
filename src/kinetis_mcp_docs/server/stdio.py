"""The stdio server: frames in on stdin, frames out on a private duplicate of stdout."""

from __future__ import annotations

import os
import sys

from .application import DocsApplication
from .methods import method_table
from .protocol.dispatch import Dispatcher
from .protocol.framing import FrameWriter, read_frames


def reserve_stdout() -> int:
    """Keep the real stdout for frames only; everything else that writes to it gets stderr.

    A stray `print`, a warning or a child process inheriting file descriptor 1 would
    otherwise corrupt the stream the client parses.
    """
    sys.stdout.flush()
    frames = os.dup(1)  # not inheritable: children never see the frame stream
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return frames


def _fatal(message: str) -> None:
    print(f"kinetis-docs: {message}; exiting.", file=sys.stderr, flush=True)
    os._exit(1)


def serve(application: DocsApplication, *, input_fd: int, output_fd: int) -> int:
    """Answer frames from `input_fd` until end of input; the requests in flight finish first."""
    dispatcher = Dispatcher(method_table(application), FrameWriter(output_fd), _fatal)
    for frame in read_frames(input_fd):
        dispatcher.receive(frame)
    dispatcher.drain()
    return 0


def main() -> int:
    """Run the server on this process's stdin and stdout."""
    output_fd = reserve_stdout()
    application = DocsApplication()
    try:
        return serve(application, input_fd=0, output_fd=output_fd)
    finally:
        application.close()
