"""Which points of the contract each server keeps: the peer's limits, shown rather than claimed.

Each probe sends one message and checks the answer against the contract. The peer is
written the way the SDK's high-level API is meant to be used; where a probe fails for it,
that is a part of the contract the SDK does not let a server express (or not without
replacing the SDK's own handlers, which would no longer be its high-level API).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.wire import PROTOCOL_VERSION, BenchError, ServerProcess, frame, request

MARKER_ID = 999_999
PROBE_TIMEOUT = 10.0

Check = Callable[[dict[str, Any] | None], bool]


def _error(code: int, *, null_id: bool = False) -> Check:
    def check(response: dict[str, Any] | None) -> bool:
        if response is None or not isinstance(response.get("error"), dict):
            return False
        if null_id and response.get("id") is not None:
            return False
        return bool(response["error"].get("code") == code)

    return check


def _initialize_pins(response: dict[str, Any] | None) -> bool:
    result = (response or {}).get("result") or {}
    return bool(
        result.get("protocolVersion") == PROTOCOL_VERSION
        and result.get("capabilities") == {"tools": {}, "resources": {}}
    )


def _resource_not_found(response: dict[str, Any] | None) -> bool:
    error = (response or {}).get("error") or {}
    return bool(error.get("code") == -32002 and (error.get("data") or {}).get("uri"))


def _call(request_id: int, name: str, arguments: object) -> bytes:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})


@dataclass(frozen=True)
class Probe:
    point: str
    payload: bytes
    answer_id: int | None
    """The id the answer comes under; None for an answer under `id: null`."""
    check: Check


_OLD_REVISION = {
    "protocolVersion": "2024-11-05",
    "capabilities": {},
    "clientInfo": {"name": "kinetis-bench", "version": "1"},
}
_INDEX = "kinetis://docs/index"

PROBES: Sequence[Probe] = (
    Probe(
        "`initialize` answers 2025-06-18 whatever was asked; capabilities exactly tools, resources",
        request(1, "initialize", _OLD_REVISION),
        1,
        _initialize_pins,
    ),
    Probe(
        "`tools/list` with `cursor` → -32602",
        request(2, "tools/list", {"cursor": "x"}),
        2,
        _error(-32602),
    ),
    Probe(
        "`resources/list` with `cursor` → -32602",
        request(3, "resources/list", {"cursor": "x"}),
        3,
        _error(-32602),
    ),
    Probe(
        "closed schema: an unknown argument → -32602, before any fetch",
        _call(4, "kinetis_read_doc", {"uri": _INDEX, "page": 2}),
        4,
        _error(-32602),
    ),
    Probe(
        "`lineCount` out of range → -32602",
        _call(5, "kinetis_read_doc", {"uri": _INDEX, "lineCount": 0}),
        5,
        _error(-32602),
    ),
    Probe("unknown tool → -32602", _call(6, "kinetis_nope", {}), 6, _error(-32602)),
    Probe(
        "`resources/read` outside the catalogue → -32002 with `data.uri`",
        request(7, "resources/read", {"uri": "kinetis://docs/nope"}),
        7,
        _resource_not_found,
    ),
    Probe(
        "`notifications/initialized` with an id → -32601",
        request(8, "notifications/initialized"),
        8,
        _error(-32601),
    ),
    Probe(
        "`params` an array → -32602",
        frame({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": []}),
        9,
        _error(-32602),
    ),
    Probe(
        "a batch → -32600 under `id: null`",
        json.dumps([{"jsonrpc": "2.0", "id": 10, "method": "ping"}]).encode() + b"\n",
        None,
        _error(-32600, null_id=True),
    ),
    Probe(
        "invalid JSON → -32700 under `id: null`",
        b'{"jsonrpc": \n',
        None,
        _error(-32700, null_id=True),
    ),
    Probe(
        "an id that is not a string or an integer → -32600 under `id: null`",
        frame({"jsonrpc": "2.0", "id": True, "method": "ping"}),
        None,
        _error(-32600, null_id=True),
    ),
)


def probe(argv: Sequence[str], env: dict[str, str]) -> dict[str, bool]:
    """Run every probe against one server; which points it keeps."""
    kept: dict[str, bool] = {}
    with ServerProcess(argv, env) as server:
        server.initialize()
        for item in PROBES:
            before = server.received
            server.send(item.payload)
            server.send(request(MARKER_ID, "ping"))
            answer = _answer(server, before, item.answer_id)
            kept[item.point] = item.check(answer)
    return kept


def _answer(server: ServerProcess, before: int, answer_id: int | None) -> dict[str, Any] | None:
    """The probe's answer, if it came before the marker ping's (or with it)."""
    seen = before
    while True:
        server.wait_for(seen + 1, PROBE_TIMEOUT)
        responses = server.responses(before)
        seen = before + len(responses)
        found = [r for r in responses if r.get("id") == answer_id and r.get("id") != MARKER_ID]
        if found:
            return found[0]
        if any(r.get("id") == MARKER_ID for r in responses):
            # The server answers in order for these cheap methods; give a concurrent one a
            # moment to finish the probe it may still be working on.
            try:
                server.wait_for(seen + 1, 0.5)
            except BenchError:
                return None
            continue
