"""The stdio server's MCP method table over DocsApplication.

Its errors become codes through the one table both servers share (`errors.ERRORS`).
"""

from __future__ import annotations

from ... import PROTOCOL_VERSION
from ..core.exceptions import InvalidArguments
from ..errors import ERRORS
from ..protocol.dispatch import ErrorTable, Method, MethodTable

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from ..application import DocsApplication


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
