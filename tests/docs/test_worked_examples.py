"""The worked examples in docs/ are what the server answers.

Every request an example shows is sent to a real server reading this checkout's pages, and
every result it shows must come back as shown: the line numbers, the matched lines and the
window contents. An edit that moves a line an example points at fails here, rather than
leaving an agent a wrong line number.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.stdio import ServerProcess, module_argv
from tests.support.wheelhouse import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs"
WORKFLOW = "agent-workflow.md"
# A fence opens and closes at the start of a line; backticks inside a JSON string do not.
_JSON_BLOCK = re.compile(r"^```json\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_ABBREVIATION = "..."


@dataclass(frozen=True)
class Block:
    """One ```json block of a page: where it opens, and the value it holds."""

    page: str
    line: int
    value: Any

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """One server for the module, reading the pages from this checkout's docs/."""
    process = ServerProcess([*module_argv(), "--docs-dir", os.fspath(DOCS)])
    try:
        yield process
    finally:
        process.kill()


@pytest.mark.parametrize("page", sorted(path.name for path in DOCS.glob("*.md")))
def test_every_result_document_a_page_shows_is_what_the_tool_answers_for_it(
    server: ServerProcess, page: str
) -> None:
    for block in _blocks(page):
        for shown in _success_documents(block.value):
            answer = server.call_tool(*_call_that_answers(shown))
            assert answer["result"]["structuredContent"] == shown, block.where


def test_the_agent_workflow_walkthrough_is_answered_as_it_shows(server: ServerProcess) -> None:
    blocks = _blocks(WORKFLOW)
    compared = 0
    for request, shown in zip(blocks, [*blocks[1:], None], strict=True):
        message = _as_request(request.value)
        if message is None:
            continue
        server.send(message)
        response = server.receive()
        if shown is None or _as_request(shown.value) is not None:
            assert "result" in response, f"{request.where} is answered {response}"
            continue
        actual = response if "jsonrpc" in shown.value else response["result"]["structuredContent"]
        assert _shows(shown.value, actual), (
            f"{shown.where} shows {json.dumps(shown.value)}\n"
            f"but the server answers {json.dumps(actual)}"
        )
        compared += 1
    assert compared >= 3, "the walkthrough shows a search, a window and a whole page"


def test_the_catalogue_entry_the_workflow_shows_is_the_servers_own(server: ServerProcess) -> None:
    listed = {
        entry["uri"]: entry for entry in server.request("resources/list")["result"]["resources"]
    }
    entries = [block for block in _blocks(WORKFLOW) if _is_catalogue_entry(block.value)]
    assert entries, "the walkthrough starts from a catalogue entry"
    for block in entries:
        assert block.value == listed.get(block.value["uri"]), block.where


def test_the_window_starts_above_the_match_holds_it_and_the_next_starts_after_it() -> None:
    documents = [doc for block in _blocks(WORKFLOW) for doc in _success_documents(block.value)]
    (search,) = (doc for doc in documents if "query" in doc)
    (window,) = (doc for doc in documents if "content" in doc)
    (match,) = search["matches"]
    assert window["uri"] == search["uri"]
    assert window["startLine"] < match["line"] <= window["endLine"]
    assert window["hasMore"] is True
    continuations = [
        block.value["arguments"]
        for block in _blocks(WORKFLOW)
        if block.value.get("name") == "kinetis_read_doc" and "jsonrpc" not in block.value
    ]
    assert [arguments["startLine"] for arguments in continuations] == [window["endLine"] + 1]


def test_the_lowercase_query_the_workflow_warns_about_misses_the_heading(
    server: ServerProcess,
) -> None:
    text = (DOCS / WORKFLOW).read_text(encoding="utf-8")
    assert "Searching `force` instead would not find this heading" in text
    (search,) = (
        doc
        for block in _blocks(WORKFLOW)
        for doc in _success_documents(block.value)
        if "query" in doc
    )
    (heading,) = search["matches"]
    answer = server.call_tool("kinetis_search_doc", {"uri": search["uri"], "query": "force"})
    found = answer["result"]["structuredContent"]["matches"]
    assert heading["content"] not in [match["content"] for match in found]


def _blocks(page: str) -> list[Block]:
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = []
    for found in _JSON_BLOCK.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        try:
            value = json.loads(found.group(1))
        except json.JSONDecodeError as error:
            raise AssertionError(f"docs/{page}:{line} is not valid JSON: {error}") from None
        blocks.append(Block(page, line, value))
    return blocks


def _success_documents(value: Any) -> Iterator[dict[str, Any]]:
    """Every tool result document in `value` that names a page: what a call can replay."""
    if isinstance(value, dict):
        if value.get("status") == "ok" and "uri" in value:
            yield value
        for member in value.values():
            yield from _success_documents(member)
    elif isinstance(value, list):
        for item in value:
            yield from _success_documents(item)


def _call_that_answers(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call whose answer `document` claims to be."""
    arguments = {"uri": document["uri"], "startLine": document["startLine"]}
    if "query" in document:
        return "kinetis_search_doc", {**arguments, "query": document["query"]}
    line_count = document["endLine"] - document["startLine"] + 1
    return "kinetis_read_doc", {**arguments, "lineCount": line_count}


def _as_request(value: Any) -> dict[str, Any] | None:
    """`value` as a JSON-RPC request to send: a whole request, or the `params` of a tool call."""
    if isinstance(value, dict) and "method" in value:
        return value
    if isinstance(value, dict) and value.keys() == {"name", "arguments"}:
        return {"jsonrpc": "2.0", "id": "continuation", "method": "tools/call", "params": value}
    return None


def _is_catalogue_entry(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"uri", "name", "description", "mimeType"}


def _shows(shown: Any, actual: Any) -> bool:
    """Whether `shown` shows `actual`: equal, but a string ending in `...` shows any string
    that begins with what precedes it."""
    if isinstance(shown, str) and isinstance(actual, str) and shown.endswith(_ABBREVIATION):
        return actual.startswith(shown.removesuffix(_ABBREVIATION))
    if isinstance(shown, dict) and isinstance(actual, dict):
        return shown.keys() == actual.keys() and all(_shows(shown[k], actual[k]) for k in shown)
    if isinstance(shown, list) and isinstance(actual, list):
        return len(shown) == len(actual) and all(map(_shows, shown, actual))
    return type(shown) is type(actual) and shown == actual
