"""JSON-RPC 2.0 envelopes: classify an incoming payload, build outgoing ones.

Checks run in a fixed order — parse (-32700), envelope (-32600), then a valid envelope
without an id is a notification — so the same payload always gets the same answer.
`parse` is the stdio server's reading; the HTTP route reads the same envelope through
`decode`, `as_object` and `as_request`, differing only where its contract does (a body
without an `id` member is accepted unread, and a batch has its own message).
"""

from __future__ import annotations

from ..codec import LongInteger, dumps, loads
from .errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RpcError

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from typing import TypeGuard

RequestId = str | int

MAX_MESSAGE_BYTES = 2 * 1024 * 1024
"""The largest message either transport reads: a stdio frame's payload, an HTTP body."""


class Request:
    """A call that expects an answer under `id`."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: object, /) -> None:  # noqa: A002
        self.id = id
        self.method = method
        # `ABSENT` when the member is missing; anything else is what the client sent.
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
    message = as_object(decode(payload))
    if "method" not in message and ("result" in message or "error" in message):
        if _is_client_response(message):
            return ClientResponse()
        raw_id = message.get("id")
        raise _invalid(raw_id if is_request_id(raw_id) else None, "malformed response")
    if "id" not in message:
        return Notification(_method(message, None))
    return as_request(message)


def decode(payload: bytes) -> object:
    """The one JSON value `payload` holds; `EnvelopeError` (-32700) when it is not one."""
    try:
        return loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EnvelopeError(None, RpcError(PARSE_ERROR, "Parse error")) from None


def as_object(message: object) -> dict[str, object]:
    """`message` when it is a JSON object; `EnvelopeError` (-32600 under null) otherwise."""
    if not isinstance(message, dict):
        kind = "Batches are not supported" if isinstance(message, list) else "Not a JSON object"
        raise EnvelopeError(None, RpcError(INVALID_REQUEST, f"Invalid Request: {kind}."))
    return message


def as_request(message: dict[str, object]) -> Request:
    """The request a message with an `id` member makes, or `EnvelopeError` (-32600): under
    null for an `id` that is not a string or an integer, else under that `id`."""
    request_id = message.get("id")
    if not is_request_id(request_id):
        raise _invalid(None, '"id" must be a string or an integer')
    return Request(request_id, _method(message, request_id), message.get("params", ABSENT))


def params_of(request: Request) -> dict[str, object]:
    """The request's `params` (`{}` when absent); `RpcError` -32602 when not an object."""
    return params_object(request.params)


def params_object(params: object) -> dict[str, object]:
    """A request's `params` member as the methods take it (`{}` when absent); `RpcError`
    -32602 when not an object. For a transport that reads the envelope itself."""
    if params is ABSENT:
        return {}
    if isinstance(params, dict):
        return params
    raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object.")


def _method(message: dict[str, object], request_id: RequestId | None) -> str:
    if message.get("jsonrpc") != "2.0":
        raise _invalid(request_id, '"jsonrpc" must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise _invalid(request_id, '"method" must be a non-empty string')
    return method


def is_request_id(value: object) -> TypeGuard[RequestId]:
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
