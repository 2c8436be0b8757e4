"""JSON-RPC over one HTTP POST: the route's envelope rules, header checks and methods.

Stateless: every request carries what it needs, and no method depends on an earlier
`initialize`. A request in the `2026-07-28` revision names its version in
`params._meta["io.modelcontextprotocol/protocolVersion"]`; one without that key is a
request of an earlier revision, served the same way.

Order, first failure wins: an `MCP-Protocol-Version` header naming a version the route
does not speak (`-32022` under a null id, before the body is read), parse (`-32700`), a
batch (`-32600`), not an object (`-32600`), no `id` member (a notification: 202, empty),
an unreadable `id` (`-32600` under null), the envelope (`-32600` under the id), `params`
(`-32602`), a routing header sent twice or present and disagreeing with the body
(`-32020`), a `_meta` version the route does not speak (`-32022`), the method (`-32601`,
HTTP 404), then the method itself, whose exceptions become codes through the
application's one error table. The envelope is read by the stdio server's own checks
(`protocol.jsonrpc`); only the notification rule and the batch message are the route's.
"""

from __future__ import annotations

from ..codec import LongInteger, dumps
from ..errors import ERRORS
from ..protocol.dispatch import Method, MethodTable
from ..protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
)
from ..protocol.jsonrpc import (
    EnvelopeError,
    as_object,
    as_request,
    decode,
    encode,
    error_message,
    params_of,
    result_message,
)
from .headers import RequestHeaders, decoded_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..application import DocsApplication

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
NEWEST_VERSION = SUPPORTED_VERSIONS[-1]
VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
TTL_MS = 60_000
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


class Call:
    """A request that passed every check before dispatch: run `method` with `params`."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: Method, params: dict[str, object]) -> None:  # noqa: A002
        self.id = id
        self.method = method
        self.params = params


class Reply:
    """What to answer without running anything: a status and a body (empty for 202)."""

    __slots__ = ("body", "status")

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body


ACCEPTED = Reply(202, b"")


class Encoded:
    """A result that never changes, encoded once: `tools/list` and `server/discover`."""

    __slots__ = ("json",)

    def __init__(self, result: dict[str, object]) -> None:
        self.json = encode(result)


def result_reply(request_id: RequestId, result: object) -> Reply:
    if isinstance(result, Encoded):
        # An id too long to convert is echoed as the literal the client sent.
        request = (
            request_id.text.encode("ascii")
            if isinstance(request_id, LongInteger)
            else dumps(request_id, ensure_ascii=True).encode("ascii")
        )
        head = b'{"jsonrpc":"2.0","id":' + request + b',"result":'
        return Reply(200, head + result.json + b"}")
    return Reply(200, result_message(request_id, result))


def error_reply(request_id: RequestId | None, error: RpcError) -> Reply:
    return Reply(_STATUS.get(error.code, 200), error_message(request_id, error))


def read_call(body: bytes, headers: RequestHeaders, table: MethodTable) -> Call | Reply:
    """The call `body` asks for, or the reply it gets without running anything."""
    # A version header the route does not speak is refused before the body is read.
    if "mcp-protocol-version" not in headers.repeated:
        unsupported = _unsupported(headers.get("mcp-protocol-version"))
        if unsupported is not None:
            return error_reply(None, unsupported)
    try:
        message = decode(body)
        if isinstance(message, list):
            return error_reply(None, RpcError(INVALID_REQUEST, "Batch requests are not supported"))
        envelope = as_object(message)
        if "id" not in envelope:
            return ACCEPTED  # a notification: nothing to answer, nothing to run
        request = as_request(envelope)
    except EnvelopeError as rejected:
        return error_reply(rejected.id, rejected.error)
    try:
        params = params_of(request)
        problem = header_problem(request.method, params, headers)
        if problem is not None:
            return error_reply(request.id, problem)
        return Call(request.id, table.resolve(request.method), params)
    except RpcError as error:
        return error_reply(request.id, error)


def header_problem(
    method: str, params: dict[str, object], headers: RequestHeaders
) -> RpcError | None:
    """`-32020` for a routing header sent twice or present and disagreeing with the body,
    `-32022` for a version the route does not speak (named by the header or `_meta`)."""
    for name in _ROUTING_HEADERS:
        if name in headers.repeated:
            return RpcError(
                HEADER_MISMATCH, f"Header mismatch: {_SPELLING[name]} appears more than once"
            )
    meta = params.get("_meta")
    body_version = meta.get(VERSION_META_KEY) if isinstance(meta, dict) else None
    header_version = headers.get("mcp-protocol-version")
    if header_version is not None and body_version is not None and header_version != body_version:
        return _mismatch("mcp-protocol-version", "params._meta protocol version")
    if _disagrees(headers.get("mcp-method"), method):
        return _mismatch("mcp-method", "method")
    if method == "tools/call" and _disagrees(headers.get("mcp-name"), params.get("name")):
        return _mismatch("mcp-name", "params.name")
    if body_version is not None and not isinstance(body_version, str):
        return RpcError(INVALID_PARAMS, "Invalid params: the protocol version must be a string.")
    return _unsupported(body_version)


def _disagrees(header: str | None, member: object) -> bool:
    """Whether a header is present and, decoded, is not the body's `member`."""
    if header is None:
        return False
    decoded = decoded_value(header)
    return decoded is None or decoded != member


def _unsupported(requested: str | None) -> RpcError | None:
    if requested is None or requested in SUPPORTED_VERSIONS:
        return None
    data = {"supported": list(SUPPORTED_VERSIONS), "requested": requested}
    return RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)


def _mismatch(header: str, member: str) -> RpcError:
    return RpcError(
        HEADER_MISMATCH, f"Header mismatch: {_SPELLING[header]} disagrees with the body's {member}"
    )


def route_methods(application: DocsApplication) -> MethodTable:
    """The route's five methods over `application`, under the application's error table."""
    info = application.server_info
    meta = {SERVER_INFO_META_KEY: info}
    capabilities = {"tools": {"listChanged": False}}
    tools = application.site_tools()
    listed = Encoded(
        {
            "_meta": meta,
            "resultType": "complete",
            "tools": tools.definitions(),
            "ttlMs": TTL_MS,
            "cacheScope": "public",
        }
    )
    discovered = Encoded(
        {
            "_meta": meta,
            "resultType": "complete",
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": capabilities,
            "ttlMs": TTL_MS,
            "cacheScope": "public",
        }
    )

    def initialize(params: dict[str, object]) -> object:
        asked = params.get("protocolVersion")
        return {
            "resultType": "complete",
            "protocolVersion": asked if asked in SUPPORTED_VERSIONS else NEWEST_VERSION,
            "capabilities": capabilities,
            "serverInfo": info,
        }

    def call_tool(params: dict[str, object]) -> object:
        return {"resultType": "complete", **tools.call(params.get("name"), params.get("arguments"))}

    return MethodTable(
        {
            "initialize": Method(initialize),
            "ping": Method(lambda _params: {}),
            "server/discover": Method(lambda _params: discovered),
            "tools/list": Method(lambda _params: listed),
            "tools/call": Method(call_tool, blocking=True),
        },
        ERRORS,
    )
