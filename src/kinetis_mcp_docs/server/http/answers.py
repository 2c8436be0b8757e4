"""What the route answers outside JSON-RPC, as ASGI parts: a status, a body and headers.

Each fixed answer is built once, at import; `app`, `probes` and the metrics hand these
tuples to one place that sends them.
"""

from __future__ import annotations

Headers = list[tuple[bytes, bytes]]
# status, body, headers: what one request is answered.
Answer = tuple[int, bytes, Headers]

JSON = (b"content-type", b"application/json")
TEXT = (b"content-type", b"text/plain; charset=utf-8")
NO_STORE = (b"cache-control", b"no-store")
EMPTY = (b"content-length", b"0")


def length(body: bytes) -> tuple[bytes, bytes]:
    return (b"content-length", b"%d" % len(body))


def json_answer(status: int, body: bytes, extra: Headers | None = None) -> Answer:
    """`body`, JSON already, with `extra` headers before the content headers."""
    return status, body, [NO_STORE, *(extra or ()), JSON, length(body)]


def refusal(status: int, message: str, extra: Headers | None = None) -> Answer:
    """A refusal outside JSON-RPC: `{"error": message}`."""
    return json_answer(status, b'{"error":"' + message.encode("ascii") + b'"}', extra)


def text_answer(status: int, text: bytes) -> Answer:
    return status, text, [NO_STORE, TEXT, length(text)]


NOT_FOUND = refusal(404, "Not found")
# For the paths read with GET: the probes and the metrics.
NOT_GET = refusal(405, "Method not allowed", [(b"allow", b"GET, HEAD")])
