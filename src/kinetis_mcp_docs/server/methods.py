"""The MCP method table over DocsApplication, and the mapping of its errors to codes."""

from __future__ import annotations

import sys

from .application import DocsApplication, InvalidArguments, PageUnavailable, UnknownResource
from .protocol.dispatch import Method
from .protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable

PROTOCOL_VERSION = "2025-06-18"


def method_table(application: DocsApplication) -> Callable[[str], Method | None]:
    """The lookup the dispatcher uses: method name to handler."""
    table = {
        "initialize": Method(lambda params: _initialize(application, params)),
        "ping": Method(lambda _params: {}),
        "tools/list": Method(lambda params: _listing(params, "tools", application.tools())),
        "resources/list": Method(
            lambda params: _listing(params, "resources", application.resources())
        ),
        "resources/read": Method(lambda params: _read(application, params), blocking=True),
        "tools/call": Method(lambda params: _call(application, params), blocking=True),
    }
    return table.get


def _initialize(application: DocsApplication, params: dict[str, object]) -> dict[str, object]:
    version = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    client = params.get("clientInfo")
    if not isinstance(version, str) or not version:
        raise _invalid('"protocolVersion" must be a non-empty string.')
    if not isinstance(capabilities, dict):
        raise _invalid('"capabilities" must be an object.')
    if (
        not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not client["name"]
        or not isinstance(client.get("version"), str)
    ):
        raise _invalid('"clientInfo" must be an object with a string "name" and "version".')
    # Only one revision is spoken, whatever the client asked for.
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {}, "resources": {}},
        "serverInfo": application.server_info,
        "instructions": application.instructions,
    }


def _listing(params: dict[str, object], key: str, items: list[dict[str, object]]) -> object:
    if "cursor" in params:
        raise _invalid("No cursor is ever issued: the whole list comes in one response.")
    return {key: items}


def _read(application: DocsApplication, params: dict[str, object]) -> object:
    try:
        return {"contents": [application.read_resource(params.get("uri"))]}
    except InvalidArguments as error:
        raise _invalid(str(error)) from None
    except UnknownResource as error:
        raise RpcError(RESOURCE_NOT_FOUND, str(error), {"uri": error.uri}) from None
    except PageUnavailable as error:
        raise _unreadable(error) from None


def _call(application: DocsApplication, params: dict[str, object]) -> object:
    try:
        return application.call_tool(params.get("name"), params.get("arguments"))
    except InvalidArguments as error:
        raise _invalid(str(error)) from None
    except PageUnavailable as error:
        raise _unreadable(error) from None


def _invalid(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {message}")


def _unreadable(error: PageUnavailable) -> RpcError:
    # The operator gets the URL and the real reason; the wire gets a stable sentence.
    print(f"kinetis-docs: could not read {error.url}: {error.reason}", file=sys.stderr, flush=True)
    return RpcError(INTERNAL_ERROR, str(error))
