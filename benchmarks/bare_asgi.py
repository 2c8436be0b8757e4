"""The floor of the route's throughput: a bare ASGI application on the same uvicorn.

It reads the request's body and answers a fixed JSON-RPC result, nothing else: what any
MCP route on uvicorn costs at the least. `http_floor` runs it beside the route.

    uvicorn benchmarks.bare_asgi:app
"""

from __future__ import annotations

from typing import Any

_BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(_BODY))],
}
_ANSWER = {"type": "http.response.body", "body": _BODY}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            kind = (await receive())["type"]
            await send({"type": f"{kind}.complete"})
            if kind == "lifespan.shutdown":
                return
    if scope["type"] != "http":
        return
    more = True
    while more:  # the whole body, as the route reads it
        more = (await receive()).get("more_body", False)
    await send(_START)
    await send(_ANSWER)
