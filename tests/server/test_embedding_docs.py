"""The embedding page's examples run as written, against a real DocsApplication."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _examples() -> dict[str, Any]:
    text = (DOCS / "embedding.md").read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "embedding_examples"}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL):
        exec(compile(block, "docs/embedding.md", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_offline_page_source_example_serves_a_page_and_both_tools() -> None:
    examples = _examples()
    app = examples["DocsApplication"](source=examples["CheckoutPages"](DOCS))
    page = app.read_resource("kinetis://docs/index")
    assert page["text"] == (DOCS / "index.md").read_bytes().decode("utf-8")
    found = app.call_tool("kinetis_search_doc", {"uri": "kinetis://docs/index", "query": "# "})
    assert found["isError"] is False
    assert found["structuredContent"]["matches"][0]["line"] == 1


def test_the_host_example_maps_each_exception_to_its_code() -> None:
    examples = _examples()
    app = examples["DocsApplication"](source=examples["CheckoutPages"](DOCS / "missing"))
    host = examples["DocsPart"](app)
    rpc_error = examples["RpcError"]
    with pytest.raises(rpc_error) as unknown:
        host.read_resource("kinetis://docs/nope")
    assert (unknown.value.code, unknown.value.data) == (-32002, {"uri": "kinetis://docs/nope"})
    with pytest.raises(rpc_error) as unreadable:
        host.read_resource("kinetis://docs/index")
    assert unreadable.value.code == -32603
    with pytest.raises(rpc_error) as invalid:
        host.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/index", "lineCount": 0})
    assert invalid.value.code == -32602
    refused = host.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/nope"})
    assert refused["structuredContent"] == {"status": "resource_unknown"}
