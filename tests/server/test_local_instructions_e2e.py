"""Under `--docs-dir`, the stdio server's `initialize` says where its pages come from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess, module_argv


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
