"""JSON-RPC 2.0 envelopes: classify an incoming payload, build outgoing ones.

Checks run in a fixed order — parse (-32700), envelope (-32600), then a valid envelope
without an id is a notification — so the same payload always gets the same answer.
"""

from __future__ import annotations

from .codec import LongInteger, dumps, loads
from .errors import INVALID_REQUEST, PARSE_ERROR, RpcError

RequestId = str | int


class Request:
    """A call that expects an answer under `id`."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: object, /) -> None:  # noqa: A002
        self.id = id
        self.method = method
        # `_ABSENT` when the member is missing; anything else is what the client sent.
        self.params = params


class Notification:
    """A valid envelope without an id: never answered, never dispatched."""

    __slots__ = ("method",)

    def __init__(self, method: str) -> None:
        self.method = method


class ClientResponse:
    """A well-formed response from the client; this server sends no requests, so it is ignored."""

    __slots__ = ()


class EnvelopeError(Exception):
    """The payload is not a usable message; answer `error` under `id` (None means null)."""

    def __init__(self, id: RequestId | None, error: RpcError) -> None:  # noqa: A002
        super().__init__(error.message)
        self.id = id
        self.error = error


ABSENT = object()
Message = Request | Notification | ClientResponse


def parse(payload: bytes) -> Message:
    """Classify one frame's payload, or raise `EnvelopeError` with the answer to send."""
    try:
        message = loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EnvelopeError(None, RpcError(PARSE_ERROR, "Parse error")) from None
    if not isinstance(message, dict):
        kind = "Batches are not supported" if isinstance(message, list) else "Not a JSON object"
        raise EnvelopeError(None, RpcError(INVALID_REQUEST, f"Invalid Request: {kind}."))

    has_id = "id" in message
    raw_id = message.get("id")
    readable_id: RequestId | None = raw_id if is_request_id(raw_id) else None

    if "method" not in message and ("result" in message or "error" in message):
        if _is_client_response(message):
            return ClientResponse()
        raise _invalid(readable_id, "malformed response")
    if has_id and readable_id is None:
        raise _invalid(None, '"id" must be a string or an integer')
    if message.get("jsonrpc") != "2.0":
        raise _invalid(readable_id, '"jsonrpc" must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise _invalid(readable_id, '"method" must be a non-empty string')
    if readable_id is None:
        return Notification(method)
    return Request(readable_id, method, message.get("params", ABSENT))


def is_request_id(value: object) -> bool:
    """Whether `value` can be a request id: a string or an integer, never a bool."""
    # bool is an int subclass in Python, but `true` is not a JSON-RPC id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _is_client_response(message: dict[str, object]) -> bool:
    return (
        message.get("jsonrpc") == "2.0"
        and "id" in message
        and (message["id"] is None or is_request_id(message["id"]))
        and ("result" in message) != ("error" in message)
    )


def _invalid(id: RequestId | None, detail: str) -> EnvelopeError:  # noqa: A002
    return EnvelopeError(id, RpcError(INVALID_REQUEST, f"Invalid Request: {detail}."))


def encode(message: object) -> bytes:
    """Compact UTF-8 JSON; escapes only what UTF-8 cannot carry (a lone surrogate)."""
    try:
        return dumps(message).encode("utf-8")
    except UnicodeEncodeError:
        return dumps(message, ensure_ascii=True).encode("ascii")


def result_message(id: RequestId, result: object) -> bytes:  # noqa: A002
    if isinstance(id, LongInteger):
        return _with_long_id(id, "result", result)
    return encode({"jsonrpc": "2.0", "id": id, "result": result})


def error_message(id: RequestId | None, error: RpcError) -> bytes:  # noqa: A002
    if isinstance(id, LongInteger):
        return _with_long_id(id, "error", error.to_wire())
    return encode({"jsonrpc": "2.0", "id": id, "error": error.to_wire()})


def _with_long_id(id: LongInteger, member: str, value: object) -> bytes:  # noqa: A002
    """An answer under an id too long to convert: echoed as the literal the client sent."""
    return b'{"jsonrpc":"2.0","id":%s,"%s":%s}' % (
        id.text.encode("ascii"),
        member.encode("ascii"),
        encode(value),
    )
