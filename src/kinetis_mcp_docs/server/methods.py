"""The MCP method table over DocsApplication, and the table mapping its errors to codes.

The table writes nothing anywhere itself: the reason behind an unreadable page goes to the
`kinetis_mcp_docs.server` logger (`reasons.py`), which a host embedding the core
configures as it likes, and which the stdio server sends to its stderr.
"""

from __future__ import annotations

from .. import PROTOCOL_VERSION
from . import reasons
from .exceptions import (
    InvalidArguments,
    PageUnavailable,
    RejectedUrl,
    UnknownResource,
)
from .protocol.dispatch import ErrorTable, Method, MethodTable
from .protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from .application import DocsApplication


def _invalid(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {message}")


def _unreadable(error: PageUnavailable) -> RpcError:
    # The operator gets the URL and the real reason, through logging; the wire gets a
    # stable sentence.
    reasons.logger().warning("could not read %s: %s", error.url, error.reason)
    return RpcError(INTERNAL_ERROR, str(error))


def _unknown(error: UnknownResource) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, str(error), {"uri": error.uri})


# Every concrete `DocsError` class, and the code it is answered with on every wire.
ERRORS = ErrorTable(
    {
        InvalidArguments: lambda error: _invalid(str(error)),
        RejectedUrl: lambda error: RpcError(INVALID_PARAMS, str(error)),
        UnknownResource: _unknown,
        PageUnavailable: _unreadable,
    }
)


def method_table(application: DocsApplication, errors: ErrorTable = ERRORS) -> MethodTable:
    """The methods the stdio server answers, and the error table they run under."""
    return MethodTable(
        {
            "initialize": Method(lambda params: _initialize(application, params)),
            "ping": Method(lambda _params: {}),
            "tools/list": Method(lambda params: _listing(params, "tools", application.tools())),
            "resources/list": Method(
                lambda params: _listing(params, "resources", application.resources())
            ),
            "resources/read": Method(
                lambda params: {"contents": [application.read_resource(params.get("uri"))]},
                blocking=True,
            ),
            "tools/call": Method(
                lambda params: application.call_tool(params.get("name"), params.get("arguments")),
                blocking=True,
            ),
        },
        errors,
    )


def _initialize(application: DocsApplication, params: dict[str, object]) -> dict[str, object]:
    version = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    client = params.get("clientInfo")
    if not isinstance(version, str) or not version:
        raise InvalidArguments('"protocolVersion" must be a non-empty string.')
    if not isinstance(capabilities, dict):
        raise InvalidArguments('"capabilities" must be an object.')
    if (
        not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not client["name"]
        or not isinstance(client.get("version"), str)
    ):
        raise InvalidArguments('"clientInfo" must be an object with a string "name" and "version".')
    # Only one revision is spoken, whatever the client asked for.
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {}, "resources": {}},
        "serverInfo": application.server_info,
        "instructions": application.instructions,
    }


def _listing(params: dict[str, object], key: str, items: list[dict[str, object]]) -> object:
    if "cursor" in params:
        raise InvalidArguments("No cursor is ever issued: the whole list comes in one response.")
    return {key: items}
