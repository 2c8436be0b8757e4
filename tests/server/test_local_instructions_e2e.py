"""Under `--docs-dir`, the stdio server's `initialize` says where its pages come from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.stdio import INITIALIZE_PARAMS, TIMEOUT, ServerProcess, module_argv


def _initialize(argv: list[str]) -> Any:
    server = ServerProcess(argv, os.environ)
    try:
        response = server.request("initialize", INITIALIZE_PARAMS)
        assert server.finish() == 0, server.stderr
    finally:
        server.kill()
    return response


def test_initialize_under_docs_dir_says_the_pages_come_from_it_and_is_otherwise_the_same(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "my docs"
    docs.mkdir()

    live = _initialize(module_argv())
    local = _initialize([*module_argv(), "--docs-dir", os.fspath(docs)])

    said = local["result"].pop("instructions")
    live_said = live["result"].pop("instructions")
    assert local == live
    assert said.startswith(
        f"This server serves the Kinetis documentation from a local directory of its pages, "
        f"{docs}, read again on every call. "
    )
    assert "fetched live" in live_said
    for stale in ("fetched live", "Kinetis repository", "main branch"):
        assert stale not in said
    # The reading advice is the same, word for word.
    advice = live_said[live_said.index("Read these pages") : live_said.index("whole page.")]
    assert advice in said


async def _instructions_seen_by_the_sdk(argv: list[str], errlog: TextIO) -> str | None:
    """`initialize` as the official MCP Python SDK's client makes it over stdio, and the
    instructions it was answered with."""
    command, *arguments = argv
    parameters = StdioServerParameters(command=command, args=arguments)
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(parameters, errlog=errlog)) as client:
            return client.instructions


def test_a_docs_dir_whose_name_is_not_utf8_is_named_readably_to_the_sdk_client(
    tmp_path: Path,
) -> None:
    # The bytes 0xFF 0xFE are no UTF-8: Python holds them as lone surrogates, which once
    # reached the answer as `\udcff` escapes, and the SDK refused the frame (its initialize
    # then timed out).
    docs = tmp_path / os.fsdecode(b"bad\xff\xfebytes")
    docs.mkdir()

    with (tmp_path / "stderr").open("w") as errlog:
        said = anyio.run(
            _instructions_seen_by_the_sdk, [*module_argv(), "--docs-dir", os.fspath(docs)], errlog
        )

    assert said is not None
    assert f"local directory of its pages, {tmp_path}/bad\\xff\\xfebytes, read again" in said
