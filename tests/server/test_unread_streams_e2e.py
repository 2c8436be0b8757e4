"""A client that stops reading the server's stdout, or never reads its stderr.

Real `kinetis-docs serve` subprocesses over real pipes: the test simply never reads one of
them, as a hung or careless client would.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR
from kinetis_mcp_docs.server.stdio.stderr_log import QUEUE_BYTES
from tests.server.conftest import SpawnServer
from tests.support.stdio import assert_only_frames, serve_argv

pytestmark = pytest.mark.interpreter  # descriptors, pipes and signals

# Far more answer than a pipe holds (64 KiB): each `tools/list` answer is about 2 KiB.
UNREAD_ANSWERS = b"".join(
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % request_id for request_id in range(400)
)


@pytest.mark.slow
def test_a_client_that_stops_reading_stdout_ends_the_server_with_exit_one_and_one_line(
    spawn_server: SpawnServer,
) -> None:
    server = spawn_server(read_stdout=False)
    server.send_raw(UNREAD_ANSWERS)  # and stdin stays open: the client is there, not reading

    assert server.wait_for_exit(timeout=60) == 1
    assert server.stderr == (
        "kinetis-docs: cannot write to stdout: no progress for 10 s; exiting.\n"
    )


def test_a_client_that_never_reads_stderr_still_gets_every_answer(
    spawn_server: SpawnServer, tmp_path: Path
) -> None:
    # Every read of an empty pages directory fails with a line on stderr: 2,000 of them are
    # about four times what the pipe and the server's queue hold together.
    server = spawn_server([*serve_argv(), "--docs-dir", str(tmp_path)], read_stderr=False)
    reads, batch = 2000, 50
    answers = []
    for first in range(0, reads, batch):  # in batches, so a stalled server cannot stall the test
        server.send_raw(
            b"".join(
                b'{"jsonrpc":"2.0","id":%d,"method":"resources/read",'
                b'"params":{"uri":"kinetis://docs/index"}}\n' % request_id
                for request_id in range(first, first + batch)
            )
        )
        answers += [server.receive() for _ in range(batch)]

    assert sorted(answer["id"] for answer in answers) == list(range(reads))
    assert {answer["error"]["code"] for answer in answers} == {INTERNAL_ERROR}
    server.start_reading_stderr()
    assert server.finish() == 0
    assert_only_frames(server.lines)
    failures = server.stderr.count("kinetis-docs: could not read ")
    notices = re.findall(r"kinetis-docs: (\d+) lines? (?:was|were) dropped", server.stderr)
    dropped = sum(int(count) for count in notices)
    assert dropped > 0
    assert failures + dropped == reads
    # What was kept is what the pipe and the queue hold, not a line more.
    assert failures * len("kinetis-docs: could not read ") < 2 * QUEUE_BYTES + 65536
