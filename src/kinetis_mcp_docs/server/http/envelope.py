"""JSON-RPC over one HTTP POST: what the route reads of a body before it runs a method.

Stateless: every request carries what it needs, and no method depends on an earlier
`initialize`. A request in the `2026-07-28` revision names its version in
`params._meta["io.modelcontextprotocol/protocolVersion"]`; one without that key is a
request of an earlier revision, served the same way.

Order, first failure wins: an `MCP-Protocol-Version` header naming a version the route
does not speak (`-32022` under a null id, before the body is read), a body of more than
`MAX_STRUCTURE` of the bytes `[`, `{` and `,` (`-32600` under a null id, before it is
parsed), parse (`-32700`), a
batch (`-32600`), not an object (`-32600`), no `id` member (a notification: 202, empty),
an unreadable `id` (`-32600` under null), the envelope (`-32600` under the id), `params`
(`-32602`), a routing header sent twice or present and disagreeing with the body
(`-32020`), a `_meta` version the route does not speak (`-32022`), the method (`-32601`,
HTTP 404), then the method itself, whose exceptions become codes through the
application's one error table. The envelope is read by the stdio server's own checks
(`protocol.jsonrpc`); only the notification rule and the batch message are the route's.
The methods themselves are `methods.RouteMethods`.
"""

from __future__ import annotations

from ..codec import LongInteger, dumps, loads
from ..protocol.dispatch import Method
from ..protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
)
from ..protocol.jsonrpc import (
    ABSENT,
    EnvelopeError,
    as_object,
    as_request,
    encode,
    error_message,
    params_object,
    result_message,
)
from .headers import decoded_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..protocol.dispatch import MethodTable

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
NEWEST_VERSION = SUPPORTED_VERSIONS[-1]
_SUPPORTED = frozenset(SUPPORTED_VERSIONS)
VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
# The most `[`, `{` and `,` bytes a body may hold. Every JSON value past a body's first needs
# one of them, and a request to this route holds a few dozen. Parsing is the one cost that
# grows with what a body holds rather than with its size: 2 MiB of nested arrays cost a
# worker 1.2 s of CPU on its event loop, most of it the garbage collector going over a
# million new lists, where 2 MiB in one string costs 13 ms. Counting the three bytes costs
# about 1 ms for 2 MiB.
MAX_STRUCTURE = 10_000
_TOO_MANY_VALUES = RpcError(
    INVALID_REQUEST,
    f"Invalid Request: more than {MAX_STRUCTURE} of the characters [, {{ and , in one message.",
)
# MCP's routing headers, by the lowercase name they are read under, as the errors spell them.
_SPELLING = {
    "mcp-protocol-version": "MCP-Protocol-Version",
    "mcp-method": "Mcp-Method",
    "mcp-name": "Mcp-Name",
}
_ROUTING_HEADERS = tuple(_SPELLING)

# The HTTP status of an error answer, as the MCP SDK maps them; any other code is 200.
_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

RequestId = str | int


class Reply:
    """What to answer without running anything: a status and a body (empty for 202).

    `name` and `tool` are the method and tool the request named, when it could be read
    that far, for the access log and the metrics."""

    __slots__ = ("body", "name", "status", "tool")

    def __init__(
        self, status: int, body: bytes, name: str | None = None, tool: str | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.name = name
        self.tool = tool


class Encoded:
    """A result that never changes, encoded once: `tools/list`, `server/discover`, `ping`,
    `initialize`. `tail` is the answer after its id, so that an answer is two joins."""

    __slots__ = ("json", "tail")

    def __init__(self, result: dict[str, object]) -> None:
        self.json = encode(result)
        self.tail = b',"result":' + self.json + b"}"


# A request that passed every check before dispatch: (the method to run, the request's id,
# its params, the method's name). A tuple, not a class: one is made for every request, and
# making an instance of a class of ours cost ten times as much.
Call = tuple[Method, RequestId, dict[str, object], str]


def called_tool(call: Call) -> str | None:
    """The tool a `tools/call` names, as sent; None for any other method."""
    tool = call[2].get("name") if call[3] == "tools/call" else None
    return tool if isinstance(tool, str) else None


_HEAD = b'{"jsonrpc":"2.0","id":'


def result_body(request_id: RequestId, result: object) -> bytes:
    """The answer carrying `result` under `request_id`."""
    if type(result) is Encoded:
        if type(request_id) is int:  # the common id: its digits are its JSON
            return _HEAD + b"%d" % request_id + result.tail
        if isinstance(request_id, LongInteger):
            # An id too long to convert is echoed as the literal the client sent.
            return _HEAD + request_id.text.encode("ascii") + result.tail
        return _HEAD + dumps(request_id, ensure_ascii=True).encode("ascii") + result.tail
    return result_message(request_id, result)


def result_reply(request_id: RequestId, result: object) -> Reply:
    return Reply(200, result_body(request_id, result))


def error_reply(
    request_id: RequestId | None, error: RpcError, name: str | None = None, tool: str | None = None
) -> Reply:
    return Reply(_STATUS.get(error.code, 200), error_message(request_id, error), name, tool)


def version_refusal(values: Mapping[bytes, bytes], repeated: frozenset[str]) -> Reply | None:
    """`-32022` under a null id for an `MCP-Protocol-Version` header naming a version the
    route does not speak: answered before the body is read, which may then never be (a
    header sent twice is `-32020`, once the body says what it disagrees with)."""
    version = values.get(b"mcp-protocol-version")
    if version is None or "mcp-protocol-version" in repeated:
        return None
    unsupported = _unsupported(version.decode("latin-1"))
    return None if unsupported is None else error_reply(None, unsupported)


def read_call(  # noqa: PLR0912 - the envelope's checks, in the contract's order
    body: bytes, values: Mapping[bytes, bytes], repeated: frozenset[str], table: MethodTable
) -> Call | Reply:
    """The call `body` asks for, or the reply it gets without running anything. `values`
    and `repeated` are the request's headers, as `RequestHeaders` reads them; the version
    header was checked (`version_refusal`) before the body was read."""
    if len(body) > MAX_STRUCTURE and (
        body.count(b",") + body.count(b"[") + body.count(b"{") > MAX_STRUCTURE
    ):
        return error_reply(None, _TOO_MANY_VALUES)
    try:
        try:
            # `jsonrpc.decode`, written out: a call fewer for every request.
            message = loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return error_reply(None, RpcError(PARSE_ERROR, "Parse error"))
        if type(message) is dict:
            envelope = message
        elif isinstance(message, list):
            return error_reply(None, RpcError(INVALID_REQUEST, "Batch requests are not supported"))
        else:
            envelope = as_object(message)  # refused: not an object
        if "id" not in envelope:
            # A notification: nothing to answer, nothing to run.
            named = envelope.get("method")
            return Reply(202, b"", named if isinstance(named, str) else None)
        request_id = envelope["id"]
        name = envelope.get("method")
        if (
            (type(request_id) is int or type(request_id) is str)
            and type(name) is str
            and name
            and envelope.get("jsonrpc") == "2.0"
        ):
            # The common request, valid at a glance: what `as_request` would make of it.
            params = envelope.get("params", ABSENT)
        else:
            request = as_request(envelope)  # every refusal, with its id, as the stdio server
            request_id, name, params = request.id, request.method, request.params
    except EnvelopeError as rejected:
        return error_reply(rejected.id, rejected.error)
    try:
        params = params_object(params)
    except RpcError as error:
        return error_reply(request_id, error, name)
    problem = None
    if (
        repeated
        or b"mcp-protocol-version" in values
        or b"mcp-name" in values
        or "_meta" in params
        or _disagrees(_latin1(values.get(b"mcp-method")), name)
    ):
        # Anything to compare but `Mcp-Method` (the one header most requests carry, and
        # which `_disagrees` answers at a glance when it is the method itself).
        problem = header_problem(name, params, values, repeated)
    if problem is not None:
        tool = params.get("name") if name == "tools/call" else None
        return error_reply(request_id, problem, name, tool if isinstance(tool, str) else None)
    try:
        method = table.resolve(name)
    except RpcError as error:
        return error_reply(request_id, error, name)
    return (method, request_id, params, name)


def header_problem(
    method: str,
    params: dict[str, object],
    values: Mapping[bytes, bytes],
    repeated: frozenset[str],
) -> RpcError | None:
    """`-32020` for a routing header sent twice or present and disagreeing with the body,
    `-32022` for a version the route does not speak (named by the header or `_meta`)."""
    if repeated:
        for name in _ROUTING_HEADERS:
            if name in repeated:
                return RpcError(
                    HEADER_MISMATCH, f"Header mismatch: {_SPELLING[name]} appears more than once"
                )
    meta = params.get("_meta")
    body_version = meta.get(VERSION_META_KEY) if type(meta) is dict else None
    version = values.get(b"mcp-protocol-version")
    if (
        version is not None
        and body_version is not None
        and version.decode("latin-1") != body_version
    ):
        return _mismatch("mcp-protocol-version", "params._meta protocol version")
    sent = values.get(b"mcp-method")
    if sent is not None and _disagrees(sent.decode("latin-1"), method):
        return _mismatch("mcp-method", "method")
    if method == "tools/call":
        sent = values.get(b"mcp-name")
        if sent is not None and _disagrees(sent.decode("latin-1"), params.get("name")):
            return _mismatch("mcp-name", "params.name")
    if body_version is None:
        return None
    if not isinstance(body_version, str):
        return RpcError(INVALID_PARAMS, "Invalid params: the protocol version must be a string.")
    return _unsupported(body_version)


def _latin1(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _disagrees(header: str | None, member: object) -> bool:
    """Whether a header is present and, decoded, is not the body's `member`."""
    if header is None:
        return False
    if header == member and not header.startswith("=?"):
        return False  # plainly the same: nothing encoded to decode
    decoded = decoded_value(header)
    return decoded is None or decoded != member


def _unsupported(requested: str | None) -> RpcError | None:
    if requested is None or requested in _SUPPORTED:
        return None
    data = {"supported": list(SUPPORTED_VERSIONS), "requested": requested}
    return RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)


def _mismatch(header: str, member: str) -> RpcError:
    return RpcError(
        HEADER_MISMATCH, f"Header mismatch: {_SPELLING[header]} disagrees with the body's {member}"
    )
